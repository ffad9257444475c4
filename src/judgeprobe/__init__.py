"""judgeprobe: can this judge's numbers be believed?

Reliability audits for automatic judges (LLM-as-judge, reward models, classifiers, functions).
"""

from judgeprobe.data import PairwiseItem, PointwiseItem
from judgeprobe.engine import Budget, Engine, EngineConfig, RunStore
from judgeprobe.errors import JudgeprobeError
from judgeprobe.judges import CallableJudge, Judge
from judgeprobe.request import Request
from judgeprobe.rubrics import Rubric, builtin_rubric, get_rubric
from judgeprobe.verdict import Verdict, VerdictStatus

__version__ = "0.1.0"

__all__ = [
    "Budget",
    "CallableJudge",
    "Engine",
    "EngineConfig",
    "Judge",
    "JudgeprobeError",
    "PairwiseItem",
    "PointwiseItem",
    "Request",
    "Rubric",
    "RunStore",
    "Verdict",
    "VerdictStatus",
    "__version__",
    "builtin_rubric",
    "get_rubric",
]
