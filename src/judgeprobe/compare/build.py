"""The comparison document: each finding of two or more runs side by side, with its difference.

The first run is the baseline; every other run is a candidate compared with it. For each
finding both runs report (matched by probe, finding name and labels) the difference is
``candidate - baseline``: paired on the units both runs share when both are run stores whose
per-unit outcomes are known (:mod:`judgeprobe.probes.units`), else unpaired from the two
intervals (:func:`~judgeprobe.stats.comparison.unpaired_difference`), and the document says which.

A raw rate that the card reads against the judge's rerun null (its gated finding is the excess,
``swap_flip_excess`` for ``swap_flip_rate``) is compared paired on its units and read in the
excess's direction ("better" or "worse", not "changed"), as information: the excess stays the
gated finding, compared unpaired (a difference of two intervals over separate samples). Two
judges with other rerun noise can differ on one and not the other; a repair of one judge shows
its clear paired gain on the raw rate.

The differences of gated findings (those with a threshold) are one family: their p-values are
adjusted together by Holm's step-down procedure, as the audit adjusts its gated findings, so the
chance that *any* of their "better" or "worse" words is a false alarm stays at ``alpha``; this
family is what ``--fail-on worse`` reads. The other findings' differences (information: slices,
findings without a threshold) are a second family, adjusted the same way, so that dozens of
them can neither dilute the gate nor raise false alarms of their own. The word of a difference:

* ``worse`` / ``better``: the adjusted p-value is below ``alpha`` and the difference points to
  the finding's bad / good side (its threshold's ``higher_is_worse``);
* ``changed``: the same evidence, for a finding without a threshold (no side is bad);
* ``no evidence``: the adjusted p-value is not below ``alpha``;
* ``n/a``: no difference could be computed (an estimate is undefined in either run).

Runs on different data, on rubrics of different kinds, or whose shared probes ran with other
parameters are refused (:class:`~judgeprobe.errors.ConfigError`, every reason named) unless
``allow_different_data``; their findings are then compared unpaired. Two judges audited on the
same items with rubrics of different kinds (each the rubric it fits) are compared, still paired,
when ``allow_different_rubric`` says so: the comparison notes that the rubrics differ, and the
findings in score units are compared as shares of each rubric's score span
(:mod:`judgeprobe.compare.rubrics`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from judgeprobe._version import __version__
from judgeprobe.compare.item_units import excess_of, units_of, unpaired_reason
from judgeprobe.compare.rubrics import on_common_scale, rubric_note, rubrics_differ, score_span
from judgeprobe.compare.runs import LoadedRun
from judgeprobe.errors import ConfigError
from judgeprobe.probes.units import FindingKey, UnitValues, finding_key
from judgeprobe.report.stored import StoredFinding, read_finding
from judgeprobe.stats.comparison import paired_difference, unpaired_difference
from judgeprobe.stats.multiplicity import holm
from judgeprobe.stats.result import TestResult

COMPARE_VERSION = "1.0"
WORDS = ("worse", "better", "changed", "no evidence", "n/a")
ALPHA = 0.05


def build_comparison(
    runs: Sequence[LoadedRun],
    *,
    allow_different_data: bool = False,
    allow_different_rubric: bool = False,
    alpha: float = ALPHA,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """The comparison of ``runs`` (the first is the baseline) as a JSON-ready document."""
    if len(runs) < 2:
        raise ConfigError(f"compare needs two or more runs, got {len(runs)}")
    described = [run.describe(i) for i, run in enumerate(runs)]
    rubric_notes = [  # once each, for two or more candidates
        note
        for run in runs[1:]
        if allow_different_rubric and rubrics_differ(runs[0], run)
        for note in rubric_note(runs[0], run)
    ]
    rubric_notes = list(dict.fromkeys(rubric_notes))
    if rubric_notes and len({score_span(run) for run in runs}) > 1:
        runs = [on_common_scale(run) for run in runs]
    problems = {
        i: _problems(runs[0], runs[i], allow_different_rubric=allow_different_rubric)
        for i in range(1, len(runs))
    }
    found = [f"{runs[i].source}: {p}" for i, ps in problems.items() for p in ps]
    if found and not allow_different_data:
        raise ConfigError(
            "cannot compare: " + "; ".join(found) + "; pass --allow-different-data "
            "(allow_different_data=True) to compare them anyway, unpaired"
            + (
                ", or --allow-different-rubric (allow_different_rubric=True) for two judges "
                "audited on the same items, each with its own rubric"
                if any("rubrics of different kinds" in p for p in found)
                else ""
            )
        )
    comparisons = [
        _comparison(runs[0], runs[i], i, paired=not problems[i], n_resamples=n_resamples, seed=seed)
        for i in range(1, len(runs))
    ]
    tested = [d for c in comparisons for d in c["differences"] if d["test"]["pvalue"] is not None]
    families = {
        "gated": [d for d in tested if d["gated"]],
        "information": [d for d in tested if not d["gated"]],
    }
    for family in families.values():
        adjusted = holm([float(d["test"]["pvalue"]) for d in family])
        for difference, p in zip(family, adjusted, strict=True):
            difference["adjusted_pvalue"] = p
    for comparison in comparisons:
        for difference in comparison["differences"]:
            difference["word"] = _word(difference, alpha)
    return {
        "compare_version": COMPARE_VERSION,
        "generator": {"tool": "judgeprobe", "version": __version__},
        "runs": described,
        "checks": {
            "problems": found,
            "allowed": bool(found) and allow_different_data,
            "notes": rubric_notes
            + [n for i in range(1, len(runs)) for n in _notes(runs[0], runs[i])],
            "different_rubric_allowed": bool(rubric_notes),
        },
        "multiplicity": {
            "method": "holm",
            "alpha": alpha,
            "family_sizes": {name: len(family) for name, family in families.items()},
            "scope": (
                "two families over all candidates: the gated findings' differences (which "
                "--fail-on reads), and the others' (information)"
            ),
        },
        "comparisons": comparisons,
        "summary": _summary(comparisons),
    }


# -- checks ---------------------------------------------------------------------------------------
def _problems(
    baseline: LoadedRun, candidate: LoadedRun, *, allow_different_rubric: bool = False
) -> list[str]:
    """Why ``candidate`` cannot be paired with ``baseline`` (empty when it can); rubrics of
    different kinds are no reason with ``allow_different_rubric``."""
    a, b = baseline.describe(0), candidate.describe(1)
    problems: list[str] = []
    data_a, data_b = a["data"], b["data"]
    if not data_a["sha256"] or data_a["sha256"] != data_b["sha256"] or data_a["n"] != data_b["n"]:
        problems.append(
            f"different data (data sha256 {data_a['sha256'] or 'unknown'}, n={data_a['n']} "
            f"against {data_b['sha256'] or 'unknown'}, n={data_b['n']})"
        )
    if a["rubric"]["kind"] != b["rubric"]["kind"] and not allow_different_rubric:
        problems.append(
            f"rubrics of different kinds ({a['rubric']['kind']} against {b['rubric']['kind']}): "
            "their scores are on different scales"
        )
    if baseline.tested.get("seed") != candidate.tested.get("seed"):
        problems.append(
            f"different seeds ({baseline.tested.get('seed')} against "
            f"{candidate.tested.get('seed')}): the probes drew different designs"
        )
    params_a = baseline.tested.get("probes", {})
    params_b = candidate.tested.get("probes", {})
    for name in sorted(set(params_a) & set(params_b)):
        if params_a[name] != params_b[name]:
            keys = sorted(
                k
                for k in set(params_a[name]) | set(params_b[name])
                if params_a[name].get(k) != params_b[name].get(k)
            )
            problems.append(f"probe {name!r} ran with different parameters ({', '.join(keys)})")
    return problems


def _notes(baseline: LoadedRun, candidate: LoadedRun) -> list[str]:
    a, b = baseline.describe(0), candidate.describe(1)
    notes: list[str] = []
    same_judge = a["judge"]["fingerprint"] == b["judge"]["fingerprint"]
    if same_judge and a["rubric"]["hash"] == b["rubric"]["hash"]:
        notes.append(
            f"{candidate.source}: same judge fingerprint ({a['judge']['fingerprint']}) and rubric "
            "as the baseline: any difference is the judge's run-to-run noise"
        )
    if candidate.kind == "card" or baseline.kind == "card":
        notes.append(
            f"{candidate.source}: a card file has no per-item outcomes; its findings are "
            "compared unpaired, from the two confidence intervals (conservative on shared items)"
        )
    return notes


# -- differences ----------------------------------------------------------------------------------
def _findings(run: LoadedRun) -> dict[tuple[str, FindingKey], StoredFinding]:
    """The run's findings by probe and key, each read as the card reads a stored finding."""
    found: dict[tuple[str, FindingKey], StoredFinding] = {}
    for section in run.card.get("probes", []):
        for entry in section.get("findings", []):
            finding = read_finding(entry)
            key = (str(section["name"]), finding_key(finding.name, finding.labels))
            found.setdefault(key, finding)
    return found


