"""Specifications of MT-Bench's released votes (no texts) and of pairwise items without texts.

Real-file tests read ``mt_bench_human_judgments/`` of the shared data folder (``../shared/data``
beside the repository, or ``$JUDGEPROBE_DATA``) and are skipped when it is absent; expected
counts come from its SOURCE.md and from an independent recount of the files with the ``csv``
module. Fixture tests write a few invented rows in the published schema.
"""

from __future__ import annotations

import csv
import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

import pytest

from conftest import data_root
from judgeprobe.core.falsifier import load_falsifier
from judgeprobe.core.plan import ProbeContext
from judgeprobe.data import PairwiseItem, Vote, item_fields, load_dataset, load_mt_bench_votes
from judgeprobe.errors import ConfigError, DataError
from judgeprobe.probes import Probe, ProbeResult
from judgeprobe.probes.pairwise.human_agreement import HumanAgreementProbe
from judgeprobe.probes.pairwise.length_control import LengthControlledWinRateProbe
from judgeprobe.probes.pairwise.length_null import LengthNullProbe
from judgeprobe.probes.pairwise.position import PositionProbe
from judgeprobe.rubrics import builtin_rubric
from judgeprobe.runs.probe import analyze_offline
from judgeprobe.transforms.swap import swap_positions

ROOT = Path(__file__).resolve().parents[1]
DATA = data_root()
FALSIFIER = ROOT / "benchmarks" / "falsifiers" / "mt_bench_votes_length_confound.yaml"
CTX = ProbeContext(judge="recorded", rubric=builtin_rubric("preference"), seed=0)


def analyzed(probe: Probe, items: Sequence[PairwiseItem]) -> ProbeResult:
    """``probe``'s result with no judge verdict (recorded votes need none)."""
    return analyze_offline(probe, items, CTX.rubric, seed=CTX.seed)


HEADER = "question_id,model_a,model_b,winner,judge,turn"


def votes_folder() -> Path:
    path = DATA / "mt_bench_human_judgments"
    if not path.is_dir():
        pytest.skip(f"shared data not found: {path} (set JUDGEPROBE_DATA to the data folder)")
    return path


def length_only(
    item_id: str, len_a: int, len_b: int, *votes: Vote, judge: str = "B"
) -> PairwiseItem:
    """A pair known only by its votes and its response lengths in words."""
    return PairwiseItem(
        item_id,
        "",
        "",
        "",
        human_votes=votes,
        judge_votes={"gpt-4": (Vote(judge),)},  # type: ignore[arg-type]
        question_id=item_id,
        lengths={"words": (len_a, len_b)},
        has_texts=False,
    )


# --------------------------------------------------------------------------------------------
# Items without texts


def test_an_item_without_texts_refuses_a_judge_request_instead_of_sending_placeholders() -> None:
    item = length_only("q1", 3, 5, Vote("A"))
    with pytest.raises(
        DataError,
        match=r"'q1' has no prompt or response texts .*in words\); a judge request needs the texts",
    ):
        item_fields(item)


def test_live_probes_on_items_without_texts_say_that_they_need_the_texts() -> None:
    items = [length_only("q1", 3, 5, Vote("A"))]
    for probe in (HumanAgreementProbe(), LengthNullProbe(unit="words"), PositionProbe()):
        with pytest.raises(DataError, match="a judge request needs the texts"):
            probe.plan(items, CTX)


def test_a_length_unit_the_data_does_not_give_is_a_config_error_naming_the_option() -> None:
    items = [length_only("q1", 3, 5, Vote("A"))]
    with pytest.raises(
        ConfigError,
        match=r"unit='chars': length unit 'chars' needs the response texts.*in \['words'\] only",
    ):
        analyzed(LengthNullProbe(judge_source="gpt-4"), items)
    with pytest.raises(
        ConfigError, match=r"compare_units=\('words', 'tokens'\): length unit 'tokens'"
    ):
        analyzed(LengthNullProbe(judge_source="gpt-4", unit="words"), items)
    with pytest.raises(ConfigError, match="unit='tokens': length unit 'tokens' needs"):
        analyzed(LengthControlledWinRateProbe(judge_source="gpt-4", unit="tokens"), items)


