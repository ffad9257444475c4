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
from judgeprobe.probes.runner import check_probe, run_probe, run_probe_sync

__all__ = [
    "FigureSpec",
    "Finding",
    "Probe",
    "ProbeContext",
    "ProbeKind",
    "ProbeResult",
    "Threshold",
    "check_probe",
    "get_probe_class",
    "ok_score",
    "probe_names",
    "register_probe",
    "run_probe",
    "run_probe_sync",
    "status_counts",
]

from judgeprobe.probes import (  # noqa: F401  # noqa: F401
    agreement,
    cluster,
    human_agreement,
    length_control,
    length_null,
    permutation,
    policy_invariance,
    position,
    repetition,
)
