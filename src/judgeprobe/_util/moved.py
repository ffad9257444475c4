"""Where the modules of judgeprobe's earlier layout live now, for reading what they wrote.

A run store keeps each probe's plan with its design encoded as JSON that names the classes it
holds by module and name (:mod:`judgeprobe._util.codec`). Stores written before the package was
arranged in folders name modules that have moved (``judgeprobe.plan``,
``judgeprobe.probes.cluster``); the codec reads those names through this table, so an old store
is analysed again, compared and rendered as it was, with no judge call. The table records one
move; later moves add their own lines.
"""

MOVED: dict[str, str] = {
    "judgeprobe._annotations": "judgeprobe._util.annotations",
    "judgeprobe._atomic": "judgeprobe._util.atomic",
    "judgeprobe._codec": "judgeprobe._util.codec",
    "judgeprobe._hashing": "judgeprobe._util.hashing",
    "judgeprobe._yaml_files": "judgeprobe._util.yaml_files",
    "judgeprobe.anytime": "judgeprobe.audit.anytime",
    "judgeprobe.audit": "judgeprobe.audit.run",
    "judgeprobe.batch": "judgeprobe.engine.batch",
    "judgeprobe.batch.client": "judgeprobe.engine.batch.client",
    "judgeprobe.batch.executor": "judgeprobe.engine.executors.openai_batch",
    "judgeprobe.batch.export": "judgeprobe.audit.batch_export",
    "judgeprobe.batch.lines": "judgeprobe.engine.batch.lines",
    "judgeprobe.billing": "judgeprobe.audit.billing",
    "judgeprobe.cli": "judgeprobe._cli.main",
    "judgeprobe.cli_batch": "judgeprobe._cli.batch",
    "judgeprobe.cli_compare": "judgeprobe._cli.compare",
    "judgeprobe.cli_demo": "judgeprobe._cli.demo",
    "judgeprobe.cli_options": "judgeprobe._cli.options",
    "judgeprobe.cli_plan": "judgeprobe._cli.plan",
    "judgeprobe.cli_repair": "judgeprobe._cli.repair",
    "judgeprobe.cli_store": "judgeprobe._cli.store",
    "judgeprobe.demo": "judgeprobe.audit.demo",
    "judgeprobe.engine.executor": "judgeprobe.engine.executors.base",
    "judgeprobe.evidence": "judgeprobe.core.evidence",
    "judgeprobe.executors": "judgeprobe.engine.executors",
    "judgeprobe.falsifier": "judgeprobe.core.falsifier",
    "judgeprobe.family": "judgeprobe.audit.family",
    "judgeprobe.generation": "judgeprobe.runs.responses",
    "judgeprobe.judge": "judgeprobe.core.judge",
    "judgeprobe.plan": "judgeprobe.core.plan",
    "judgeprobe.pricing": "judgeprobe.core.pricing",
    "judgeprobe.probes._agreement_data": "judgeprobe.probes.agreement.data",
    "judgeprobe.probes._agreement_findings": "judgeprobe.probes.agreement.findings",
    "judgeprobe.probes._baselines": "judgeprobe.probes.agreement.baselines",
    "judgeprobe.probes._bias_findings": "judgeprobe.probes.bias.findings",
    "judgeprobe.probes._bypass_design": "judgeprobe.probes.concatenation.bypass_design",
    "judgeprobe.probes._bypass_tally": "judgeprobe.probes.concatenation.bypass_tally",
    "judgeprobe.probes._concat_evidence": "judgeprobe.probes.concatenation.evidence",
    "judgeprobe.probes._decisions": "judgeprobe.probes.decisions",
    "judgeprobe.probes._length": "judgeprobe.probes.pairwise.length",
    "judgeprobe.probes._pairwise": "judgeprobe.probes.pairwise.votes",
    "judgeprobe.probes._params": "judgeprobe.probes.params",
    "judgeprobe.probes._permutation_design": "judgeprobe.probes.concatenation.permutation_design",
    "judgeprobe.probes.agreement": "judgeprobe.probes.agreement.probe",
    "judgeprobe.probes.bias": "judgeprobe.probes.bias.probe",
    "judgeprobe.probes.bypass": "judgeprobe.probes.concatenation.bypass",
    "judgeprobe.probes.cluster": "judgeprobe.probes.concatenation.cluster",
    "judgeprobe.probes.human_agreement": "judgeprobe.probes.pairwise.human_agreement",
    "judgeprobe.probes.length_control": "judgeprobe.probes.pairwise.length_control",
    "judgeprobe.probes.length_null": "judgeprobe.probes.pairwise.length_null",
    "judgeprobe.probes.permutation": "judgeprobe.probes.concatenation.permutation",
    "judgeprobe.probes.position": "judgeprobe.probes.pairwise.position",
    "judgeprobe.probes.repetition": "judgeprobe.probes.concatenation.repetition",
    "judgeprobe.probes.self_preference": "judgeprobe.probes.pairwise.self_preference",
    "judgeprobe.ray_executor": "judgeprobe.engine.executors.ray",
    "judgeprobe.recorded_pairwise": "judgeprobe.runs.recorded_pairwise",
    "judgeprobe.redaction": "judgeprobe._util.redaction",
    "judgeprobe.repair": "judgeprobe.judges.repairs",
    "judgeprobe.repair.base": "judgeprobe.judges.repairs.base",
    "judgeprobe.repair.chunked": "judgeprobe.judges.repairs.chunked",
    "judgeprobe.repair.ensemble": "judgeprobe.judges.repairs.ensemble",
    "judgeprobe.repair.length": "judgeprobe.judges.repairs.length",
    "judgeprobe.repair.single_answer": "judgeprobe.judges.repairs.single_answer",
    "judgeprobe.repair.swap": "judgeprobe.judges.repairs.swap",
    "judgeprobe.repair_audit": "judgeprobe.audit.repair",
    "judgeprobe.request": "judgeprobe.core.request",
    "judgeprobe.running": "judgeprobe.runs.probe",
    "judgeprobe.scoring": "judgeprobe.runs.scoring",
    "judgeprobe.scoring_agreement": "judgeprobe.runs.scoring_agreement",
    "judgeprobe.sequential": "judgeprobe.audit.sequential",
    "judgeprobe.variant_generation": "judgeprobe.runs.variants",
    "judgeprobe.verdict": "judgeprobe.core.verdict",
}
"""An earlier module path -> the module that holds its classes now."""


def current_module(module: str) -> str:
    """``module`` as named now (itself when it has not moved).

    >>> current_module("judgeprobe.plan")
    'judgeprobe.core.plan'
    >>> current_module("judgeprobe.core.plan")
    'judgeprobe.core.plan'
    """
    return MOVED.get(module, module)
