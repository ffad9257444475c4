"""Preconditions declared once on each probe class, and the one check of them.

Each probe family's declaration is checked against a rubric, items and a judge's capabilities:
a wrong rubric kind, a wrong item kind, a rubric without what the probe needs, items without
human labels or votes, a judge that cannot write answers. The reason names the probe and what
is missing; ``Probe.check`` raises it before anything else, and ``_select_probe`` and the
default probe set use the same function.
"""

from __future__ import annotations

import pytest

from judgeprobe.audit.applicable import probes_that_apply
from judgeprobe.audit.config import parse_config
from judgeprobe.core.judge import JudgeCapabilities
from judgeprobe.core.plan import ProbeContext
from judgeprobe.data.items import HumanLabel, Item, PairwiseItem, PointwiseItem, Vote
from judgeprobe.errors import ConfigError
from judgeprobe.probes import Probe, get_probe_class, probe_names
from judgeprobe.probes.requirements import Requirements, not_applicable
from judgeprobe.rubrics import Rubric, builtin_rubric

HARM = builtin_rubric("harmfulness")
TOXICITY = builtin_rubric("toxicity")
PREFERENCE = builtin_rubric("preference")
NOT_A_JUDGE_OF_ANSWERS = JudgeCapabilities(generates=False)
WRITES_ANSWERS = JudgeCapabilities(generates=True)


def points(n: int = 4, *, labelled: bool = True) -> list[Item]:
    labels = (HumanLabel(1.0),) if labelled else ()
    return [PointwiseItem(f"p{k}", f"prompt {k}", f"response {k}", labels=labels) for k in range(n)]


def pairs(n: int = 4, *, voted: bool = True) -> list[Item]:
    votes = (Vote("A"),) if voted else ()
    return [
        PairwiseItem(f"q{k}", f"question {k}", f"first {k}", f"second {k}", human_votes=votes)
        for k in range(n)
    ]


def without_rule(rubric: Rubric) -> Rubric:
    """``rubric`` without its decision rule (a plugin's rubric may lack one; built ones cannot)."""
    return Rubric.model_construct(**{**dict(rubric), "decision": None})


def reason(name: str, rubric: Rubric, items: list[Item], judge: JudgeCapabilities) -> str:
    why = not_applicable(get_probe_class(name), rubric, items, judge)
    assert why is not None, f"{name} should not apply"
    assert why.startswith(f"probe {name!r} "), why
    return why


def test_every_probe_declares_its_requirements_and_its_kinds_follow_from_them() -> None:
    for name in probe_names():
        cls = get_probe_class(name)
        assert isinstance(cls.requirements, Requirements), name
        assert cls.item_kind == cls.requirements.items, name
        assert cls.rubric_kinds == cls.requirements.rubric_kinds, name


def test_the_probes_apply_to_the_inputs_they_are_made_for() -> None:
    for name in probe_names():
        cls = get_probe_class(name)
        inputs = (PREFERENCE, pairs()) if cls.item_kind == "pairwise" else (HARM, points())
        assert not_applicable(cls, *inputs, WRITES_ANSWERS) is None, name


# -- concatenation: repetition, cluster, permutation, bypass -------------------------------------
@pytest.mark.parametrize("name", ["repetition", "cluster", "permutation", "bypass"])
def test_a_concatenation_probe_names_the_rubric_kind_items_inputs_and_rule_it_lacks(
    name: str,
) -> None:
    judge = NOT_A_JUDGE_OF_ANSWERS
    assert "needs a scale or binary or continuous rubric, not the pairwise rubric 'preference'" in (
        reason(name, PREFERENCE, points(), judge)
    )
    assert "needs pointwise items, but 4 of the 4 items are pairwise" in (
        reason(name, HARM, pairs(), judge)
    )
    wider = HARM.with_template(
        HARM.template + "\n{reference}", inputs=("prompt", "response", "reference")
    )
    assert (
        "concatenates prompts and responses only, but rubric 'harmfulness' also needs ['reference']"
        in (reason(name, wider, points(), judge))
    )
    ruleless = without_rule(HARM)
    assert "needs a rubric with a decision rule; rubric 'harmfulness' has none" in (
        reason(name, ruleless, points(), judge)
    )


# -- pairwise: position, human agreement, length null and control, self-preference ---------------
@pytest.mark.parametrize(
    "name", ["position", "human_agreement", "length_null", "length_controlled_win_rate"]
)
def test_a_pairwise_probe_names_the_rubric_kind_and_items_it_lacks(name: str) -> None:
    judge = NOT_A_JUDGE_OF_ANSWERS
    assert "needs a pairwise rubric, not the scale rubric 'harmfulness'" in (
        reason(name, HARM, pairs(), judge)
    )
    assert "needs pairwise items, but 4 of the 4 items are pointwise" in (
        reason(name, PREFERENCE, points(), judge)
    )
    wider = PREFERENCE.with_template(
        PREFERENCE.template + "\n{reference}",
        inputs=("prompt", "response_a", "response_b", "reference"),
    )
    assert "also needs ['reference']" in reason(name, wider, pairs(), judge)