def test_length_null_and_bins_work_from_lengths_given_as_data() -> None:
    # B is longer in q1 and q2 (gaps 0.4 and 0.5), A in q3 (gap 0.04); humans and GPT-4 pick B
    items = [
        length_only("q1", 3, 5, Vote("B"), Vote("B")),
        length_only("q2", 5, 10, Vote("B")),
        length_only("q3", 100, 96, Vote("B")),
    ]
    probe = LengthNullProbe(judge_source="gpt-4", unit="words", compare_units=(), by=())
    result = analyzed(probe, items)
    votes = result.finding("null_human_vote_agreement", unit="words").estimate
    # four votes on three questions: fewer clusters than a bootstrap resamples, so the interval
    # is exact over the questions and n counts them
    assert (votes.estimate, votes.n) == (pytest.approx(3 / 4), 3)
    assert result.finding("null_judge_agreement", unit="words").estimate.estimate == pytest.approx(
        2 / 3
    )
    matched = result.finding("bin_null_agreement", bin="<5%").estimate
    assert (matched.estimate, matched.n) == (0.0, 1)
    assert result.tables["unit"] == "words"
    assert "given as data by the source" in result.notes[-1]


def test_length_controlled_win_rate_reads_the_given_lengths() -> None:
    items = [length_only(f"q{i}", 10, 10 + i, Vote("B")) for i in range(30)]
    probe = LengthControlledWinRateProbe(judge_source="gpt-4", unit="words", min_comparisons=2)
    result = analyzed(probe, items)
    assert result.finding("raw_win_rate", candidate="A", rater="judge").estimate.estimate == 0.0


def test_swap_exchanges_the_given_lengths() -> None:
    item = length_only("q1", 3, 5, Vote("A"))
    swapped = swap_positions(item)
    assert swapped.lengths == {"words": (5, 3)}
    assert swap_positions(swapped) == item


def test_majority_ties_drop_takes_the_majority_of_the_decisive_votes() -> None:
    # one A and two ties: counted, the majority is a tie (dropped with ties excluded);
    # dropped first, the majority of the decisive votes is A
    items = [length_only("q1", 3, 5, Vote("A"), Vote("tie"), Vote("tie"), judge="A")]
    counted = analyzed(HumanAgreementProbe(judge_source="gpt-4", by=()), items)
    dropped = analyzed(
        HumanAgreementProbe(judge_source="gpt-4", by=(), majority_ties="drop"), items
    )
    assert counted.finding("judge_human_majority_agreement").estimate.n == 0
    majority = dropped.finding("judge_human_majority_agreement").estimate
    assert (majority.estimate, majority.n) == (1.0, 1)
    with pytest.raises(ConfigError, match="majority_ties must be one of"):
        HumanAgreementProbe(majority_ties="first")  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# The loader on invented rows

HUMAN_ROWS = [
    "81,alpaca-13b,gpt-4,model_b,expert_0,1",
    "81,gpt-4,alpaca-13b,model_a,expert_1,1",
    "81,gpt-4,alpaca-13b,tie,author_0,1",
    "81,claude-v1,gpt-4,model_a,expert_0,2",
]
GPT4_ROWS = [
    "81,gpt-4,alpaca-13b,model_a,gpt4_pair,1",
    "81,gpt-4,claude-v1,tie (inconsistent),gpt4_pair,2",
    "81,alpaca-13b,claude-v1,model_b,gpt4_pair,1",
]
# [question, turn, i, j, P, Pinc, sa, sb, f, s, words of i, words of j]
KEYS = [
    [81, 1, 0, 2, 0, 0, -1, -1, -1, -1, 120, 40],
    [81, 1, 1, 2, 1, 0, -1, -1, -1, -1, 90, 40],
    [81, 2, 0, 1, 2, 1, -1, -1, -1, -1, 60, 70],
    [81, 2, 1, 2, 2, 0, -1, -1, -1, -1, 70, 30],
]


def write_votes(
    folder: Path,
    human: list[str] = HUMAN_ROWS,
    gpt4: list[str] = GPT4_ROWS,
    keys: list[list[int]] = KEYS,
) -> Path:
    folder.mkdir(exist_ok=True)
    (folder / "human.csv").write_text("\n".join([HEADER, *human]) + "\n", encoding="ascii")
    (folder / "gpt4_pair.csv").write_text("\n".join([HEADER, *gpt4]) + "\n", encoding="ascii")
    models = ["gpt-4", "claude-v1", "alpaca-13b"]
    (folder / "mtbench_votes.json").write_text(
        json.dumps({"about": "", "models": models, "voters": [], "keys": keys, "votes": []})
    )
    return folder