def _comparison(
    baseline: LoadedRun,
    candidate: LoadedRun,
    index: int,
    *,
    paired: bool,
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    left, right = _findings(baseline), _findings(candidate)
    differences = []
    for key in [k for k in left if k in right]:
        probe, fkey = key
        units_a = units_of(baseline.units.get(probe, {}), fkey) if paired else None
        units_b = units_of(candidate.units.get(probe, {}), fkey) if paired else None
        excess = excess_of(probe, fkey[0])
        gate = left.get((probe, (excess, fkey[1]))) if excess is not None else None
        differences.append(
            _difference(
                probe,
                left[key],
                right[key],
                units_a,
                units_b,
                gate=gate,
                n_resamples=n_resamples,
                seed=seed,
            )
        )
    only = sorted({p for p, _ in left} ^ {p for p, _ in right})
    return {
        "baseline": 0,
        "candidate": index,
        "paired": any(d["method"] == "paired" for d in differences),
        "differences": differences,
        "unmatched_probes": only,
        "unmatched_findings": {
            "baseline": _only_in(left, right, only),
            "candidate": _only_in(right, left, only),
        },
    }


def _only_in(
    these: Mapping[tuple[str, FindingKey], Any],
    others: Mapping[tuple[str, FindingKey], Any],
    unmatched_probes: Sequence[str],
) -> list[str]:
    """The findings of ``these`` that ``others`` lacks, of probes both runs ran."""
    found = []
    for probe, (name, labels) in these:
        if (probe, (name, labels)) not in others and probe not in unmatched_probes:
            where = ", ".join(f"{k}={v}" for k, v in labels)
            found.append(f"{probe} {name}" + (f" ({where})" if where else ""))
    return found


def _difference(
    probe: str,
    a: StoredFinding,
    b: StoredFinding,
    units_a: UnitValues | None,
    units_b: UnitValues | None,
    *,
    gate: StoredFinding | None = None,
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    """The difference ``b - a`` of one finding; ``gate``, the gated excess of a raw rate over
    the rerun null, lends the raw rate its direction (the raw rate is what pairs on the units),
    not its place in the gated family: that stays the excess's, as on the card."""
    gated = a.threshold is not None or b.threshold is not None
    threshold = a.threshold or b.threshold or (gate.threshold if gate is not None else None)
    shared = sorted(set(units_a.values) & set(units_b.values)) if units_a and units_b else []
    if units_a is not None and units_b is not None and len(shared) >= 2:
        estimate, test = paired_difference(
            np.array([units_a.values[u] for u in shared]),
            np.array([units_b.values[u] for u in shared]),
            units_a.statistic,
            binary=units_a.binary,
            clusters=None if units_a.clusters is None else [units_a.clusters[u] for u in shared],
            n_resamples=n_resamples,
            confidence_level=a.ci.level,
            seed=seed,
        )
        method = "paired"
    else:
        estimate, test = unpaired_difference(a.estimate_of(), b.estimate_of())
        method = "unpaired"
    return {
        "probe": probe,
        "finding": a.name,
        "labels": dict(a.labels),
        "gated": gated,
        "higher_is_worse": None if threshold is None else threshold.higher_is_worse,
        "baseline": _side(a),
        "candidate": _side(b),
        "difference": estimate.to_dict(),
        "method": method,
        "unpaired_reason": None
        if method == "paired"
        else unpaired_reason(probe, a.name, units_a, units_b, len(shared)),
        "test": _test(test),
        "adjusted_pvalue": None,
        "word": "n/a",
    }


def _word(difference: Mapping[str, Any], alpha: float) -> str:
    adjusted = difference["adjusted_pvalue"]
    value = difference["difference"]["estimate"]
    if adjusted is None or value is None:
        return "n/a"
    if adjusted >= alpha or value == 0:
        return "no evidence"
    higher_is_worse = difference["higher_is_worse"]
    if higher_is_worse is None:
        return "changed"
    return "worse" if (value > 0) == higher_is_worse else "better"


def _summary(comparisons: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    counts = {word: 0 for word in WORDS}
    for comparison in comparisons:
        for difference in comparison["differences"]:
            counts[difference["word"]] += 1
    worse_gated = [
        {
            "candidate": c["candidate"],
            "probe": d["probe"],
            "finding": d["finding"],
            "labels": d["labels"],
        }
        for c in comparisons
        for d in c["differences"]
        if d["word"] == "worse" and d["gated"]
    ]
    parts = [f"{counts[w]} {w}" for w in WORDS if counts[w]]
    return {
        "counts": counts,
        "worse_gated": worse_gated,
        "headline": (
            f"{len(worse_gated)} gated finding{'' if len(worse_gated) == 1 else 's'} got worse "
            f"with evidence; {', '.join(parts) or 'no finding shared'}"
        ),
    }


# -- values ---------------------------------------------------------------------------------------
def _side(finding: StoredFinding) -> dict[str, Any]:
    return {
        "estimate": finding.estimate,
        "low": finding.ci.low,
        "high": finding.ci.high,
        "n": finding.n,
        "status": finding.status,
    }


def _test(test: TestResult) -> dict[str, Any]:
    data = test.to_dict()
    return {"pvalue": data["pvalue"], "null": data["null"], "n": data["n"]}
