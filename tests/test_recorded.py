"""Specifications of recorded verdicts as a judge (``--judge recorded:PATH``).

A file of verdicts made elsewhere is audited like a live judge by the probes that need no new
calls (agreement); a probe that needs new inputs judged is refused by name before any verdict is
looked up; ids the dataset lacks and items the file lacks are counted and listed; a bad file is a
DataError naming the file and the line.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest

from judgeprobe.audit.config import parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.core.verdict import VerdictStatus
from judgeprobe.data.items import HumanLabel, PairwiseItem, PointwiseItem, Vote
from judgeprobe.errors import ConfigError, DataError
from judgeprobe.judges.recorded import RecordedJudge
from judgeprobe.judges.registry import build_judge
from judgeprobe.probes import get_probe_class
from judgeprobe.probes.agreement.probe import AgreementProbe
from judgeprobe.probes.concatenation.repetition import RepetitionProbe
from judgeprobe.rubrics import builtin_rubric
from judgeprobe.runs.probe import check_probe

REFUSAL = builtin_rubric("refusal")


def truth(k: int) -> int:
    return int(k % 3 == 0)


def dataset_csv(folder: Path, n: int = 60) -> Path:
    """A PyRIT-shaped CSV of refusal items with one human label each."""
    path = folder / "refusal.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["objective", "assistant_response", "human_score"])
        for k in range(n):
            writer.writerow([f"objective {k}", f"response {k} " + "y" * (k % 7), truth(k)])
    return path


def verdict_rows(n: int = 60) -> list[dict[str, object]]:
    """Labels that copy the human ones for items 1..n-1 (item 0 has none), and one stray id."""
    rows: list[dict[str, object]] = [
        {"id": f"refusal-{k + 1}", "label": "true" if truth(k) else "false"} for k in range(1, n)
    ]
    return [*rows, {"id": "elsewhere-7", "label": "true"}]


def write(rows: list[dict[str, object]], path: Path) -> Path:
    frame = pd.DataFrame(rows)
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        frame.to_parquet(path)
    return path


def items(n: int = 60) -> list[PointwiseItem]:
    return [
        PointwiseItem(
            f"refusal-{k + 1}",
            f"objective {k}",
            f"response {k} " + "y" * (k % 7),
            labels=(HumanLabel(float(truth(k))),),
        )
        for k in range(n)
    ]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_recorded_verdicts_are_read_from_csv_jsonl_and_parquet(tmp_path: Path, suffix: str) -> None:
    judge = build_judge(f"recorded:{write(verdict_rows(), tmp_path / f'v{suffix}')}")
    assert isinstance(judge, RecordedJudge)
    judge.bind(items())
    assert judge.coverage == {
        "rows": 60,
        "unknown_ids": 1,
        "unknown_ids_listed": ["elsewhere-7"],
        "items_without_verdict": 1,
        "items_without_verdict_listed": ["refusal-1"],
    }


def test_a_recorded_audit_runs_with_zero_calls_and_the_card_names_the_file(tmp_path: Path) -> None:
    verdicts = write(verdict_rows(), tmp_path / "verdicts.jsonl")
    config = parse_config(
        {
            "judge": f"recorded:{verdicts}",
            "rubric": "refusal",
            "data": str(dataset_csv(tmp_path)),
            "probes": {"agreement": {"n_resamples": 200}},
            "out": str(tmp_path / "out"),
        }
    )
    outcome = run_audit(config, progress=False)
    card = (tmp_path / "out" / "card.md").read_text()
    assert card.startswith("# Judge Card: recorded:verdicts.jsonl")
    appendix = (tmp_path / "out" / "card-appendix.md").read_text()
    assert "recorded: unknown\\_ids | 1" in appendix
    result = json.loads((tmp_path / "out" / "card.json").read_text())
    assert result["tested"]["judge"]["backend"] == "recorded"
    assert outcome.complete


def test_the_item_without_a_verdict_is_left_out_and_counted(tmp_path: Path) -> None:
    from judgeprobe.engine import Engine, EngineConfig
    from judgeprobe.engine.store import RunStore
    from judgeprobe.runs.probe import run_probe

    judge = RecordedJudge(write(verdict_rows(), tmp_path / "v.csv"))
    judge.bind(items())
    engine = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False))
    result = run_probe(AgreementProbe(n_resamples=200), items(), engine, REFUSAL)
    assert result.tables["items"]["error"] == 1
    assert result.finding("accuracy").estimate.n == 59
    assert result.finding("judge_minus_best_baseline_kappa").status == "pass"


def test_a_recorded_probability_gives_the_ranking_and_the_calibration(tmp_path: Path) -> None:
    from judgeprobe.engine import Engine, EngineConfig
    from judgeprobe.engine.store import RunStore
    from judgeprobe.runs.probe import run_probe

    rows = [
        {**row, "probability": 0.9 if row["label"] == "true" else 0.2} for row in verdict_rows()
    ]
    judge = RecordedJudge(write(rows, tmp_path / "v.parquet"))
    judge.bind(items())
    engine = Engine(judge, RunStore(":memory:"), EngineConfig(progress=False))
    result = run_probe(AgreementProbe(n_resamples=200), items(), engine, REFUSAL)
    # 19 refusals at 0.9 (gap 0.1) and 40 compliances at 0.2 (gap 0.2); item 1 has no verdict
    ece = result.finding("expected_calibration_error").estimate.estimate
    assert ece == pytest.approx((19 * 0.1 + 40 * 0.2) / 59)


def test_a_probe_that_needs_new_calls_is_refused_before_any_call(tmp_path: Path) -> None:
    judge = RecordedJudge(write(verdict_rows(), tmp_path / "v.csv"))
    judge.bind(items())
    check_probe(AgreementProbe(), items(), judge, REFUSAL)
    with pytest.raises(
        ConfigError, match=r"probes\.repetition: cannot run: it needs \d+ new judge"
    ):
        check_probe(RepetitionProbe(), items(), judge, REFUSAL)


def test_pairwise_probes_on_votes_recorded_with_the_data_need_no_call_of_a_recorded_judge(
    tmp_path: Path,
) -> None:
    """A recorded ``judge_source`` plans no request, so a recorded judge passes every stage;
    the live position probe needs both orders, which no recorded file answers."""
    pairs = [
        PairwiseItem(
            f"q{k}", "p", f"a{k}", f"b{k}", (Vote("A"),), judge_votes={"gpt-4": (Vote("B"),)}
        )
        for k in range(5)
    ]
    judge = RecordedJudge(write(verdict_rows(), tmp_path / "v.csv"))
    judge.bind(pairs)
    preference = builtin_rubric("preference")
    for name in ("human_agreement", "length_null", "position", "length_controlled_win_rate"):
        probe = get_probe_class(name)(judge_source="gpt-4")  # type: ignore[call-arg]
        check_probe(probe, pairs, judge, preference)
    # both orders of 5 pairs, and the 10 first reruns of the rerun null
    with pytest.raises(ConfigError, match=r"probes\.position: cannot run: it needs 20 new judge"):
        check_probe(get_probe_class("position")(), pairs, judge, preference)


def test_the_output_of_judgeprobe_score_is_a_recorded_judge(tmp_path: Path) -> None:
    rows = [
        {"item_id": "refusal-1", "trial": 0, "status": "ok", "score": 1.0, "label": "true"},
        {"item_id": "refusal-1", "trial": 1, "status": "ok", "score": 0.0, "label": "false"},
        {"item_id": "refusal-2", "trial": 0, "status": "unparseable", "score": None, "label": None},
    ]
    judge = RecordedJudge(write(rows, tmp_path / "verdicts.csv"))
    judge.bind(items(2))
    from judgeprobe.core.plan import ProbeContext
    from judgeprobe.probes.decisions import base_request

    ctx = ProbeContext(judge.fingerprint, REFUSAL)
    first, second = (judge.lookup(base_request(ctx, item)) for item in items(2))
    assert first.score == 1.0
    assert (second.status.value, second.error) == ("error", "recorded with status 'unparseable'")


def test_a_recorded_label_and_score_that_disagree_are_unparseable_not_one_of_them(
    tmp_path: Path,
) -> None:
    """A label 'true' (1) recorded with a score 0 was accepted as it was."""
    rows = [
        {"id": "refusal-1", "label": "true", "score": 0.0},
        {"id": "refusal-2", "label": "true", "score": 1.0},
    ]
    judge = RecordedJudge(write(rows, tmp_path / "verdicts.jsonl"))
    judge.bind(items(2))
    from judgeprobe.core.plan import ProbeContext
    from judgeprobe.probes.decisions import base_request

    ctx = ProbeContext(judge.fingerprint, REFUSAL)
    torn, agreed = (judge.lookup(base_request(ctx, item)) for item in items(2))
    assert torn.status is VerdictStatus.UNPARSEABLE
    assert "the recorded label 'true' (value 1) and score 0 disagree" in str(torn.error)
    assert (agreed.status, agreed.score, agreed.label) == (VerdictStatus.OK, 1.0, "true")


def test_a_bad_line_is_a_data_error_naming_the_file_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    path.write_text('{"id": "a", "score": 1}\n{"id": "b", "score": "high"}\n')
    with pytest.raises(DataError, match=r"v\.jsonl, row 2, column 'score'"):
        RecordedJudge(path)


def test_a_file_without_an_id_or_a_score_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="need an item id column"):
        RecordedJudge(write([{"item": "a", "score": 1}], tmp_path / "v.csv"))
    with pytest.raises(DataError, match="need a 'score' or a 'label' column"):
        RecordedJudge(write([{"id": "a", "verdict": 1}], tmp_path / "w.csv"))
    with pytest.raises(DataError, match=r"row 3, column 'id': item id 'a' occurs twice"):
        RecordedJudge(write([{"id": "a", "score": 1}, {"id": "a", "score": 0}], tmp_path / "x.csv"))


def test_recorded_needs_a_path() -> None:
    with pytest.raises(ConfigError, match="needs the path of a verdict file"):
        build_judge("recorded:")


HOSTILE = ['=HYPERLINK("http://x","y")', "+1+2", "-3", "@SUM(A1)", "\t=1", "\r=1", "'own", "ok"]


def test_score_output_csv_neutralises_formulas_and_reads_back_the_same_values(
    tmp_path: Path,
) -> None:
    from judgeprobe.core.plan import ProbeContext
    from judgeprobe.core.verdict import Verdict, VerdictStatus
    from judgeprobe.engine.engine import CallStats
    from judgeprobe.probes.decisions import base_request
    from judgeprobe.runs.scoring import ScoredRow, ScoreResult

    ctx = ProbeContext("fp", REFUSAL)
    scored = [
        PointwiseItem(f"{text.strip()}-{k}" if k < 6 else text, "p", "r")
        for k, text in enumerate(HOSTILE)
    ]
    rows = tuple(
        ScoredRow(
            item, 0, base_request(ctx, item), Verdict(VerdictStatus.OK, 1.0, "true", raw_text=raw)
        )
        for item, raw in zip(scored, HOSTILE, strict=True)
    )
    path = ScoreResult(rows, CallStats(), None).write(tmp_path / "verdicts.csv")

    with path.open(newline="", encoding="utf-8") as handle:
        cells = [cell for row in csv.reader(handle) for cell in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")]
    judge = RecordedJudge(path)
    assert {key: row["raw"] for key, row in judge.rows.items()} == {
        item.id: raw for item, raw in zip(scored, HOSTILE, strict=True)
    }