def test_human_agreement_needs_human_votes() -> None:
    why = reason("human_agreement", PREFERENCE, pairs(voted=False), NOT_A_JUDGE_OF_ANSWERS)
    assert why == "probe 'human_agreement' needs pairwise items with human votes; none has one"
    assert not_applicable(get_probe_class("position"), PREFERENCE, pairs(voted=False)) is None


def test_self_preference_needs_a_judge_that_writes_answers() -> None:
    why = reason("self_preference", PREFERENCE, pairs(), NOT_A_JUDGE_OF_ANSWERS)
    assert "needs a judge that writes its own answers" in why
    assert not_applicable(get_probe_class("self_preference"), PREFERENCE, pairs(), None) is None


# -- agreement -------------------------------------------------------------------------------------
def test_agreement_needs_human_labels() -> None:
    why = reason("agreement", HARM, points(labelled=False), NOT_A_JUDGE_OF_ANSWERS)
    assert why == "probe 'agreement' needs pointwise items with human labels; none has one"
    assert "needs pointwise items" in reason("agreement", HARM, pairs(), NOT_A_JUDGE_OF_ANSWERS)


# -- bias ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "edit", ["verbosity", "injection", "authority", "bandwagon", "distraction"]
)
def test_a_bias_probe_names_the_response_and_rule_it_lacks(edit: str) -> None:
    judge = NOT_A_JUDGE_OF_ANSWERS
    blind = HARM.with_template("{prompt}", inputs=("prompt",))
    assert "edits the response, but rubric 'harmfulness' does not read one" in (
        reason(edit, blind, points(), judge)
    )
    ruleless = without_rule(HARM)
    assert "needs a rubric with a decision rule" in reason(edit, ruleless, points(), judge)
    assert "needs a pairwise rubric, not the scale rubric 'harmfulness'" in (
        reason(f"{edit}_pairwise", HARM, pairs(), judge)
    )
    assert "needs pairwise items" in reason(f"{edit}_pairwise", PREFERENCE, points(), judge)


# -- policy invariance -----------------------------------------------------------------------------
def test_policy_invariance_needs_instructions_to_reword() -> None:
    why = reason("policy_invariance", TOXICITY, points(), NOT_A_JUDGE_OF_ANSWERS)
    assert "rewords the rubric's instructions, but rubric 'toxicity' gives none" in why
    assert "needs pairwise items" in (
        reason("policy_invariance_pairwise", PREFERENCE, points(), NOT_A_JUDGE_OF_ANSWERS)
    )


# -- the one check, wherever it is made ------------------------------------------------------------
def test_probe_check_raises_the_reason_before_planning() -> None:
    probe: Probe = get_probe_class("agreement")()
    with pytest.raises(ConfigError, match=r"^probe 'agreement' needs pointwise items with human"):
        probe.check(points(labelled=False), ProbeContext("j", HARM))
    probe = get_probe_class("self_preference")()
    with pytest.raises(ConfigError, match=r"^probe 'self_preference' needs a judge that writes"):
        probe.check(pairs(), ProbeContext("j", PREFERENCE, generates=False))
    probe.check(pairs(), ProbeContext("j", PREFERENCE, generates=True))


def test_probes_that_apply_splits_the_candidates_and_reads_a_probe_s_own_inputs() -> None:
    config = parse_config({"judge": "profanity", "rubric": "toxicity", "data": "demo"})
    chosen = probes_that_apply(
        config,
        NOT_A_JUDGE_OF_ANSWERS,
        {
            "repetition": {"counts": [1, 2]},
            "policy_invariance": {},
            "position": {},
            "human_agreement": {"rubric": "preference", "data": "demo:pairwise"},
        },
    )
    assert chosen.probes == {
        "repetition": {"counts": [1, 2]},
        "human_agreement": {"rubric": "preference", "data": "demo:pairwise"},
    }
    assert set(chosen.not_applicable) == {"policy_invariance", "position"}
    assert chosen.not_applicable["position"] == (
        "probe 'position' needs a pairwise rubric, not the continuous rubric 'toxicity'"
    )


def test_a_probe_named_on_the_wrong_data_says_what_to_give_it() -> None:
    from judgeprobe.audit.run import _select_probe

    config = parse_config({"rubric": "toxicity", "data": "demo", "probes": ["position"]})
    with pytest.raises(ConfigError, match=r"probes\.position: probe 'position' needs a pairwise"):
        _select_probe("position", {}, config, {})
