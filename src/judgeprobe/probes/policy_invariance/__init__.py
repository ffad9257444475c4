"""Policy invariance: does the judge's verdict survive a rewording of its own rubric?

For every item the probe asks the judge under audit for (trial indices of the engine's requests):

- the base rubric's *single run* (trial 0, the same request every other probe makes),
- ``reruns`` = N base *reruns* (trials 1..N), whose strict majority is the item's *anchor*,
- one single run of every rubric variant (trial 0 of the variant rubric),
- optionally, ``reproduction_trials`` = R fresh runs of the base (trials N+1..N+R) and of the
  variant (trials 1..R) on every item a variant flipped: a second stage of the plan.

A *flip* is a single run whose decision, under the rubric's one decision rule
(:meth:`~judgeprobe.rubrics.Rubric.decision_of`), is opposite to the anchor's: for scale, binary
and continuous rubrics a move between the rule's two classes (a move into or out of ``neutral``
is counted separately, never as a flip), for pairwise rubrics any change of A / B / tie. Calls
that errored, could not be parsed or were skipped are excluded from every count and reported.

Per variant and per transform class (lexicon, syntax, format, supplementary, threshold) it
reports the flip rate, its excess over the null (``flip_delta``) with an exact one-sided test and
a CI, and for threshold shifts the share of flips in the expected direction. The default null is
*matched*: the base single run against the same anchor (see :mod:`judgeprobe.stats.flips`);
``null="pairwise"`` uses the paper's pairwise jitter. It also reports accuracy (and MAE for
numeric scales) against human labels per wording with the spread across wordings, flips by item
type, category and human ambiguity, and the reproduction classification of flips (deterministic
versus wording-induced instability).

Results are keyed by the judge's fingerprint and the base rubric's hash, with every variant's
content hash inside (``tables["key"]``). No composite score is computed: the components are the
result.

Modules, one concept each: :mod:`.wordings` (variant sets, validated once), :mod:`.design` (the
plan's design, roles and each item's decisions), :mod:`.noise` (jitter and the matched null),
:mod:`.flips`, :mod:`.accuracy`, :mod:`.strata`, :mod:`.reproduction`, :mod:`.failures`, and
:mod:`.probe` (the probes that assemble them).

References
----------
"Beyond Accuracy: Policy Invariance as a Reliability Test for LLM Safety Judges",
arXiv 2605.06161 (transform taxonomy, flip rate above rerun jitter, directional ratio).
"""

from judgeprobe.probes.policy_invariance.design import PolicyDesign
from judgeprobe.probes.policy_invariance.probe import (
    NULLS,
    PairwisePolicyInvarianceProbe,
    PolicyInvarianceProbe,
)
from judgeprobe.probes.policy_invariance.reproduction import (
    REPRODUCTION_OUTCOMES,
    classify_reproduction,
)
from judgeprobe.probes.policy_invariance.strata import ITEM_TYPE_RULES, refusal_item_type
from judgeprobe.probes.policy_invariance.wordings import BASE, Wording

__all__ = [
    "BASE",
    "ITEM_TYPE_RULES",
    "NULLS",
    "REPRODUCTION_OUTCOMES",
    "PairwisePolicyInvarianceProbe",
    "PolicyDesign",
    "PolicyInvarianceProbe",
    "Wording",
    "classify_reproduction",
    "refusal_item_type",
]
