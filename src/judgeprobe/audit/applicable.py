"""Which probes apply to an audit's judge, rubric and data, and why each other one does not.

An audit that names no probe runs every probe that applies (the default probe set,
:func:`judgeprobe.audit.run.with_default_probes`); the demo chooses its probes the same way, and
``judgeprobe probes --judge J --rubric R --data D`` lists both sides. Whether a probe applies is
its declared :class:`~judgeprobe.probes.requirements.Requirements` checked by
:func:`~judgeprobe.probes.requirements.not_applicable`, against the probe's own ``rubric`` and
``data`` where its entry names them, else the audit's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from judgeprobe.audit.config import AuditConfig
from judgeprobe.core.judge import JudgeCapabilities
from judgeprobe.data import load_dataset
from judgeprobe.data.dataset import Dataset
from judgeprobe.probes import get_probe_class, probe_names
from judgeprobe.probes.requirements import not_applicable
from judgeprobe.rubrics import get_rubric


@dataclass(frozen=True)
class Applicable:
    """The probes that apply, each with its parameters, and why each other one does not."""

    probes: dict[str, dict[str, Any]] = field(default_factory=dict)
    not_applicable: dict[str, str] = field(default_factory=dict)


def probes_that_apply(
    config: AuditConfig,
    capabilities: JudgeCapabilities | None = None,
    candidates: Mapping[str, Mapping[str, Any]] | None = None,
) -> Applicable:
    """Of ``candidates`` (probe name to its config entry), those whose requirements the rubric,
    the data and a judge with ``capabilities`` meet, and why each other one does not.

    By default the candidates are every registered probe with its default parameters, less
    those the config already lists as not applicable; a probe that runs only when named (its
    ``named_only`` reason, the adversarial probes) is then listed with that reason. An entry's
    own ``rubric``, ``data``, ``data_options`` and ``limit`` replace the config's, as in an
    audit. ``capabilities`` None
    leaves what a probe needs of its judge unchecked (the audit checks it before its first call).
    """
    default_set = candidates is None
    if candidates is None:
        candidates = {n: {} for n in probe_names() if n not in config.not_applicable}
    loaded: dict[str, Dataset] = {}
    chosen = Applicable()
    for name, entry in candidates.items():
        rubric = get_rubric(entry.get("rubric", config.rubric))
        spec = str(entry.get("data", config.data))
        options = dict(entry.get("data_options", config.data_options))
        key = f"{spec}|{sorted(options.items())}"
        if key not in loaded:
            loaded[key] = load_dataset(spec, **options)
        limit = entry.get("limit", config.limit)
        items = loaded[key].items[:limit] if limit else loaded[key].items
        cls = get_probe_class(name)
        why = not_applicable(cls, rubric, items, capabilities)
        if why is None and default_set and cls.named_only:
            why = f"probe {name!r} runs only when named: {cls.named_only}"
        if why is None:
            chosen.probes[name] = dict(entry)
        else:
            chosen.not_applicable[name] = why
    return chosen
