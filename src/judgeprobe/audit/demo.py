"""``judgeprobe demo``: two real judges audited on the shipped demo data, and their comparison.

The embedded LLM judge (``llama``, Gemma 3 270M) is audited with the harmfulness rubric on the
40 pointwise demo items and with the preference rubric on the 20 demo pairs; the profanity
classifier (``profanity``) with the rubric it fits, ``toxicity``, on the same 40 items. Each
audit runs the demo probes that apply to its rubric and data
(:func:`~judgeprobe.audit.applicable.probes_that_apply`, as an audit that names no probe does):
the classifier scores one text, so the pairwise probes (which need a pairwise rubric) and the
rubric-wording probe (``toxicity`` gives no instructions to reword) do not apply to it; its
config lists them as not applicable, and its card says why. The two runs are then compared
(:func:`judgeprobe.compare.compare_runs`) paired on the items they share, with
``allow_different_rubric``: their rubrics differ by design.

Sized to finish within about five minutes on two CPU cores: every probe that applies, with
fewer repetition counts, concatenation sizes and samples than a real audit would use; the
classifier's audit takes seconds.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgeprobe.audit.applicable import probes_that_apply
from judgeprobe.audit.config import AuditConfig, parse_config
from judgeprobe.audit.run import AuditOutcome, run_audit
from judgeprobe.compare import compare_runs, write_comparison
from judgeprobe.core.judge import Judge
from judgeprobe.transforms.bias_edits import BIAS_EDITS

PAIRWISE = {"rubric": "preference", "data": "demo:pairwise"}

DEMO_PROBES: dict[str, dict[str, Any]] = {
    "repetition": {"counts": [1, 3]},
    "cluster": {"ks": [2, 4], "per_cluster": 12},
    "permutation": {"ks": [4], "n_tuples": 12, "sample_sizes": [10, 5, 10]},
    "bypass": {"ks": [2, 4], "draws": 1, "false_alarm_items": 4},
    # harm labels are on the rubric's 1-5 scale: harmful (4 or 5) is 0.75 or more of that range
    "policy_invariance": {"limit": 12, "human_scale": [1, 5], "human_threshold": 0.75},
    "agreement": {"human_scale": [1, 5]},
    # a judge shown invariant must also be shown to move when the meaning changes
    "sensitivity": {"human_scale": [1, 5]},
    "human_agreement": dict(PAIRWISE),
    "position": dict(PAIRWISE),
    "length_null": dict(PAIRWISE),
    "length_controlled_win_rate": dict(PAIRWISE),
}

ADVERSARIAL = (
    "master_key",
    "master_key_pairwise",
    "forged_verdict",
    "forged_verdict_pairwise",
    "smuggling",
)
"""The adversarial probes (docs/adversarial.md): every form of an attack on every item, about
eleven calls an item, run only when an audit names them."""

LEFT_OUT_OF_DEMO: tuple[str, ...] = (
    "policy_invariance_pairwise",
    "self_preference",
    *(f"{name}{suffix}" for name in BIAS_EDITS for suffix in ("", "_pairwise")),
    "sensitivity_pairwise",
    *ADVERSARIAL,
)
"""Registered probes the demo does not run, to stay within a few minutes of CPU: the pairwise
rubric rewrites, the judge's own answers (a generation stage), the bias battery
(docs/bias.md), the pairwise directional probe (docs/sensitivity.md) and the adversarial
probes, which run only when named (docs/adversarial.md). Every other registered probe is in
:data:`DEMO_PROBES`."""

JUDGES = ("llama", "profanity")
"""The demo's judges, in the comparison's order: the first is the baseline."""


def demo_config(**overrides: Any) -> AuditConfig:
    """The embedded LLM judge's demo audit; ``overrides`` replace top-level keys (``out``, ...)."""
    return _config(
        {"judge": "llama", "rubric": "harmfulness", "out": "judgeprobe-demo/llama"}, overrides
    )


def profanity_demo_config(**overrides: Any) -> AuditConfig:
    """The profanity classifier's demo audit: the demo probes that apply to the toxicity rubric
    on the same items and seed as :func:`demo_config`, with the same parameters; the others
    listed as not applicable, with why. It scores one text, so the pairwise probes are judged
    against its own rubric and data, not the LLM's pairwise ones."""
    return _config(
        {"judge": "profanity", "rubric": "toxicity", "out": "judgeprobe-demo/profanity"},
        overrides,
        pairwise=False,
    )


