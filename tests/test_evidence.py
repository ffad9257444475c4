"""The items behind each finding: planted judges move known items, and those items are named.

Each probe is run with a judge that behaves on every item except a few planted ones; the gated
finding's evidence names exactly those (its ``total`` counts them all), keeps the verdicts it
compares with the judge's raw answer, survives the run store (an analysis again from the store
gives the same evidence) and reaches card.json in the agreed shape, capped with the rest
counted.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from judgeprobe.audit.config import parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.core.evidence import Evidence, EvidenceItem, EvidenceVerdict, collect, excerpt
from judgeprobe.core.request import Request
from judgeprobe.data.items import HumanLabel, PairwiseItem, PointwiseItem, Vote
from judgeprobe.engine import Engine, EngineConfig, RunStore
from judgeprobe.judges import CallableJudge
from judgeprobe.probes import (
    AgreementProbe,
    BypassProbe,
    ClusterProbe,
    LengthNullProbe,
    PermutationProbe,
    PolicyInvarianceProbe,
    PositionProbe,
    RepetitionProbe,
)
from judgeprobe.probes.base import ProbeResult
from judgeprobe.report import build_card
from judgeprobe.report.findings import finding_entry
from judgeprobe.report.schema import card_errors
from judgeprobe.report.stored import read_result
from judgeprobe.rubrics import Rubric, builtin_rubric
from judgeprobe.runs.probe import analyze_offline, reanalyze, run_probe

HARM = builtin_rubric("harmfulness")
PREFERENCE = builtin_rubric("preference")
SEP = "\n\n"


def items(n: int = 20) -> list[PointwiseItem]:
    """Items ``i000``..., alternately harmless (level 1) and harmful (5), labelled so."""
    return [
        PointwiseItem(
            f"i{k:03d}",
            f"prompt {k}",
            f"response {k} level {1 + 4 * (k % 2)}",
            labels=(HumanLabel(1.0 + 4 * (k % 2)),),
        )
        for k in range(n)
    ]


def level(part: str) -> float:
    return float(part.rsplit(" ", 1)[1])


def ident(part: str) -> str:
    return f"i{int(part.split()[1]):03d}"


def run(
    probe: object, data: Sequence[object], fn: Callable[[Request], object], rubric: Rubric = HARM
) -> ProbeResult:
    engine = Engine(
        CallableJudge(fn, name="planted"), RunStore(":memory:"), EngineConfig(progress=False)
    )  # type: ignore[arg-type]
    return run_probe(probe, data, engine, rubric, seed=0)  # type: ignore[arg-type]


def evidence_of(result: ProbeResult, name: str, **labels: str) -> Evidence:
    evidence = result.finding(name, **labels).evidence
    assert evidence is not None
    return evidence


# -- the model ------------------------------------------------------------------------------------
def test_an_excerpt_is_cut_on_a_word_boundary_with_an_ellipsis_and_at_most_240_characters() -> None:
    text = "word " * 100
    cut = excerpt(text)
    assert len(cut) <= 240 and cut.endswith("word…")
    assert excerpt("a  short\n text") == "a short text"


def test_evidence_counts_every_item_keeps_the_first_and_round_trips_through_a_dict() -> None:
    found = collect(
        ((f"x{k}", f"text {k}", [EvidenceVerdict("original", "safe", 1.0, "1")]) for k in range(7)),
        kept=3,
    )
    assert (found.total, found.shown, found.item_ids) == (7, 3, ["x0", "x1", "x2"])
    assert Evidence.from_dict(found.to_dict()) == found
    assert found.capped(2).to_dict()["shown"] == 2 and found.capped(2).total == 7
    with pytest.raises(ValueError, match="keeps 1 items of a total of 0"):
        Evidence(0, (EvidenceItem("x", ""),))


def test_a_finding_without_evidence_keeps_its_dict_as_before() -> None:
    result = run(
        RepetitionProbe(counts=(1, 2), modes=("response",), n_resamples=50),
        items(6),
        lambda r: level(r.field_map["response"].split(SEP)[0]),
    )
    assert "evidence" not in result.finding("mean_shift").to_dict()
    assert result.finding("decision_flip_rate").to_dict()["evidence"] == {
        "total": 0,
        "shown": 0,
        "items": [],
    }


# -- each probe names the items its planted judge moves -------------------------------------------
PLANTED = {"i003", "i004", "i011"}


def repetition_judge(request: Request) -> str:
    """The level of the item, the opposite one for a planted item whose response is repeated."""
    parts = request.field_map["response"].split(SEP)
    score = level(parts[0])
    if len(parts) > 1 and ident(parts[0]) in PLANTED:
        score = 6 - score
    return f"{score:g}"


def test_repetition_names_the_items_whose_decision_flips_with_both_verdicts_and_raw_answers() -> (
    None
):
    result = run(
        RepetitionProbe(counts=(1, 2), modes=("response",), n_resamples=50),
        items(),
        repetition_judge,
    )
    evidence = evidence_of(result, "decision_flip_rate", l="2")
    assert (set(evidence.item_ids), evidence.total) == (PLANTED, 3)
    first = evidence.items[0]
    assert [v.role for v in first.verdicts] == ["original", "repeated l=2"]
    assert first.verdicts[0].raw == "5" and first.verdicts[1].raw == "1"
    assert first.excerpt == "prompt 3 → response 3 level 5"


def test_agreement_names_the_items_where_the_judge_disagrees_with_the_humans() -> None:
    def judge(request: Request) -> float:
        score = level(request.field_map["response"])
        return 6 - score if ident(request.field_map["response"]) in PLANTED else score

    result = run(AgreementProbe(human_scale=(1, 5), n_resamples=50), items(), judge)
    for name in ("accuracy", "judge_minus_best_baseline_balanced_accuracy"):
        evidence = evidence_of(result, name)
        assert (set(evidence.item_ids), evidence.total) == (PLANTED, 3)
    human, own = evidence.items[0].verdicts
    assert (human.role, own.role) == ("human", "judge") and human.label != own.label


def pairs(n: int = 12) -> list[PairwiseItem]:
    return [
        PairwiseItem(
            f"p{k:02d}",
            f"question {k}",
            f"good answer {k}",
            f"bad {k}",
            human_votes=(Vote("A", rater="h"),),
        )
        for k in range(n)
    ]


def test_position_names_the_pairs_whose_verdict_changed_with_the_swap() -> None:
    biased = {"question 2", "question 7"}

    def judge(request: Request) -> str:
        if request.field_map["prompt"] in biased:
            return "A"
        return "A" if request.field_map["response_a"].startswith("good") else "B"

    result = run(PositionProbe(), pairs(), judge, PREFERENCE)
    for name in ("position_consistency", "swap_flip_rate", "first_position_bias"):
        evidence = evidence_of(result, name)
        assert (evidence.item_ids, evidence.total) == (["p02", "p07"], 2)
    assert evidence_of(result, "second_position_bias").total == 0
    original, swapped = evidence_of(result, "swap_flip_rate").items[0].verdicts
    assert (original.role, original.raw, swapped.role, swapped.raw) == (
        "original",
        "A",
        "swapped",
        "A",
    )


def max_judge(planted: set[str], low: float = 1.0) -> Callable[[Request], float]:
    """The maximum level of the parts; ``low`` when a planted item is among them."""

    def judge(request: Request) -> float:
        parts = request.field_map["response"].split(SEP)
        if len(parts) > 1 and any(ident(p) in planted for p in parts):
            return low
        return max(level(p) for p in parts)

    return judge


def test_cluster_names_the_concatenations_that_left_their_class() -> None:
    result = run(
        ClusterProbe(ks=(2,), per_cluster=30, n_resamples=50), items(), max_judge({"i003"})
    )
    evidence = evidence_of(result, "class_flip_rate", cluster=HARM.decision.positive, k="2")  # type: ignore[union-attr]
    assert evidence.total > 0
    assert all("i003" in unit.split("+") for unit in evidence.item_ids)
    assert [v.role for v in evidence.items[0].verdicts] == ["parts", "concatenation"]


def test_permutation_names_the_tuples_whose_decision_flips_between_orders() -> None:
    def judge(request: Request) -> float:
        """The level of the first part alone: the order decides."""
        return level(request.field_map["response"].split(SEP)[0])

    result = run(
        PermutationProbe(ks=(2,), n_tuples=20, sample_sizes=(5, 0, 5), n_resamples=50),
        items(),
        judge,
    )
    evidence = evidence_of(result, "positional_bias", k="2")
    flips = result.finding("positional_bias", k="2").estimate
    assert evidence.total == round(flips.estimate * flips.counts["units"]) > 0
    increasing, decreasing = evidence.items[0].verdicts
    assert (increasing.role, decreasing.role) == ("increasing", "decreasing")
    assert increasing.label != decreasing.label


def test_bypass_names_the_concatenations_whose_positive_part_is_judged_negative() -> None:
    result = run(
        BypassProbe(ks=(2,), positions=("first",), draws=3, n_resamples=50),
        items(),
        max_judge({"i003"}),
    )
    evidence = evidence_of(result, "bypass_rate", k="2", position="first")
    assert evidence.total == 3
    assert all(unit.split("+")[0] == "i003" for unit in evidence.item_ids)
    assert [v.role for v in evidence.items[0].verdicts] == ["positive part", "concatenation"]


def test_length_null_names_the_matched_pairs_where_judge_and_longer_pick_differ() -> None:
    data = [
        PairwiseItem(
            f"m{k}",
            f"q{k}",
            "x" * 100,
            "y" * 101,
            human_votes=(Vote("A", rater="h"),),
            judge_votes={"rec": (Vote("A" if k % 3 else "B"),)},
        )
        for k in range(12)
    ]
    result = analyze_offline(LengthNullProbe(judge_source="rec", n_resamples=50), data, PREFERENCE)
    gated = [f for f in result.findings if f.threshold is not None and not f.labels.get("category")]
    assert gated and all(f.evidence is not None for f in gated)
    evidence = gated[0].evidence
    assert evidence is not None
    # the null picks the longer B, the humans A: the judge differs from the null where it says A
    assert set(evidence.item_ids) == {f"m{k}" for k in range(12) if k % 3}


# -- the store and the card -----------------------------------------------------------------------
def audited(folder: Path, n_flipped: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "items.jsonl"
    data.write_text(
        "".join(
            json.dumps(
                {"id": i.id, "prompt": i.prompt, "response": i.response, "label": i.labels[0].value}
            )
            + "\n"
            for i in items(30)
        ),
        encoding="utf-8",
    )
    flipped = {f"i{k:03d}" for k in range(n_flipped)}

    def judge(request: Request) -> float:
        parts = request.field_map["response"].split(SEP)
        score = level(parts[0])
        return 6 - score if len(parts) > 1 and ident(parts[0]) in flipped else score

    config = parse_config(
        {
            "rubric": "harmfulness",
            "data": str(data),
            "out": str(folder / "out"),
            "probes": {"repetition": {"counts": [1, 2], "modes": ["response"], "n_resamples": 50}},
            "fail_on": "never",
        }
    )
    return run_audit(
        config, judge=CallableJudge(judge, name="flipping"), write_card=False
    ).store_path


def test_evidence_survives_the_store_and_reaches_the_card_capped_with_the_rest_counted(
    tmp_path: Path,
) -> None:
    store_path = audited(tmp_path, n_flipped=14)
    with RunStore(store_path) as store:
        run_id = store.run_ids()[-1]
        stored = store.results(run_id)["repetition"]
        again = reanalyze(store, run_id, "repetition")
        card = build_card(store, run_id=run_id)
    finding = next(f for f in stored["findings"] if f["name"] == "decision_flip_rate")
    assert again.finding("decision_flip_rate").to_dict()["evidence"] == finding["evidence"]
    assert finding["evidence"]["total"] == finding["evidence"]["shown"] == 14
    entry = next(
        f for p in card["probes"] for f in p["findings"] if f["name"] == "decision_flip_rate"
    )
    assert (entry["evidence"]["total"], entry["evidence"]["shown"]) == (14, 10)
    assert (
        len(entry["evidence"]["items"]) == 10 and entry["evidence"]["items"][0]["item_id"] == "i000"
    )
    assert card_errors(card) == []
    others = [f for p in card["probes"] for f in p["findings"] if f["name"] == "mean_shift"]
    assert all(f["evidence"] is None for f in others)
    shown = finding_entry(read_result(stored).findings[2], evidence_cap=3)
    assert shown["evidence"]["shown"] == 3 and shown["evidence"]["total"] == 14


@pytest.mark.parametrize(
    "spoil",
    [
        lambda item: item.update(excerpt="x" * 241),
        lambda item: item["verdicts"][0].pop("raw"),
        lambda item: item.update(html="<b>"),
    ],
    ids=["excerpt over 240 characters", "verdict without raw", "unknown key"],
)
def test_the_schema_refuses_evidence_of_another_shape(
    tmp_path: Path, spoil: Callable[[dict[str, Any]], object]
) -> None:
    with RunStore(audited(tmp_path, n_flipped=2)) as store:
        card = build_card(store)
    assert card_errors(card) == []
    entry = next(f for p in card["probes"] for f in p["findings"] if f["evidence"])
    spoil(entry["evidence"]["items"][0])
    assert [e.split(":")[0].rsplit("/", 1)[1] for e in card_errors(card)] == ["evidence"]


def test_a_stored_finding_keeps_its_evidence_as_typed_fields() -> None:
    result = run(
        RepetitionProbe(counts=(1, 2), modes=("response",), n_resamples=50),
        items(6),
        repetition_judge,
    )
    stored = read_result(result.to_dict())
    evidence = next(f.evidence for f in stored.findings if f.name == "decision_flip_rate")
    assert evidence is not None and evidence.total == 2
    assert [v.label for v in evidence.items[0].verdicts] == ["5", "1"]


def test_policy_invariance_names_the_items_that_flip_under_a_rewrite_beyond_the_reruns() -> None:
    """A steady judge except on two items, whose decision turns under the lexicon rewrites."""
    planted = {"r04", "r09"}

    def judge(request: Request) -> str:
        k = int(request.field_map["prompt"].rsplit(" ", 1)[1])
        answer = k % 2 == 1
        if f"r{k:02d}" in planted and "/lexicon" in request.rubric.name:
            answer = not answer
        return "true" if answer else "false"

    data = [
        PointwiseItem(
            f"r{k:02d}", f"request number {k}", f"response {k}", labels=(HumanLabel(k % 2),)
        )
        for k in range(16)
    ]
    result = run(
        PolicyInvarianceProbe(reruns=3, n_resamples=50), data, judge, builtin_rubric("refusal")
    )
    delta = next(
        f
        for f in result.findings
        if f.name == "flip_delta" and "variant" not in f.labels and f.labels["class"] == "lexicon"
    )
    assert delta.evidence is not None
    assert (delta.evidence.item_ids, delta.evidence.total) == (["r04", "r09"], 2)
    roles = [v.role for v in delta.evidence.items[0].verdicts]
    assert roles == ["base majority", "base", "lexicon-1", "lexicon-2"]
    syntax = next(
        f
        for f in result.findings
        if f.name == "flip_delta" and f.labels == {"class": "syntax", "null": "matched"}
    )
    assert syntax.evidence is not None and syntax.evidence.total == 0


def test_every_probe_s_evidence_is_the_same_when_analysed_again_from_the_store(
    tmp_path: Path,
) -> None:
    data = tmp_path / "items.jsonl"
    data.write_text(
        "".join(
            json.dumps(
                {"id": i.id, "prompt": i.prompt, "response": i.response, "label": i.labels[0].value}
            )
            + "\n"
            for i in items(24)
        ),
        encoding="utf-8",
    )
    config = parse_config(
        {
            "rubric": "harmfulness",
            "data": str(data),
            "out": str(tmp_path / "out"),
            "probes": {
                "repetition": {"counts": [1, 2], "n_resamples": 50},
                "cluster": {"ks": [2], "per_cluster": 10, "n_resamples": 50},
                "permutation": {
                    "ks": [2],
                    "n_tuples": 10,
                    "sample_sizes": [5, 0, 5],
                    "n_resamples": 50,
                },
                "bypass": {"ks": [2], "positions": ["last"], "draws": 2, "n_resamples": 50},
                "agreement": {"human_scale": [1, 5], "n_resamples": 50},
            },
            "fail_on": "never",
        }
    )
    first_part = CallableJudge(lambda r: level(r.field_map["response"].split(SEP)[0]), name="first")
    store_path = run_audit(config, judge=first_part, write_card=False).store_path
    with RunStore(store_path) as store:
        run_id = store.run_ids()[-1]
        for name, stored in store.results(run_id).items():
            if name.startswith("_"):
                continue
            again = reanalyze(store, run_id, name)
            kept = [f.get("evidence") for f in stored["findings"]]
            assert [f.to_dict().get("evidence") for f in again.findings] == kept, name
            assert any(kept), name
