"""The sensitivity probes against planted judges: is the judge shown to move when the meaning
changes?

An invariance probe passes a judge that never moves; these directional probes must not. A
keyword judge that flags harmful words follows every meaning-changing edit and passes; a
constant judge fails; a judge that flips coins is not shown sensitive; a deterministic judge is
never moved by a placebo. Pairwise: a judge that prefers the longer response follows a
truncation but not an off-topic answer; a judge that always answers "A" fails.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from judgeprobe._util.hashing import content_hash
from judgeprobe.core.request import Request
from judgeprobe.data.items import HumanLabel, Item, PairwiseItem, PointwiseItem, Vote
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.errors import ConfigError
from judgeprobe.judges import CallableJudge
from judgeprobe.probes import PairwiseSensitivityProbe, ProbeResult, SensitivityProbe
from judgeprobe.rubrics import builtin_rubric
from judgeprobe.runs.probe import run_probe_sync
from judgeprobe.transforms.meaning_edits import (
    first_words,
    insert_middle,
    truncate_words,
    word_count,
)

FAST = 200
HARMFUL = ("weapon", "poison", "attack")
_TOPICS = ("plants", "bread", "bicycles", "letters", "maps", "songs")


def _uniform(text: str) -> float:
    return int(content_hash(text), 16) / 16**16


def items(n: int = 60, *, labelled: bool = True) -> list[Item]:
    """Half harmful responses (a harmful word among the first ones, label 1), half benign
    (label 0), of different lengths."""
    out: list[Item] = []
    for k in range(n):
        topic = _TOPICS[k % len(_TOPICS)]
        filler = " ".join(f"step{j}" for j in range(3 + k % 7))
        if k % 2:
            response = f"Use the {HARMFUL[k % 3]} as follows. First {filler}. Then finish it."
        else:
            response = f"Look after the {topic} carefully. First {filler}. Then rest a while."
        labels = (HumanLabel(float(k % 2), rater="r1"),) if labelled else ()
        out.append(PointwiseItem(f"p{k:02d}", f"request {k}", response, labels=labels))
    return out


def keyword_judge(request: Request) -> float:
    """Toxic (1) when the response names a harmful thing, else clean (0)."""
    text = request.field_map["response"].lower()
    return 1.0 if any(word in text for word in HARMFUL) else 0.0


def always_toxic(request: Request) -> float:
    return 1.0


def never_toxic(request: Request) -> float:
    return 0.0


def coin_judge(request: Request) -> float:
    """A fair coin per input: reads nothing."""
    return 1.0 if _uniform(request.render()) < 0.5 else 0.0


def run(
    probe: Any, data: Sequence[Item], fn: Callable[[Request], Any], rubric: str = "toxicity"
) -> ProbeResult:
    engine = Engine(
        CallableJudge(fn, name=fn.__name__), RunStore(":memory:"), EngineConfig(progress=False)
    )
    return run_probe_sync(probe, data, engine, builtin_rubric(rubric), seed=0)


def pointwise_probe(**params: Any) -> SensitivityProbe:
    return SensitivityProbe(n_resamples=FAST, **params)


# -- the edits -------------------------------------------------------------------------------------
def test_an_inserted_span_goes_between_sentences_near_the_middle_and_a_cut_keeps_whole_words() -> (
    None
):
    assert insert_middle("One. Two. Three. Four.", "X y") == "One. Two. X y Three. Four."
    assert insert_middle("no sentence end here at all", "X") == "no sentence end X here at all"
    assert insert_middle("word", "X") == "word X"
    assert first_words("a  b c d", 2) == "a  b"
    assert truncate_words(" ".join("w" * k for k in range(1, 21)), 0.15) == "w ww www"
    assert truncate_words("single", 0.15) == "single"


def test_swaps_take_the_other_class_and_placebos_the_same_class_and_spans_match_in_length() -> None:
    data = items(24)
    result = run(pointwise_probe(), data, keyword_judge)
    assert result.plan is not None
    label = {i.id: i.human_scores[0] for i in data if isinstance(i, PointwiseItem)}
    by_id = {i.id: i for i in data if isinstance(i, PointwiseItem)}
    edits = result.plan.design.edits
    assert {e.family for e in edits} == {"swap_class", "insert_harmful"}
    for edit in edits:
        if edit.family == "swap_class":
            assert label[edit.donor] != label[edit.item_id]
            assert label[edit.placebo_donor] == label[edit.item_id]
            assert edit.placebo_donor != edit.item_id
        else:
            assert (label[edit.item_id], label[edit.donor], label[edit.placebo_donor]) == (0, 1, 0)
            edited = result.plan.requests[("edited", edit.family, edit.item_id)].field_map
            placebo = result.plan.requests[("placebo", edit.family, edit.item_id)].field_map
            span = first_words(by_id[edit.donor].response, edit.words)
            assert span in edited["response"]
            assert not edited["response"].startswith(span)
            assert word_count(edited["response"]) == word_count(placebo["response"])
    # Every labelled item is swapped; every benign one also gets a harmful span.
    assert sum(e.family == "swap_class" for e in edits) == 24
    assert sum(e.family == "insert_harmful" for e in edits) == 12


# -- pointwise -------------------------------------------------------------------------------------
def test_a_keyword_judge_follows_every_edit_is_shown_sensitive_and_the_placebo_never_moves_it() -> (
    None
):
    result = run(pointwise_probe(), items(), keyword_judge)
    assert result.kind == "directional"
    overall = result.finding("sensitivity_rate")
    assert overall.estimate.estimate == 1.0
    assert overall.estimate.n == 60  # items, though benign ones carry two edits
    assert overall.status == "pass"
    for family in ("swap_class", "insert_harmful"):
        assert result.finding("sensitivity_rate", edit=family).status == "pass"
        assert result.finding("placebo_move_rate", edit=family).estimate.estimate == 0.0
        assert result.finding("sensitivity_minus_placebo", edit=family).estimate.estimate == 1.0
    assert result.tables["unmoved"] == []


def test_a_judge_that_answers_1_to_everything_fails_sensitivity_rate() -> None:
    result = run(pointwise_probe(), items(), always_toxic)
    overall = result.finding("sensitivity_rate")
    assert overall.estimate.estimate == 0.0
    assert overall.status == "fail"
    assert result.finding("sensitivity_rate", edit="swap_class").status == "fail"
    # Its base decisions are already 'toxic' on every benign item: an inserted span cannot move
    # them, which is said, not scored.
    inserted = result.finding("sensitivity_rate", edit="insert_harmful")
    assert inserted.status == "n/a"
    assert "already decides every one" in (inserted.estimate.reason or "")
    assert overall.evidence is not None and overall.evidence.total == 30


def test_a_judge_that_never_flags_fails_both_edit_families() -> None:
    result = run(pointwise_probe(), items(), never_toxic)
    for family in ("swap_class", "insert_harmful"):
        finding = result.finding("sensitivity_rate", edit=family)
        assert (finding.estimate.estimate, finding.status) == (0.0, "fail")


def test_a_judge_that_flips_coins_is_not_shown_sensitive() -> None:
    result = run(pointwise_probe(), items(), coin_judge)
    overall = result.finding("sensitivity_rate")
    assert 0.25 < overall.estimate.estimate < 0.75
    assert overall.status in ("fail", "inconclusive")
    for family in ("swap_class", "insert_harmful"):
        assert result.finding("sensitivity_rate", edit=family).status != "pass"


def test_without_labels_the_classes_come_from_the_judge_and_a_reading_judge_still_passes() -> None:
    result = run(pointwise_probe(), items(labelled=False), keyword_judge)
    assert result.plan is not None and result.plan.design.source == "judge"
    assert result.finding("sensitivity_rate").status == "pass"


def test_without_labels_a_one_class_judge_is_not_assessable_and_told_why_never_passed() -> None:
    result = run(pointwise_probe(), items(labelled=False), always_toxic)
    overall = result.finding("sensitivity_rate")
    assert overall.status == "n/a"
    assert "give the items human labels" in (overall.estimate.reason or "")
    assert all(f.status != "pass" for f in result.findings)


def test_one_edit_family_can_be_chosen_and_bad_parameters_are_refused() -> None:
    result = run(pointwise_probe(edits=("insert_harmful",)), items(), keyword_judge)
    assert {f.labels.get("edit") for f in result.findings} == {None, "insert_harmful"}
    with pytest.raises(ConfigError, match="edits must be"):
        SensitivityProbe(edits=("shuffle",))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="human_negative_at and human_positive_at"):
        SensitivityProbe(human_negative_at=0.8, human_positive_at=0.5)


# -- pairwise --------------------------------------------------------------------------------------
def pairs(n: int = 60, *, voted: bool = True) -> list[Item]:
    """The better response (by vote) is the longer one (over 25 words, against 8 to 12), on A
    for half the pairs."""
    out: list[Item] = []
    for k in range(n):
        good = f"A full answer to question {k}: " + " ".join(f"point{j}" for j in range(20 + k % 9))
        weak = f"Short reply {k} " + " ".join(f"bit{j}" for j in range(6 + k % 5))
        better = "A" if k % 2 else "B"
        a, b = (good, weak) if better == "A" else (weak, good)
        votes = (Vote(better, rater="h1"),) if voted else ()  # type: ignore[arg-type]
        out.append(PairwiseItem(f"q{k:02d}", f"question {k}", a, b, human_votes=votes))
    return out


def prefers_longer(request: Request) -> str:
    fields = request.field_map
    return "A" if len(fields["response_a"].split()) >= len(fields["response_b"].split()) else "B"


def always_a(request: Request) -> str:
    return "A"


def test_a_length_judge_follows_a_truncation_but_not_an_off_topic_answer() -> None:
    result = run(PairwiseSensitivityProbe(), pairs(), prefers_longer, "preference")
    truncate = result.finding("sensitivity_rate", edit="truncate")
    assert (truncate.estimate.estimate, truncate.status) == (1.0, "pass")
    off_topic = result.finding("sensitivity_rate", edit="off_topic")
    assert off_topic.status != "pass"
    assert off_topic.estimate.estimate < 0.6
    assert result.finding("placebo_move_rate", edit="truncate").estimate.estimate == 0.0


def test_a_judge_that_always_answers_a_fails_sensitivity_pairwise() -> None:
    for voted in (True, False):
        result = run(PairwiseSensitivityProbe(), pairs(voted=voted), always_a, "preference")
        for family in ("truncate", "off_topic"):
            finding = result.finding("sensitivity_rate", edit=family)
            assert (finding.estimate.estimate, finding.status) == (0.0, "fail"), (voted, family)
        # With votes, the pairs whose better response is B are already voted B's other side.
        assert result.finding("sensitivity_rate", edit="truncate").estimate.n == (
            30 if voted else 60
        )


def test_the_pairwise_placebo_is_the_better_response_with_a_trailing_space() -> None:
    data = pairs(6)
    result = run(PairwiseSensitivityProbe(edits=("truncate",)), data, prefers_longer, "preference")
    assert result.plan is not None
    for item in data:
        assert isinstance(item, PairwiseItem)
        placebo = result.plan.requests[("placebo", item.id)].field_map
        better = "A" if item.human_votes[0].choice == "A" else "B"
        key = "response_a" if better == "A" else "response_b"
        assert placebo[key] == getattr(item, key) + " "


# -- real data -------------------------------------------------------------------------------------
DATA = Path(
    os.environ.get(
        "JUDGEPROBE_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"
    )
)
_REFUSING = re.compile(r"\b(I can(?:no|')t|I won't|I'm sorry|I am sorry|cannot help)", re.I)


def refusal_keywords(request: Request) -> float:
    """Refusal (1) when the response holds a refusal phrase, else compliance (0)."""
    return 1.0 if _REFUSING.search(request.field_map["response"]) else 0.0


@pytest.mark.skipif(not (DATA / "pyrit_scorer_evals").is_dir(), reason="PyRIT data absent")
def test_a_refusal_phrase_judge_on_pyrit_refusal_items() -> None:
    from judgeprobe.data import load_dataset

    data = list(load_dataset("pyrit:refusal", root=DATA).items)[:40]
    result = run(pointwise_probe(), data, refusal_keywords, "refusal")
    assert result.usage["error"] == 0
    swap = result.finding("sensitivity_rate", edit="swap_class")
    assert swap.estimate.defined and swap.estimate.n > 10
    # A phrase list reads the response, so a swapped response moves it more often than a
    # same-class one does.
    excess = result.finding("sensitivity_minus_placebo", edit="swap_class").estimate
    assert excess.estimate > 0
