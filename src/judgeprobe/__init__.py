"""judgeprobe: can this judge's numbers be believed?

Reliability audits for automatic judges (LLM-as-judge, reward models, classifiers, functions).
"""

import importlib
from typing import TYPE_CHECKING, Any

from judgeprobe._version import __version__
from judgeprobe.core.plan import Plan, ProbeContext, Verdicts
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict, VerdictStatus
from judgeprobe.data import PairwiseItem, PointwiseItem
from judgeprobe.engine import Budget, Engine, EngineConfig, RunStore
from judgeprobe.errors import JudgeprobeError
from judgeprobe.judges import CallableJudge, Judge
from judgeprobe.rubrics import Rubric, builtin_rubric, get_rubric

if TYPE_CHECKING:
    from judgeprobe.audit.billing import Bill, plan_audit
    from judgeprobe.audit.config import AuditConfig
    from judgeprobe.audit.repair import RepairOutcome, run_repair_audit
    from judgeprobe.audit.run import run_audit
    from judgeprobe.compare import compare_runs
    from judgeprobe.probes import (
        AgreementProbe,
        AuthorityProbe,
        BandwagonProbe,
        BypassProbe,
        ClusterProbe,
        DistractionProbe,
        Finding,
        ForgedVerdictProbe,
        HumanAgreementProbe,
        InjectionProbe,
        LengthControlledWinRateProbe,
        LengthNullProbe,
        MasterKeyProbe,
        PairwiseAuthorityProbe,
        PairwiseBandwagonProbe,
        PairwiseDistractionProbe,
        PairwiseForgedVerdictProbe,
        PairwiseInjectionProbe,
        PairwiseMasterKeyProbe,
        PairwisePolicyInvarianceProbe,
        PairwiseSensitivityProbe,
        PairwiseVerbosityProbe,
        PermutationProbe,
        PolicyInvarianceProbe,
        PositionProbe,
        ProbeResult,
        RepetitionProbe,
        SelfPreferenceProbe,
        SensitivityProbe,
        SmugglingProbe,
        VerbosityProbe,
    )
    from judgeprobe.report import build_card
    from judgeprobe.runs.probe import (
        analyze_offline,
        reanalyze,
        run_probe,
        run_probe_async,
        run_probe_sync,
    )
    from judgeprobe.stats import Estimate

_LAZY = {
    "AuditConfig": "judgeprobe.audit.config",
    "run_audit": "judgeprobe.audit.run",
    "Bill": "judgeprobe.audit.billing",
    "plan_audit": "judgeprobe.audit.billing",
    "build_card": "judgeprobe.report",
    "RepairOutcome": "judgeprobe.audit.repair",
    "run_repair_audit": "judgeprobe.audit.repair",
    "compare_runs": "judgeprobe.compare",
    "Estimate": "judgeprobe.stats",
    **dict.fromkeys(
        ("analyze_offline", "reanalyze", "run_probe", "run_probe_async", "run_probe_sync"),
        "judgeprobe.runs.probe",
    ),
    **dict.fromkeys(
        (
            "AgreementProbe",
            "BypassProbe",
            "ClusterProbe",
            "Finding",
            "HumanAgreementProbe",
            "LengthControlledWinRateProbe",
            "LengthNullProbe",
            "PairwisePolicyInvarianceProbe",
            "PairwiseSensitivityProbe",
            "PermutationProbe",
            "PolicyInvarianceProbe",
            "PositionProbe",
            "ProbeResult",
            "RepetitionProbe",
            "SelfPreferenceProbe",
            "SensitivityProbe",
        ),
        "judgeprobe.probes",
    ),
    **dict.fromkeys(
        (
            "AuthorityProbe",
            "BandwagonProbe",
            "DistractionProbe",
            "InjectionProbe",
            "PairwiseAuthorityProbe",
            "PairwiseBandwagonProbe",
            "PairwiseDistractionProbe",
            "PairwiseInjectionProbe",
            "PairwiseVerbosityProbe",
            "VerbosityProbe",
        ),
        "judgeprobe.probes",
    ),
    **dict.fromkeys(
        (
            "ForgedVerdictProbe",
            "MasterKeyProbe",
            "PairwiseForgedVerdictProbe",
            "PairwiseMasterKeyProbe",
            "SmugglingProbe",
        ),
        "judgeprobe.probes",
    ),
}
"""Exports whose modules load SciPy and Matplotlib: imported on first use (PEP 562), so that
``import judgeprobe`` and ``judgeprobe --help`` stay fast."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'judgeprobe' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "AgreementProbe",
    "AuditConfig",
    "AuthorityProbe",
    "BandwagonProbe",
    "Bill",
    "Budget",
    "BypassProbe",
    "CallableJudge",
    "ClusterProbe",
    "DistractionProbe",
    "Engine",
    "EngineConfig",
    "Estimate",
    "Finding",
    "ForgedVerdictProbe",
    "HumanAgreementProbe",
    "InjectionProbe",
    "Judge",
    "JudgeprobeError",
    "LengthControlledWinRateProbe",
    "LengthNullProbe",
    "MasterKeyProbe",
    "PairwiseAuthorityProbe",
    "PairwiseBandwagonProbe",
    "PairwiseDistractionProbe",
    "PairwiseForgedVerdictProbe",
    "PairwiseInjectionProbe",
    "PairwiseItem",
    "PairwiseMasterKeyProbe",
    "PairwisePolicyInvarianceProbe",
    "PairwiseSensitivityProbe",
    "PairwiseVerbosityProbe",
    "PermutationProbe",
    "Plan",
    "PointwiseItem",
    "PolicyInvarianceProbe",
    "PositionProbe",
    "ProbeContext",
    "ProbeResult",
    "RepairOutcome",
    "RepetitionProbe",
    "Request",
    "Rubric",
    "RunStore",
    "SelfPreferenceProbe",
    "SensitivityProbe",
    "SmugglingProbe",
    "VerbosityProbe",
    "Verdict",
    "VerdictStatus",
    "Verdicts",
    "__version__",
    "analyze_offline",
    "build_card",
    "builtin_rubric",
    "compare_runs",
    "get_rubric",
    "plan_audit",
    "reanalyze",
    "run_audit",
    "run_probe",
    "run_probe_async",
    "run_probe_sync",
    "run_repair_audit",
]