def by_id(items: object) -> dict[str, PairwiseItem]:
    return {item.id: item for item in items}  # type: ignore[attr-defined]


def test_unordered_units_meet_both_orders_through_the_winners_model_name(tmp_path: Path) -> None:
    ds = load_mt_bench_votes(write_votes(tmp_path / "votes"))
    items = by_id(ds.items)
    assert sorted(items) == [
        "mtbench-81-alpaca-13b-vs-claude-v1-t1",
        "mtbench-81-alpaca-13b-vs-gpt-4-t1",
        "mtbench-81-claude-v1-vs-gpt-4-t2",
    ]
    unit = items["mtbench-81-alpaca-13b-vs-gpt-4-t1"]
    # gpt-4 won in both orders: B in the unit's sorted order (alpaca-13b, gpt-4)
    assert [(v.choice, v.rater) for v in unit.human_votes] == [
        ("B", "expert_0"),
        ("B", "expert_1"),
        ("tie", "author_0"),
    ]
    assert unit.judge_votes == {"gpt-4": (Vote("B", rater="gpt4_pair"),)}
    assert unit.lengths == {"words": (40, 120)}
    assert (unit.has_texts, unit.prompt, unit.response_a, unit.question_id, unit.turn) == (
        False,
        "",
        "",
        "81",
        1,
    )
    assert unit.metadata["rows"] == {"human": [1, 2, 3], "gpt4_pair": [1]}
    inconsistent = items["mtbench-81-claude-v1-vs-gpt-4-t2"].judge_votes["gpt-4"][0]
    assert (inconsistent.choice, inconsistent.inconsistent) == ("tie", True)
    assert items["mtbench-81-alpaca-13b-vs-claude-v1-t1"].human_votes == ()
    assert ds.metadata["units_with_both"] == 2
    assert ds.metadata["human_votes_without_gpt4_vote"] == 0


def test_ordered_units_leave_human_votes_of_the_other_order_without_gpt4(tmp_path: Path) -> None:
    ds = load_mt_bench_votes(write_votes(tmp_path / "votes"), match="ordered")
    items = by_id(ds.items)
    assert len(items) == 5
    assert [v.choice for v in items["mtbench-81-gpt-4-vs-alpaca-13b-t1"].human_votes] == [
        "A",
        "tie",
    ]
    assert items["mtbench-81-alpaca-13b-vs-gpt-4-t1"].judge_votes == {}
    assert items["mtbench-81-alpaca-13b-vs-gpt-4-t1"].lengths == {"words": (40, 120)}
    assert ds.metadata["human_votes_without_gpt4_vote"] == 2
    assert ds.name == "mt-bench-votes:ordered"


def test_dialogue_lengths_count_both_answers_whatever_the_turn(tmp_path: Path) -> None:
    ds = load_mt_bench_votes(write_votes(tmp_path / "votes"), lengths="dialogue")
    # gpt-4: 120 + 60 words, alpaca-13b: 40 + 30
    assert by_id(ds.items)["mtbench-81-alpaca-13b-vs-gpt-4-t1"].lengths == {"words": (70, 180)}


def test_a_row_without_a_word_count_is_a_data_error_naming_file_row_and_column(
    tmp_path: Path,
) -> None:
    folder = write_votes(tmp_path / "votes", human=[*HUMAN_ROWS, "82,gpt-4,claude-v1,tie,x,1"])
    with pytest.raises(
        DataError,
        match=r"human\.csv, row 5, column 'model_b': mtbench_votes\.json has no word count "
        r"of claude-v1's turn-1 answer to question 82",
    ):
        load_mt_bench_votes(folder)
    skipped = load_mt_bench_votes(folder, on_error="skip")
    assert [(s.row, s.column) for s in skipped.skipped] == [(5, "model_b")]
    assert sum(len(i.human_votes) for i in skipped.items) == 4


def test_bad_winner_and_inconsistent_word_counts_are_data_errors(tmp_path: Path) -> None:
    folder = write_votes(tmp_path / "a", gpt4=["81,gpt-4,claude-v1,model_c,gpt4_pair,2"])
    with pytest.raises(DataError, match=r"gpt4_pair\.csv, row 1, column 'winner': vote 'model_c'"):
        load_mt_bench_votes(folder)
    keys = [*KEYS, [81, 1, 0, 1, 0, 0, -1, -1, -1, -1, 121, 90]]
    folder = write_votes(tmp_path / "b", keys=keys)
    with pytest.raises(
        DataError,
        match=r"column 'la': keys\[4\]: gpt-4's turn-1 answer to question 81 has 121 words "
        r"here and 120",
    ):
        load_mt_bench_votes(folder)


