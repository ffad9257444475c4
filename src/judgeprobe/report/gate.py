"""The Judge Card as a CI gate: its overall status, its exit code, and whether it assessed anything.

These read a built card (a plain mapping) and decide nothing about the findings: the audit
decided each one's status; the gate only ranks them and says when there was nothing to rank.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, get_args

from judgeprobe.core.gates import FailOn
from judgeprobe.errors import ConfigError
from judgeprobe.report.statuses import SEVERITY, verdict
from judgeprobe.report.usage import USAGE_KEYS


def overall_status(card: Mapping[str, Any]) -> str:
    """The card's verdict over its headline (gated) findings (:func:`verdict`).

    ``fail`` when one is decided fail, else ``warn`` when one is decided warn; ``pass`` only
    when every one is decided pass; otherwise ``inconclusive`` (some undecided, or not
    assessable beside passes) or ``n/a`` (none could be assessed, or there is none).

    Examples
    --------
    >>> card = {"probes": [{"findings": [{"headline": True, "status": "warn"},
    ...                                  {"headline": False, "status": "info"}]}]}
    >>> overall_status(card)
    'warn'
    >>> card = {"probes": [{"findings": [{"headline": True, "status": "pass"},
    ...                                  {"headline": True, "status": "inconclusive"}]}]}
    >>> overall_status(card)
    'inconclusive'
    """
    return verdict(headline_statuses(card))


def headline_statuses(card: Mapping[str, Any]) -> list[str]:
    """The status of every headline (gated) finding of ``card``, in the card's order."""
    return [
        str(finding["status"])
        for probe in card.get("probes", [])
        for finding in probe.get("findings", [])
        if finding.get("headline")
    ]


GATES: tuple[str, ...] = tuple(gate for gate in get_args(FailOn) if gate != "never")
"""The ``fail_on`` values that gate (``never`` does not)."""


def exit_code(card: Mapping[str, Any], fail_on: str = "fail") -> int:
    """The process exit code for CI: 1 when the verdict reaches ``fail_on``, else 0.

    ``fail_on="fail"`` (the default) exits 1 on a fail; ``"warn"`` on a warn or a fail;
    ``"inconclusive"`` is the strict gate: 1 unless the verdict is ``pass``, so a card whose
    gated findings are not all shown to pass breaks the build. A card that assessed nothing
    (see :func:`nothing_assessed`) gives :data:`NOTHING_ASSESSED_EXIT` (4): a gate must not pass
    on a run that measured nothing.

    Examples
    --------
    >>> card = {"probes": [{"findings": [{"headline": True, "status": "warn"}],
    ...                     "usage": {"requests": 1, "ok": 1}}]}
    >>> exit_code(card), exit_code(card, fail_on="warn")
    (0, 1)
    >>> undecided = {"probes": [{"findings": [{"headline": True, "status": "inconclusive"}],
    ...                          "usage": {"requests": 1, "ok": 1}}]}
    >>> exit_code(undecided), exit_code(undecided, fail_on="inconclusive")
    (0, 1)
    >>> exit_code({"probes": []})
    4
    """
    if fail_on not in GATES:
        raise ConfigError(f"fail_on must be one of {', '.join(map(repr, GATES))}, not {fail_on!r}")
    if nothing_assessed(card, fail_on=fail_on) is not None:
        return NOTHING_ASSESSED_EXIT
    status = overall_status(card)
    if fail_on == "inconclusive":
        return int(status != "pass")
    return int(status in SEVERITY and SEVERITY[status] >= SEVERITY[fail_on])


NOTHING_ASSESSED_EXIT = 4
"""The exit code of an audit (or ``judgeprobe card``) whose card assessed nothing."""


def nothing_assessed(card: Mapping[str, Any], *, fail_on: str = "never") -> str | None:
    """Why the card assessed nothing, in one line; None when it assessed something.

    A card assessed nothing when

    - no probe ran (the run holds no probe result), or
    - the probes' requests got no usable (``ok``) verdict: every call failed, every answer was
      unparseable, or every input was skipped for the judge's context window, or
    - no finding could be computed (every one is ``n/a``), or
    - with a gate (``fail_on`` ``"warn"``, ``"fail"`` or ``"inconclusive"``), no headline
      finding is pass, warn, fail or inconclusive, so the gate would have nothing to judge (an
      inconclusive finding was measured: the card says what would decide it, and only the
      strict gate ``"inconclusive"`` fails on it).

    Examples
    --------
    >>> nothing_assessed({"probes": []})
    'no probe ran'
    >>> failed = {"findings": [], "usage": {"requests": 3, "error": 3}}
    >>> nothing_assessed({"probes": [failed]})
    'no judge request got a usable verdict (error: 3)'
    """
    probes: Sequence[Mapping[str, Any]] = card.get("probes") or []
    if not probes:
        return "no probe ran"
    usage = {
        key: sum(int((p.get("usage") or {}).get(key, 0) or 0) for p in probes) for key in USAGE_KEYS
    }
    if usage["requests"] > 0 and usage["ok"] == 0:
        failures = {k: usage[k] for k in ("error", "unparseable", "skipped", "missing") if usage[k]}
        if set(failures) == {"skipped"}:
            return (
                f"every input was skipped ({usage['skipped']}): each exceeds the judge's "
                "context window, and inputs are never truncated"
            )
        named = ", ".join(f"{_USAGE_WORDS.get(k, k)}: {v}" for k, v in failures.items())
        return f"no judge request got a usable verdict ({named})"
    findings = [f for p in probes for f in p.get("findings") or []]
    if not findings:
        return "the probes reported no finding"
    if all(f.get("status") == "n/a" for f in findings):
        return f"no finding could be computed (all {len(findings)} are n/a)"
    if fail_on in GATES and not any(
        f.get("headline") and f.get("status") in (*SEVERITY, "inconclusive") for f in findings
    ):
        return f"no headline finding could be assessed, so fail_on={fail_on} has nothing to judge"
    return None


_USAGE_WORDS = {"missing": "not judged"}
