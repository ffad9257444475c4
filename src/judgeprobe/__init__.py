"""judgeprobe: can this judge's numbers be believed?

Reliability audits for automatic judges (LLM-as-judge, reward models, classifiers, functions).
"""

from judgeprobe._version import __version__
from judgeprobe.audit import AuditConfig, run_audit
from judgeprobe.data import PairwiseItem, PointwiseItem
from judgeprobe.engine import Budget, Engine, EngineConfig, RunStore
from judgeprobe.errors import JudgeprobeError
from judgeprobe.judges import CallableJudge, Judge
from judgeprobe.probes import (
    ClusterProbe,
    Finding,
    HumanAgreementProbe,
    LengthControlledWinRateProbe,
    LengthNullProbe,
    PairwisePolicyInvarianceProbe,
    PermutationProbe,
    PolicyInvarianceProbe,
    PositionProbe,
    ProbeResult,
    RepetitionProbe,
)
from judgeprobe.report import build_card
from judgeprobe.request import Request
from judgeprobe.rubrics import Rubric, builtin_rubric, get_rubric
from judgeprobe.stats import Estimate
from judgeprobe.verdict import Verdict, VerdictStatus

__all__ = [
    "AuditConfig",
    "Budget",
    "CallableJudge",
    "ClusterProbe",
    "Engine",
    "EngineConfig",
    "Estimate",
    "Finding",
    "HumanAgreementProbe",
    "Judge",
    "JudgeprobeError",
    "LengthControlledWinRateProbe",
    "LengthNullProbe",
    "PairwiseItem",
    "PairwisePolicyInvarianceProbe",
    "PermutationProbe",
    "PointwiseItem",
    "PolicyInvarianceProbe",
    "PositionProbe",
    "ProbeResult",
    "RepetitionProbe",
    "Request",
    "Rubric",
    "RunStore",
    "Verdict",
    "VerdictStatus",
    "__version__",
    "build_card",
    "builtin_rubric",
    "get_rubric",
    "run_audit",
]