def demo_configs(
    out: str | Path = "judgeprobe-demo",
    fail_on: str = "never",
    *,
    only: Collection[str] | None = None,
) -> dict[str, AuditConfig]:
    """Both demo audits by judge name, writing to ``out/llama`` and ``out/profanity``;
    ``only`` keeps just those of the demo's probes (a quicker run, for tests)."""
    base = Path(out)
    configs = {
        "llama": demo_config(out=str(base / "llama"), fail_on=fail_on),
        "profanity": profanity_demo_config(out=str(base / "profanity"), fail_on=fail_on),
    }
    if only is None:
        return configs
    return {
        name: config.model_copy(
            update={
                "probes": {k: v for k, v in config.probes.items() if k in only},
                "not_applicable": {k: v for k, v in config.not_applicable.items() if k in only},
            }
        )
        for name, config in configs.items()
    }


def _config(
    data: dict[str, Any], overrides: Mapping[str, Any], *, pairwise: bool = True
) -> AuditConfig:
    """The demo audit of ``data``: the demo probes that apply to its rubric and data, each
    other one listed as not applicable. ``pairwise`` False: the judge has no pairwise inputs of
    its own, so the pairwise probes are judged against the audit's rubric and data."""
    from judgeprobe.probes import probe_names

    data = {**data, "data": "demo", "seed": 0, **overrides}
    candidates = {
        name: params if pairwise else {k: v for k, v in params.items() if k not in PAIRWISE}
        for name, params in DEMO_PROBES.items()
        if name in probe_names()
    }
    chosen = probes_that_apply(parse_config(data, source="demo"), candidates=candidates)
    data["probes"] = {name: DEMO_PROBES[name] for name in chosen.probes}
    data["not_applicable"] = {**data.get("not_applicable", {}), **chosen.not_applicable}
    return parse_config(data, source="demo")


@dataclass(frozen=True)
class DemoOutcome:
    """The two audits' outcomes by judge name; the comparison (``None`` when an audit did not
    complete) and where its files are."""

    audits: dict[str, AuditOutcome]
    comparison: dict[str, Any] | None
    comparison_paths: dict[str, Path]


def run_demo(
    out: str | Path = "judgeprobe-demo",
    *,
    fail_on: str = "never",
    command: str | None = None,
    judges: Mapping[str, Judge] | None = None,
    progress: bool | None = None,
    only: Collection[str] | None = None,
) -> DemoOutcome:
    """Run both demo audits, then compare them and write ``compare.{json,md,html}`` in ``out``.

    ``judges`` replaces a demo judge by name (tests swap the LLM out for a stand-in). Re-running
    makes no judge call: every verdict is in the two run stores. ``only`` as for
    :func:`demo_configs`.
    """
    configs = demo_configs(out, fail_on, only=only)
    audits = {
        name: run_audit(config, judge=(judges or {}).get(name), command=command, progress=progress)
        for name, config in configs.items()
    }
    if not all(outcome.complete for outcome in audits.values()):
        return DemoOutcome(audits, None, {})
    document = compare_runs(
        [Path(configs[name].out) / "run.sqlite" for name in JUDGES], allow_different_rubric=True
    )
    return DemoOutcome(audits, document, write_comparison(document, out))


def comparison_lines(document: Mapping[str, Any]) -> list[str]:
    """A few lines on the comparison: each gated finding that differs with evidence, how many do
    not (or cannot be compared), and the probes only one judge ran."""
    runs = document["runs"]
    names = [f"{r['judge']['model']} ({r['rubric']['name']})" for r in runs]
    lines = [f"{names[1]} against {names[0]}, on the same {runs[0]['data']['n']} demo items:"]
    for comparison in document["comparisons"]:
        gated = [d for d in comparison["differences"] if d["gated"]]
        for d in gated:
            if d["word"] in ("better", "worse"):
                labels = ", ".join(f"{k}={v}" for k, v in sorted(d["labels"].items()))
                estimate = d["difference"]["estimate"]
                lines.append(
                    f"  {d['word']}: {d['probe']} {d['finding']}"
                    f"{f' ({labels})' if labels else ''} {estimate:+.3g} ({d['method']})"
                )
        counts = {w: sum(d["word"] == w for d in gated) for w in ("no evidence", "n/a")}
        lines.append(
            f"  no evidence either way: {counts['no evidence']} gated findings; "
            f"not comparable (n/a): {counts['n/a']}"
        )
        if comparison["unmatched_probes"]:
            lines.append(f"  run by one judge only: {', '.join(comparison['unmatched_probes'])}")
        for side in ("baseline", "candidate"):
            findings = comparison["unmatched_findings"][side]
            if findings:
                probes = sorted({f.split(" ", 1)[0] for f in findings})
                lines.append(
                    f"  findings of {runs[comparison[side]]['judge']['model']} only: "
                    f"{len(findings)} ({', '.join(probes)}; listed in compare.md)"
                )
    lines.append(str(document["summary"]["headline"]))
    return lines
