"""The gates an audit's exit code can be set at: ``fail_on`` in a config, ``--fail-on`` on the
command line.

A module of its own, with no imports, so that the command line can list the gates in its help
without importing the audit. A new gate is one more name in :data:`FailOn`.
"""

from __future__ import annotations

from typing import Literal

FailOn = Literal["warn", "fail", "never"]
"""Exit 1 when the card's overall status reaches ``warn`` or ``fail``; ``never``: exit 0."""
