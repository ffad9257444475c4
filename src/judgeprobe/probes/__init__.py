"""Probes: one reliability test each (plan, refine, analyze), registered by name."""

from judgeprobe.core.plan import Plan, ProbeContext, Verdicts
from judgeprobe.probes.adversarial.probe import (
    ForgedVerdictProbe,
    MasterKeyProbe,
    PairwiseForgedVerdictProbe,
    PairwiseMasterKeyProbe,
    SmugglingProbe,
)
from judgeprobe.probes.agreement.probe import AgreementProbe
from judgeprobe.probes.base import (
    FigureSpec,
    Finding,
    Probe,
    ProbeKind,
    ProbeResult,
    Threshold,
)
from judgeprobe.probes.bias.probe import (
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
from judgeprobe.probes.concatenation.bypass import BypassProbe
from judgeprobe.probes.concatenation.cluster import ClusterProbe
from judgeprobe.probes.concatenation.permutation import PermutationProbe
from judgeprobe.probes.concatenation.repetition import RepetitionProbe
from judgeprobe.probes.pairwise.human_agreement import HumanAgreementProbe
from judgeprobe.probes.pairwise.length_control import LengthControlledWinRateProbe
from judgeprobe.probes.pairwise.length_null import LengthNullProbe
from judgeprobe.probes.pairwise.position import PositionProbe
from judgeprobe.probes.pairwise.self_preference import SelfPreferenceProbe
from judgeprobe.probes.policy_invariance import PairwisePolicyInvarianceProbe, PolicyInvarianceProbe
from judgeprobe.probes.registry import get_probe_class, probe_names, register_probe
from judgeprobe.probes.sensitivity.pairwise import PairwiseSensitivityProbe
from judgeprobe.probes.sensitivity.pointwise import SensitivityProbe

__all__ = [
    "AgreementProbe",
    "AuthorityProbe",
    "BandwagonProbe",
    "BypassProbe",
    "ClusterProbe",
    "DistractionProbe",
    "FigureSpec",
    "Finding",
    "ForgedVerdictProbe",
    "HumanAgreementProbe",
    "InjectionProbe",
    "LengthControlledWinRateProbe",
    "LengthNullProbe",
    "MasterKeyProbe",
    "PairwiseAuthorityProbe",
    "PairwiseBandwagonProbe",
    "PairwiseDistractionProbe",
    "PairwiseForgedVerdictProbe",
    "PairwiseInjectionProbe",
    "PairwiseMasterKeyProbe",
    "PairwisePolicyInvarianceProbe",
    "PairwiseSensitivityProbe",
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
    "SensitivityProbe",
    "SmugglingProbe",
    "Threshold",
    "VerbosityProbe",
    "Verdicts",
    "get_probe_class",
    "probe_names",
    "register_probe",
]