def test_missing_file_and_unknown_options_are_reported(tmp_path: Path) -> None:
    folder = write_votes(tmp_path / "votes")
    (folder / "gpt4_pair.csv").unlink()
    with pytest.raises(DataError, match=r"missing gpt4_pair\.csv: the folder must hold"):
        load_mt_bench_votes(folder)
    with pytest.raises(ConfigError, match="match must be one of"):
        load_mt_bench_votes(folder, match="sorted")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="lengths must be one of"):
        load_mt_bench_votes(folder, lengths="chars")  # type: ignore[arg-type]


def test_registry_finds_the_votes_by_short_name_and_by_path(tmp_path: Path) -> None:
    folder = write_votes(tmp_path / "mt_bench_human_judgments")
    assert len(load_dataset("mt-bench-votes", root=tmp_path)) == 3
    assert load_dataset("mt-bench-votes:ordered", root=tmp_path).metadata["match"] == "ordered"
    assert len(load_dataset(folder)) == 3
    assert len(load_dataset(folder / "mtbench_votes.json", match="ordered")) == 5
    with pytest.raises(ConfigError, match="unknown MT-Bench votes matching 'sorted'"):
        load_dataset("mt-bench-votes:sorted", root=tmp_path)


# --------------------------------------------------------------------------------------------
# The released votes (real files)


def recount(
    folder: Path,
) -> tuple[list[dict[str, str]], list[dict[str, str]], dict[tuple[int, int, str], int]]:
    """The two CSVs and the word count per (question, turn, model), read with the csv module."""
    with open(folder / "human.csv", newline="") as handle:
        human = list(csv.DictReader(handle))
    with open(folder / "gpt4_pair.csv", newline="") as handle:
        gpt4 = list(csv.DictReader(handle))
    data = json.loads((folder / "mtbench_votes.json").read_text())
    words = {}
    for q, t, i, j, *_, la, lb in data["keys"]:
        words[(q, t, data["models"][i])] = la
        words[(q, t, data["models"][j])] = lb
    return human, gpt4, words


def test_released_votes_load_as_units_with_rater_ids_ties_and_word_lengths() -> None:
    ds = load_mt_bench_votes(votes_folder())
    items = by_id(ds.items)
    assert (len(items), ds.metadata["units_with_human_votes"], ds.metadata["units_with_both"]) == (
        2400,
        1814,
        1814,
    )
    human = [v for i in items.values() for v in i.human_votes]
    assert len(human) == 3355
    assert Counter(v.choice for v in human)["tie"] == 780
    raters = {v.rater for v in human}
    assert len(raters) == 65
    assert sum(r.startswith("author_") for r in raters if r) == 7
    gpt4 = Counter(
        "tie (inconsistent)" if v.inconsistent else v.choice
        for i in items.values()
        for v in i.judge_votes["gpt-4"]
    )
    assert (gpt4["tie"], gpt4["tie (inconsistent)"], sum(gpt4.values())) == (220, 380, 2400)
    assert items["mtbench-81-gpt-4-vs-vicuna-13b-v1.2-t1"].lengths == {"words": (540, 411)}
    assert items["mtbench-127-gpt-4-vs-llama-13b-t1"].lengths["words"][1] == 0
    assert ds.metadata["raters_voting_twice_on_a_unit"] == [
        "mtbench-128-claude-v1-vs-gpt-3.5-turbo-t1: author_0"
    ]


def test_the_posts_ordered_join_gives_86_3_percent_on_798_units() -> None:
    ds = load_mt_bench_votes(votes_folder(), match="ordered")
    assert ds.metadata["units_with_both"] == 1232
    probe = HumanAgreementProbe(judge_source="gpt-4", majority_ties="drop", by=())
    est = analyzed(probe, ds.items).finding("judge_human_majority_agreement").estimate
    assert est.n == 798
    assert round(est.estimate, 3) == 0.863
    assert est.estimate * est.n == pytest.approx(689)


