"""The gates an audit's exit code can be set at: ``fail_on`` in a config, ``--fail-on`` on the
command line.

A contract of its own, with no imports, shared by the audit's config, the card's exit code
(:func:`judgeprobe.report.gate.exit_code`) and the command line, which lists the gates in its help
without importing the audit. A new gate is one more name in :data:`FailOn`.
"""

from __future__ import annotations

from typing import Literal

FailOn = Literal["warn", "fail", "inconclusive", "never"]
"""Exit 1 when the card's overall status reaches ``warn`` or ``fail``; ``inconclusive``, the
strict gate: exit 1 unless the card passes (every gated finding shown to pass); ``never``: exit
0. The default, ``fail``, lets an undecided card through: its verdict says it is undecided and
what would decide it, and a gate that broke on every small sample would be switched off."""
