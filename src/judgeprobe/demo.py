"""``judgeprobe demo``: a full audit of the embedded default judge on the shipped demo data.

Sized to finish within a few minutes on two CPU cores: every probe that applies, with fewer
repetition counts, concatenation sizes and samples than a real audit would use.
"""

from __future__ import annotations

from typing import Any

from judgeprobe.audit import AuditConfig, parse_config

PAIRWISE = {"rubric": "preference", "data": "demo:pairwise"}

DEMO_PROBES: dict[str, dict[str, Any]] = {
    "repetition": {"counts": [1, 2, 4]},
    "cluster": {"ks": [2, 4], "per_cluster": 20},
    "permutation": {"ks": [4], "n_tuples": 20, "sample_sizes": [10, 5, 10]},
    "bypass": {"ks": [2, 4], "draws": 2, "false_alarm_items": 5},
    # harm labels are on the rubric's 1-5 scale: harmful (4 or 5) is 0.75 or more of that range
    "policy_invariance": {"limit": 20, "human_scale": [1, 5], "human_threshold": 0.75},
    "agreement": {"human_scale": [1, 5]},
    "human_agreement": dict(PAIRWISE),
    "position": dict(PAIRWISE),
    "length_null": dict(PAIRWISE),
    "length_controlled_win_rate": dict(PAIRWISE),
}


def demo_config(**overrides: Any) -> AuditConfig:
    """The demo audit's config; ``overrides`` replace top-level keys (``out``, ``fail_on``, ...)."""
    from judgeprobe.probes import probe_names

    available = set(probe_names())
    data: dict[str, Any] = {
        "judge": "llama",
        "rubric": "harmfulness",
        "data": "demo",
        "probes": {k: v for k, v in DEMO_PROBES.items() if k in available},
        "out": "judgeprobe-demo",
        "seed": 0,
    }
    data.update(overrides)
    return parse_config(data, source="demo")
