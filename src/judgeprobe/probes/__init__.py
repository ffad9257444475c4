"""Probes: one reliability test each (plan + analyze), registered by name."""

from judgeprobe.probes.agreement import AgreementProbe
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
from judgeprobe.probes.bypass import BypassProbe
from judgeprobe.probes.cluster import ClusterProbe
from judgeprobe.probes.human_agreement import HumanAgreementProbe
from judgeprobe.probes.length_control import LengthControlledWinRateProbe
from judgeprobe.probes.length_null import LengthNullProbe
from judgeprobe.probes.permutation import PermutationProbe
from judgeprobe.probes.policy_invariance import PairwisePolicyInvarianceProbe, PolicyInvarianceProbe
from judgeprobe.probes.position import PositionProbe
from judgeprobe.probes.registry import get_probe_class, probe_names, register_probe
from judgeprobe.probes.repetition import RepetitionProbe
from judgeprobe.probes.runner import check_probe, run_probe, run_probe_sync

__all__ = [
    "AgreementProbe",
    "BypassProbe",
    "ClusterProbe",
    "FigureSpec",
    "Finding",
    "HumanAgreementProbe",
    "LengthControlledWinRateProbe",
    "LengthNullProbe",
    "PairwisePolicyInvarianceProbe",
    "PermutationProbe",
    "PolicyInvarianceProbe",
    "PositionProbe",
    "Probe",
    "ProbeContext",
    "ProbeKind",
    "ProbeResult",
    "RepetitionProbe",
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
