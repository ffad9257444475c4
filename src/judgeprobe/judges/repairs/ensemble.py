"""Rubric ensemble: the majority verdict over k validated wordings of the rubric.

A judge whose decision moves when the rubric is reworded without changing its meaning fails
policy invariance (arXiv 2605.06161). The ensemble asks the judge under k wordings that mean the
same and keeps the median verdict. The k wordings are the request's own, then the pool's
others in order until there are k; the pool is the rubric's base template and the
meaning-preserving variants (``lexicon``, ``syntax``, ``format``) of its reviewed variant set.
A request worded by any of the pool's first k wordings is thus judged under the very same k
wordings, and one worded otherwise (a ``supplementary`` variant, a later pooled one) under
k - 1 of them: that is what makes the repaired judge stable under rewording.

Rubrics decide by a monotone rule on the score, so the decision of the median score is the
median decision, which for two classes and an odd k is the majority. The repaired verdict is
the inner verdict whose score is the lower median.

A request worded by an intentional-shift variant (``threshold``: a stricter or more lenient
policy) is judged once under its own wording: averaging it with the unshifted wordings would
undo the policy change the probe checks the judge still follows. So are requests of a rubric
without a variant set (k = 1). Cost: k inner calls per verdict on the invariant wordings.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from judgeprobe.core.judge import Judge
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.errors import ConfigError, RubricError
from judgeprobe.judges.repairs.base import RepairJudge, answer_of, first_failure
from judgeprobe.rubrics import builtin_variants, get_rubric, load_variants
from judgeprobe.rubrics.variants import VariantSet

POOLED = ("lexicon", "syntax", "format")
"""The transforms whose wordings the ensemble pools (meaning-preserving, no added context)."""


class RubricEnsembleJudge(RepairJudge):
    """Median (majority) verdict over ``k`` wordings; ``variants`` a variant-set YAML path
    (default: the set shipped for the rubric)."""

    repair = "rubric_ensemble"

    def __init__(self, inner: Judge, *, k: int = 3, variants: str | None = None) -> None:
        if k < 1:
            raise ConfigError(f"repair rubric_ensemble: k must be >= 1, got {k}")
        super().__init__(inner, k=k, variants=variants)
        self.k = k
        self.variants = variants
        self._pools: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {}

    def pool(self, rubric_name: str) -> tuple[tuple[str, ...], frozenset[str]]:
        """The pooled templates of the base rubric ``rubric_name`` and the shifted ones."""
        if rubric_name not in self._pools:
            self._pools[rubric_name] = _pool(rubric_name, self.variants)
        return self._pools[rubric_name]

    def wordings(self, request: Request) -> list[str]:
        """The templates the request is judged under, its own first."""
        own = request.rubric.template
        pooled, shifted = self.pool(request.rubric.name.split("/")[0])
        if own in shifted or not pooled:
            return [own]
        others = [t for t in pooled if t != own]
        return [own, *others][: self.k]

    async def judge(self, request: Request) -> Verdict:
        rubric = request.rubric
        asks = [
            (rubric if t == rubric.template else rubric.with_template(t), request.field_map)
            for t in self.wordings(request)
        ]
        verdicts = await self.ask_many(asks, request.trial)
        failed = first_failure(verdicts)
        if failed is not None:
            return self.combined(failed, verdicts)
        chosen = median_index(verdicts)
        median = verdicts[chosen]
        verdict = answer_of(median, default=0.0)
        votes = [rubric.decision_of(v.score or 0.0, v.label) for v in verdicts]
        return self.combined(verdict, verdicts, wordings=len(verdicts), votes=votes)


def median_index(verdicts: Sequence[Verdict]) -> int:
    """The index of the verdict whose score is the lower median of all (all ok)."""
    scores = [v.score if v.score is not None else 0.0 for v in verdicts]
    return scores.index(statistics.median_low(scores))


def _pool(rubric_name: str, path: str | None) -> tuple[tuple[str, ...], frozenset[str]]:
    try:
        variant_set: VariantSet = (
            load_variants(Path(path)) if path else builtin_variants(rubric_name)
        )
    except RubricError:
        if path:
            raise
        return (), frozenset()
    try:
        base: tuple[str, ...] = (get_rubric(rubric_name).template,)
    except RubricError:
        base = ()
    pooled = base + tuple(v.template for v in variant_set.variants if v.transform in POOLED)
    shifted = frozenset(v.template for v in variant_set.variants if v.family == "intentional_shift")
    return pooled, shifted