def test_the_default_matching_keeps_the_votes_the_ordered_join_drops() -> None:
    folder = votes_folder()
    ordered = load_mt_bench_votes(folder, match="ordered")
    unordered = load_mt_bench_votes(folder)
    dropped = ordered.metadata["human_votes_without_gpt4_vote"]
    human, gpt4, _ = recount(folder)
    gpt4_order = {(r["question_id"], r["model_a"], r["model_b"], r["turn"]) for r in gpt4}
    joined = sum(
        (r["question_id"], r["model_a"], r["model_b"], r["turn"]) in gpt4_order for r in human
    )
    assert dropped == len(human) - joined
    assert unordered.metadata["human_votes_without_gpt4_vote"] == 0
    probe = HumanAgreementProbe(judge_source="gpt-4", by=())
    est = analyzed(probe, unordered.items).finding("judge_human_majority_agreement").estimate
    assert est.n == 1070
    assert est.estimate * est.n == pytest.approx(947)
    assert est.ci.low < est.estimate < est.ci.high


@pytest.mark.parametrize(("scope", "expected_share"), [("turn", None), ("dialogue", 0.664)])
def test_length_null_by_words_matches_an_independent_recount(
    scope: str, expected_share: float | None
) -> None:
    folder = votes_folder()
    human, gpt4, words = recount(folder)

    def length(row: dict[str, str], model: str) -> int:
        q, t = int(row["question_id"]), int(row["turn"])
        turns = (1, 2) if scope == "dialogue" else (t,)
        return sum(words[(q, one, model)] for one in turns)

    def hits(rows: list[dict[str, str]]) -> tuple[int, int]:
        agree = n = 0
        for row in rows:
            a, b = length(row, row["model_a"]), length(row, row["model_b"])
            if a == b or "tie" in row["winner"]:
                continue
            n += 1
            agree += row["winner"] == ("model_a" if a > b else "model_b")
        return agree, n

    ds = load_mt_bench_votes(folder, lengths=scope)  # type: ignore[arg-type]
    probe = LengthNullProbe(
        judge_source="gpt-4", unit="words", compare_units=(), on_equal="tie", by=()
    )
    result = analyzed(probe, ds.items)
    for name, rows in (("null_human_vote_agreement", human), ("null_judge_agreement", gpt4)):
        est = result.finding(name, unit="words").estimate
        agree, n = hits(rows)
        assert (est.n, est.estimate) == (n, pytest.approx(agree / n))
    if expected_share is not None:  # the post's word-count figure
        est = result.finding("null_human_vote_agreement", unit="words").estimate
        assert round(est.estimate, 3) == expected_share


@pytest.mark.parametrize(
    ("match", "majority_ties", "lengths", "compared", "outcome"),
    [
        ("ordered", "drop", "dialogue", 798, "refuted"),  # the post's reading, in words
        ("ordered", "drop", "turn", 798, "inconclusive"),
        ("unordered", "count", "turn", 1070, "inconclusive"),  # the defaults
    ],
)
def test_the_declared_falsifier_on_the_released_votes(
    match: str, majority_ties: str, lengths: str, compared: int, outcome: str
) -> None:
    ds = load_mt_bench_votes(votes_folder(), match=match, lengths=lengths)  # type: ignore[arg-type]
    probe = LengthNullProbe(
        judge_source="gpt-4",
        unit="words",
        compare_units=(),
        on_equal="tie",
        majority_ties=majority_ties,  # type: ignore[arg-type]
        falsifier=load_falsifier(FALSIFIER),
        by=(),
    )
    result = analyzed(probe, ds.items)
    partition = ("<10%", "10-30%", ">30%")
    assert sum(result.finding("bin_judge_agreement", bin=b).estimate.n for b in partition) == (
        compared
    )
    assert result.tables["falsifier"]["outcome"] == outcome
    assert result.notes[-1].startswith(f"Falsifier {load_falsifier(FALSIFIER).hash}")


def test_position_probe_reads_gpt4s_swap_protocol_without_texts() -> None:
    ds = load_mt_bench_votes(votes_folder())
    result = analyzed(PositionProbe(judge_source="gpt-4", by=()), ds.items)
    est = result.finding("position_consistency").estimate
    assert (est.n, est.estimate) == (2400, pytest.approx(1 - 380 / 2400))


def test_rows_are_grouped_the_way_source_md_counts_them() -> None:
    human, _, _ = recount(votes_folder())
    both_orders: dict[tuple[str, ...], set[tuple[str, str]]] = defaultdict(set)
    for r in human:
        pair = tuple(sorted((r["model_a"], r["model_b"])))
        both_orders[(r["question_id"], r["turn"], *pair)].add((r["model_a"], r["model_b"]))
    assert len(both_orders) == 1814
    assert sum(len(orders) == 2 for orders in both_orders.values()) == 582
