"""Probes: one reliability test each (plan + analyze), registered by name."""

from judgeprobe.probes.base import (
    FigureSpec,
    Finding,
    Probe,
    ProbeContext,
    ProbeKind,
    ProbeResult,
    Threshold,
    ok_score,
    status_counts,
)
from judgeprobe.probes.registry import get_probe_class, probe_names, register_probe
from judgeprobe.probes.runner import run_probe, run_probe_sync

__all__ = [
    "FigureSpec",
    "Finding",
    "Probe",
    "ProbeContext",
    "ProbeKind",
    "ProbeResult",
    "Threshold",
    "get_probe_class",
    "ok_score",
    "probe_names",
    "register_probe",
    "run_probe",
    "run_probe_sync",
    "status_counts",
]

from judgeprobe.probes import (  # noqa: F401
    human_agreement,
    length_control,
    length_null,
    position,
)
from judgeprobe.probes import cluster, permutation, repetition  # noqa: F401
from judgeprobe.probes import policy_invariance  # noqa: F401
