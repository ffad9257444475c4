"""Is it the same judge? Its identity at each check, and what changed from one to the next.

A judge's identity is what can change its verdicts without its verdicts having moved yet: its
fingerprint and description (backend, endpoint, model, decoding parameters: what
:meth:`describe` gives), the rubric's hash, the model the server said answered (an OpenAI-
compatible server names it in each completion, kept in the verdict's ``meta["served_model"]``),
and for a model run in this process the versions of the packages that run it. A changed identity
is reported at the check it appears in, whether or not the verdicts have moved yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib import metadata
from typing import Any

from judgeprobe._version import __version__
from judgeprobe.core.judge import Judge
from judgeprobe.core.verdict import Verdict
from judgeprobe.rubrics import Rubric

LOCAL_PACKAGES = (
    "torch",
    "transformers",
    "llama-cpp-python",
    "alt-profanity-check",
    "scikit-learn",
    "numpy",
    "tokenizers",
    "safetensors",
)
"""The packages whose versions a judge run in this process records (those installed)."""


def judge_identity(judge: Judge, rubric: Rubric, verdicts: Iterable[Verdict]) -> dict[str, Any]:
    """The identity of ``judge`` judging with ``rubric``, with the served models of
    ``verdicts``."""
    identity: dict[str, Any] = {
        "fingerprint": judge.fingerprint,
        "judge": dict(judge.describe()),
        "rubric": {"name": rubric.name, "hash": rubric.hash},
        "served_models": served_models(verdicts),
        "judgeprobe": __version__,
    }
    if judge.capabilities.in_process:
        identity["packages"] = package_versions(LOCAL_PACKAGES)
    return identity


def audited_identity(
    fingerprint: str,
    description: Mapping[str, Any],
    rubric: Rubric,
    served: Iterable[str],
    version: str | None,
) -> dict[str, Any]:
    """The identity of the audited judge, as far as its run store recorded it."""
    identity: dict[str, Any] = {
        "fingerprint": fingerprint,
        "judge": dict(description),
        "rubric": {"name": rubric.name, "hash": rubric.hash},
        "served_models": sorted(set(served)),
    }
    if version is not None:
        identity["judgeprobe"] = version
    return identity


def served_models(verdicts: Iterable[Verdict]) -> list[str]:
    """The distinct models named in ``verdicts``' ``meta["served_model"]``, sorted."""
    return sorted(
        {
            str(v.meta["served_model"])
            for v in verdicts
            if isinstance(v.meta.get("served_model"), str)
        }
    )


def package_versions(names: Iterable[str]) -> dict[str, str]:
    """The installed version of each of ``names`` (those not installed are left out)."""
    found: dict[str, str] = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def identity_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """What differs from identity ``before`` to ``after``, one line each ("model: a → b").

    A part that one of them did not record (the served model of an audit made before it was
    kept, the packages of a judge not run in this process) is not a change.

    Examples
    --------
    >>> a = {"fingerprint": "f1", "judge": {"model": "m", "temperature": 0.0},
    ...      "rubric": {"name": "r", "hash": "h1"}, "served_models": ["m-0601"]}
    >>> b = {"fingerprint": "f2", "judge": {"model": "m", "temperature": 0.7},
    ...      "rubric": {"name": "r", "hash": "h1"}, "served_models": ["m-0901"]}
    >>> identity_changes(a, b)
    ['judge temperature: 0.0 → 0.7', "served model: ['m-0601'] → ['m-0901']"]
    """
    changes: list[str] = []
    judge_a, judge_b = before.get("judge") or {}, after.get("judge") or {}
    for name in sorted(set(judge_a) | set(judge_b)):
        if judge_a.get(name) != judge_b.get(name):
            changes.append(
                f"judge {name}: {_shown(judge_a.get(name))} → {_shown(judge_b.get(name))}"
            )
    if not changes and before.get("fingerprint") != after.get("fingerprint"):
        changes.append(f"fingerprint: {before.get('fingerprint')} → {after.get('fingerprint')}")
    rubric_a, rubric_b = before.get("rubric") or {}, after.get("rubric") or {}
    if rubric_a.get("hash") != rubric_b.get("hash"):
        changes.append(
            f"rubric: {rubric_a.get('name')} {rubric_a.get('hash')} → "
            f"{rubric_b.get('name')} {rubric_b.get('hash')}"
        )
    served_a, served_b = before.get("served_models") or [], after.get("served_models") or []
    if served_a and served_b and served_a != served_b:
        changes.append(f"served model: {served_a} → {served_b}")
    packages_a, packages_b = before.get("packages") or {}, after.get("packages") or {}
    if packages_a and packages_b:
        for name in sorted(set(packages_a) | set(packages_b)):
            if packages_a.get(name) != packages_b.get(name):
                changes.append(
                    f"package {name}: {_shown(packages_a.get(name))} → "
                    f"{_shown(packages_b.get(name))}"
                )
    version_a, version_b = before.get("judgeprobe"), after.get("judgeprobe")
    if version_a and version_b and version_a != version_b:
        changes.append(f"judgeprobe: {version_a} → {version_b}")
    return changes


def _shown(value: Any) -> str:
    return "(none)" if value is None else str(value)
