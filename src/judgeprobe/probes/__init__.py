"""Probes: one reliability test each (plan, refine, analyze), registered by name."""

from judgeprobe.plan import Plan, ProbeContext, Verdicts
from judgeprobe.probes.agreement import AgreementProbe
from judgeprobe.probes.base import (
    FigureSpec,
    Finding,
    Probe,
    ProbeKind,
    ProbeResult,
    Threshold,
)
from judgeprobe.probes.bias import (
    AuthorityProbe,
    BandwagonProbe,
    DistractionProbe,
    InjectionProbe,
    PairwiseAuthorityProbe,
    PairwiseBandwagonProbe,
    PairwiseDistractionProbe,
    PairwiseInjectionProbe,
    PairwiseVerbosityProbe,
    VerbosityProbe,
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
from judgeprobe.probes.self_preference import SelfPreferenceProbe

__all__ = [
    "AgreementProbe",
    "AuthorityProbe",
    "BandwagonProbe",
    "BypassProbe",
    "ClusterProbe",
    "DistractionProbe",
    "FigureSpec",
    "Finding",
    "HumanAgreementProbe",
    "InjectionProbe",
    "LengthControlledWinRateProbe",
    "LengthNullProbe",
    "PairwiseAuthorityProbe",
    "PairwiseBandwagonProbe",
    "PairwiseDistractionProbe",
    "PairwiseInjectionProbe",
    "PairwisePolicyInvarianceProbe",
    "PairwiseVerbosityProbe",
    "PermutationProbe",
    "Plan",
    "PolicyInvarianceProbe",
    "PositionProbe",
    "Probe",
    "ProbeContext",
    "ProbeKind",
    "ProbeResult",
    "RepetitionProbe",
    "SelfPreferenceProbe",
    "Threshold",
    "VerbosityProbe",
    "Verdicts",
    "get_probe_class",
    "probe_names",
    "register_probe",
]
