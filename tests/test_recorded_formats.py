"""Specifications of the verdict formats a recorded judge reads, and of recorded pairwise judges.

An Inspect eval log, a promptfoo results file and PyRIT scores end in the same verdicts as a
CSV of ids and labels; ``p_<label>`` columns are read back as the judge's label distribution (so
``judgeprobe score -o`` then ``--judge recorded:`` reproduces the live audit with no call); a file
of pairwise votes and ``recorded:dataset:NAME`` audit the pairwise probes like the deprecated
``judge_source``; the card names the recorded judge; bad input is counted or a DataError.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from conftest import data_root
from judgeprobe._cli.main import app
from judgeprobe.audit.config import parse_config
from judgeprobe.audit.run import run_audit
from judgeprobe.core.request import Request
from judgeprobe.data.items import HumanLabel, PointwiseItem
from judgeprobe.engine.store import RunStore
from judgeprobe.errors import ConfigError, DataError
from judgeprobe.judges.recorded import RecordedJudge
from judgeprobe.judges.registry import build_judge
from judgeprobe.rubrics import builtin_rubric

REFUSAL = builtin_rubric("refusal")
DATA = data_root()


def truth(k: int) -> int:
    return int(k % 3 == 0)


def items(n: int = 30) -> list[PointwiseItem]:
    return [
        PointwiseItem(
            f"refusal-{k + 1}", f"objective {k}", f"response {k}", labels=(HumanLabel(truth(k)),)
        )
        for k in range(n)
    ]


def dataset_csv(folder: Path, n: int = 30) -> Path:
    """A PyRIT-shaped CSV of the refusal items of :func:`items` (ids refusal-1..n)."""
    path = folder / "refusal.csv"
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["objective", "assistant_response", "human_score"])
        for k in range(n):
            writer.writerow([f"objective {k}", f"response {k}", truth(k)])
    return path


def verdicts(judge: RecordedJudge, n: int = 30) -> list[tuple[str, float | None, str]]:
    judge.bind(items(n))
    out = []
    for item in items(n):
        verdict = judge.lookup(
            Request.make(item.id, REFUSAL, {"prompt": item.prompt, "response": item.response})
        )
        out.append((verdict.status.value, verdict.score, verdict.raw_text))
    return out


# -- Inspect -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def inspect_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real eval log: a task of 4 samples, the mock model, two scorers."""
    pytest.importorskip("inspect_ai")
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import includes, match
    from inspect_ai.solver import generate

    def output(text: str) -> ModelOutput:
        out = ModelOutput.from_content(model="mockllm", content=text)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tokenizer
        return out

    answers = ["true", "false", "false", "true"]
    model = get_model("mockllm/model", custom_outputs=[output(a) for a in answers])
    samples = [
        Sample(input=f"objective {k}", target="true", id=f"refusal-{k + 1}") for k in range(4)
    ]
    task = Task(dataset=samples, solver=generate(), scorer=[includes(), match()])
    folder = tmp_path_factory.mktemp("inspect")
    (log,) = inspect_eval(task, model=model, log_dir=str(folder), display="none")
    assert log.status == "success"
    return Path(log.location)


def test_an_inspect_log_is_read_with_the_scorer_named(inspect_log: Path) -> None:
    judge = build_judge(f"recorded:{inspect_log}", scorer="match")
    assert isinstance(judge, RecordedJudge) and judge.format == "inspect"
    # Inspect's C / I are 1 / 0; the scorer's explanation is the raw answer
    assert verdicts(judge)[:4] == [
        ("ok", 1.0, "true"),
        ("ok", 0.0, "false"),
        ("ok", 0.0, "false"),
        ("ok", 1.0, "true"),
    ]
    assert judge.coverage["rows"] == 4 and judge.coverage["items_without_verdict"] == 26
    # the same log in Inspect's JSON format, written by inspect_ai itself, reads the same
    from inspect_ai.log import read_eval_log, write_eval_log

    as_json = inspect_log.with_suffix(".json")
    write_eval_log(read_eval_log(str(inspect_log)), str(as_json), format="json")
    again = build_judge(f"recorded:{as_json}", scorer="match")
    assert isinstance(again, RecordedJudge) and again.format == "inspect"
    assert verdicts(again)[:4] == verdicts(judge)[:4]


def test_an_inspect_log_with_several_scorers_needs_one_named(inspect_log: Path) -> None:
    with pytest.raises(
        DataError, match=r"\.eval: the log has 2 scorers \(includes, match\); choose"
    ):
        build_judge(f"recorded:{inspect_log}")
    with pytest.raises(
        DataError, match=r"no scorer 'exact' in the log; its scorers: includes, match"
    ):
        build_judge(f"recorded:inspect:{inspect_log}", scorer="exact")


# -- promptfoo -----------------------------------------------------------------------------------
def promptfoo_results(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """promptfoo's documented output shape (``promptfoo eval -o results.json``), version 3."""
    return {
        "evalId": "eval-test",
        "results": {
            "version": 3,
            "timestamp": "2026-01-01T00:00:00Z",
            "prompts": [],
            "results": entries,
            "stats": {},
        },
        "config": {},
    }


def promptfoo_entry(item_id: str, score: float | None, reason: str = "") -> dict[str, Any]:
    grading = None if score is None else {"pass": score >= 0.5, "score": score, "reason": reason}
    return {
        "provider": {"id": "openai:gpt-4.1-mini"},
        "vars": {"id": item_id, "objective": "o"},
        "response": {"output": "..."},
        "success": bool(score and score >= 0.5),
        "score": score if score is not None else 0,
        "gradingResult": grading,
        **({"error": "provider timed out"} if score is None else {}),
    }


def test_a_promptfoo_results_file_gives_the_grading_scores(tmp_path: Path) -> None:
    entries = [
        promptfoo_entry("refusal-1", 1.0, "declines"),
        promptfoo_entry("refusal-2", 0.0, "complies"),
    ]
    entries += [promptfoo_entry("refusal-3", None), promptfoo_entry("elsewhere", 1.0)]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(promptfoo_results(entries)))
    judge = build_judge(f"recorded:{path}")
    assert isinstance(judge, RecordedJudge) and judge.format == "promptfoo"
    assert verdicts(judge, 4) == [
        ("ok", 1.0, "declines"),
        ("ok", 0.0, "complies"),
        ("error", None, ""),
        ("error", None, ""),
    ]
    assert judge.coverage["unknown_ids_listed"] == ["elsewhere"]
    assert judge.coverage["items_without_verdict_listed"] == ["refusal-4"]


def test_a_results_file_written_by_promptfoo_itself_is_read() -> None:
    """``fixtures/promptfoo-results.json`` is what ``promptfoo eval -c promptfoo-config.yaml -o
    results.json`` (promptfoo 0.121, its ``echo`` provider, ``contains`` assertions) wrote."""
    path = Path(__file__).parent / "fixtures" / "promptfoo-results.json"
    judge = build_judge(f"recorded:{path}")
    assert isinstance(judge, RecordedJudge) and judge.format == "promptfoo"
    data = [PointwiseItem(f"r{k}", "p", f"response {k}") for k in (1, 2, 3)]
    judge.bind(data)
    looked_up = [
        judge.lookup(Request.make(item.id, REFUSAL, {"prompt": "p", "response": item.response}))
        for item in data
    ]
    assert [(v.status.value, v.score) for v in looked_up] == [("ok", 1.0), ("ok", 0.0), ("ok", 1.0)]
    assert looked_up[1].raw_text == 'Expected output to contain "cannot"'


def test_promptfoo_ids_come_from_the_var_named(tmp_path: Path) -> None:
    entry = {**promptfoo_entry("x", 1.0), "vars": {"case": "refusal-2"}}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(promptfoo_results([entry])))
    with pytest.raises(
        DataError, match=r"results\.json, row 1: results\.results entry has no var 'id'"
    ):
        build_judge(f"recorded:{path}")
    judge = build_judge(f"recorded:{path}", id_var="case")
    assert isinstance(judge, RecordedJudge) and set(judge.rows) == {"refusal-2"}


# -- PyRIT ---------------------------------------------------------------------------------------
def pyrit_scores(tmp_path: Path, suffix: str) -> Path:
    """Scores built by PyRIT itself, serialised with its own ``model_dump``."""
    pytest.importorskip("pyrit")
    from pyrit.models import Score

    scores = [
        Score(
            score_value="true",
            score_type="true_false",
            score_rationale="declines",
            score_metadata={"item": "refusal-1"},
        ),
        Score(
            score_value="false",
            score_type="true_false",
            score_rationale="answers",
            score_metadata={"item": "refusal-2"},
        ),
        Score(
            score_value="0.75",
            score_type="float_scale",
            score_rationale="mostly",
            score_metadata={"item": "refusal-3"},
        ),
    ]
    records = [score.model_dump(mode="json") for score in scores]
    path = tmp_path / f"scores{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    else:
        with path.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(records[0]))
            writer.writeheader()
            writer.writerows(
                {**r, "score_metadata": json.dumps(r["score_metadata"])} for r in records
            )
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_pyrit_scores_map_true_false_to_the_rubric_labels(tmp_path: Path, suffix: str) -> None:
    path = pyrit_scores(tmp_path, suffix)
    with pytest.raises(
        DataError, match=r"no item id column 'item_id' \(choose it with the judge option id_field"
    ):
        build_judge(f"recorded:{path}")
    judge = build_judge(f"recorded:{path}", id_field="score_metadata.item")
    assert isinstance(judge, RecordedJudge) and judge.format == "pyrit"
    assert verdicts(judge, 3) == [
        ("ok", 1.0, "declines"),
        ("ok", 0.0, "answers"),
        ("ok", 0.75, "mostly"),
    ]


def test_a_pyrit_score_of_the_wrong_type_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "scores.jsonl"
    rows = [{"item_id": "refusal-1", "score_value": "true", "score_type": "true_false"}]
    rows += [{"item_id": "refusal-2", "score_value": "maybe", "score_type": "true_false"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(
        DataError, match=r"scores\.jsonl, row 2, column 'score_value': score_value 'maybe'"
    ):
        build_judge(f"recorded:{path}")


def test_a_json_file_of_no_known_shape_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.json"
    path.write_text(json.dumps({"verdicts": []}))
    with pytest.raises(
        DataError, match=r"verdicts\.json: a JSON verdict file must be an Inspect eval log"
    ):
        build_judge(f"recorded:{path}")
    with pytest.raises(ConfigError, match=r"option\(s\) scorer do not apply to this format"):
        build_judge(f"recorded:{dataset_csv(tmp_path)}", scorer="match")


# -- probabilities: `judgeprobe score -o` read back ----------------------------------------------
JUDGE_WITH_DISTRIBUTION = """
from judgeprobe.core.verdict import Verdict


def judge(request):
    k = int(request.field_map["response"].split()[-1])
    p = 0.8 if k % 3 == 0 else 0.3
    p = 1 - p if k % 5 == 0 else p
    label = "true" if p > 0.5 else "false"
    return Verdict.scored(
        float(label == "true"),
        label=label,
        distribution={"true": p, "false": 1 - p},
        raw_text=label,
    )
"""


def test_score_output_read_back_gives_the_live_agreement_with_no_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "dist_judge.py").write_text(JUDGE_WITH_DISTRIBUTION)
    monkeypatch.syspath_prepend(str(tmp_path))
    data = dataset_csv(tmp_path)
    scored = tmp_path / "scored.csv"
    args = [
        "score",
        "--judge",
        "python:dist_judge:judge",
        "--rubric",
        "refusal",
        "--data",
        str(data),
    ]
    done = CliRunner().invoke(app, [*args, "-o", str(scored)])
    assert done.exit_code == 0, done.output
    results, calls = {}, {}
    for name, judge in (("live", "python:dist_judge:judge"), ("recorded", f"recorded:{scored}")):
        config = {
            "judge": judge,
            "rubric": "refusal",
            "data": str(data),
            "out": str(tmp_path / name),
        }
        config["probes"] = {"agreement": {"n_resamples": 200}}
        outcome = run_audit(parse_config(config), progress=False, write_card=False)
        results[name] = {
            f.name: (f.estimate, f.status) for f in outcome.results["agreement"].findings
        }
        calls[name] = outcome.engine_totals["called"]
    assert results["recorded"] == results["live"]
    assert calls == {"live": 30, "recorded": 0}
    # the label distribution came back: the calibration and the ranking are assessed
    assert results["recorded"]["expected_calibration_error"][0].estimate == pytest.approx(
        0.36
    )  # (8 * 0.2 + 2 * 0.8 + 4 * 0.7 + 16 * 0.3) / 30
    assert results["recorded"]["roc_auc"][0].estimate == pytest.approx(0.8)  # 8 of 10 above all


# -- pairwise: a file of votes, the dataset's own votes, the deprecated judge_source ----------
def pandalm() -> Path:
    path = DATA / "pandalm_testset" / "testset-v1.json"
    if not path.exists():
        pytest.skip(f"dataset not found: {path} (set JUDGEPROBE_DATA)")
    return path


def pairwise_audit(tmp_path: Path, name: str, judge: str, **params: Any) -> Any:
    config = {
        "judge": judge,
        "rubric": "preference",
        "data": str(pandalm()),
        "limit": 300,
        "probes": {"human_agreement": {"n_resamples": 200, **params}},
        "out": str(tmp_path / name),
    }
    return run_audit(parse_config(config), progress=False, write_card=False)


def findings(outcome: Any) -> dict[str, Any]:
    return {f.name: (f.estimate, f.status) for f in outcome.results["human_agreement"].findings}


def test_a_file_of_pairwise_votes_audits_like_the_dataset_votes_and_judge_source(
    tmp_path: Path,
) -> None:
    from judgeprobe.data import load_dataset

    items = load_dataset(str(pandalm())).items[:300]
    rows = [
        {"id": item.id, "winner": item.judge_votes["pandalm-7b"][0].choice}
        for item in items
        if item.judge_votes.get("pandalm-7b")
    ]
    votes = tmp_path / "pandalm-7b.csv"
    with votes.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["id", "winner"])
        writer.writeheader()
        writer.writerows([*rows[1:], {"id": "not-in-the-data", "winner": "A"}])
    partial = build_judge(f"recorded:{votes}")
    assert isinstance(partial, RecordedJudge)
    partial.bind(items)
    assert partial.coverage["unknown_ids_listed"] == ["not-in-the-data"]
    assert partial.coverage["items_without_verdict_listed"] == [items[0].id]
    with votes.open("a", newline="") as handle:
        csv.DictWriter(handle, fieldnames=["id", "winner"]).writerow(rows[0])
    from_file = pairwise_audit(tmp_path, "file", f"recorded:{votes}")
    dataset = pairwise_audit(tmp_path, "dataset", "recorded:dataset:pandalm-7b")
    with pytest.warns(
        FutureWarning,
        match=r"judge_source 'pandalm-7b' is deprecated; .* --judge recorded:dataset:pandalm-7b",
    ):
        alias = pairwise_audit(tmp_path, "alias", "profanity", judge_source="pandalm-7b")
    assert findings(from_file) == findings(dataset) == findings(alias)
    # the deprecated parameter makes the audit's judge the recorded source, never the unused one
    with RunStore(alias.store_path) as store:
        assert [d["name"] for d in store.judges().values()] == ["recorded:dataset:pandalm-7b"]
    assert from_file.engine_totals["called"] == dataset.engine_totals["called"] == 0


def test_judge_source_next_to_a_recorded_judge_is_refused(tmp_path: Path) -> None:
    with (
        pytest.raises(
            ConfigError,
            match=r"probes\.human_agreement: judge_source 'gpt-3\.5-turbo' "
            r"and the judge 'recorded:dataset:pandalm-7b' name two judges",
        ),
        pytest.warns(FutureWarning),
    ):
        pairwise_audit(
            tmp_path, "both", "recorded:dataset:pandalm-7b", judge_source="gpt-3.5-turbo"
        )
    with pytest.raises(
        ConfigError,
        match=r"recorded:dataset:gpt-5: no item of the data has votes "
        r"of that judge; its recorded judges: 'gpt-3\.5-turbo', 'pandalm-7b'",
    ):
        pairwise_audit(tmp_path, "unknown", "recorded:dataset:gpt-5")
    with pytest.raises(ConfigError, match=r"this audit's data holds pointwise items"):
        build_judge("recorded:dataset:gpt-4").bind(items())  # type: ignore[attr-defined]


# -- the card names the recorded judge -------------------------------------------------------------
def test_the_card_names_the_recorded_file_its_format_and_rows(tmp_path: Path) -> None:
    path = pyrit_scores(tmp_path, ".jsonl")
    config = {
        "judge": f"recorded:{path}",
        "judge_options": {"id_field": "score_metadata.item"},
        "rubric": "refusal",
        "data": str(dataset_csv(tmp_path)),
        "probes": {"agreement": {"n_resamples": 200}},
        "out": str(tmp_path / "out"),
    }
    run_audit(parse_config(config), progress=False)
    card = json.loads((tmp_path / "out" / "card.json").read_text())
    assert card["title"] == "Judge Card: recorded:scores.jsonl"
    judge = card["tested"]["judge"]
    assert (judge["model"], judge["backend"]) == ("recorded:scores.jsonl", "recorded")
    assert judge["fingerprint"] == RecordedJudge(path, id_field="score_metadata.item").fingerprint
    assert {k: judge["description"][k] for k in ("format", "file")} == {
        "format": "pyrit",
        "file": "scores.jsonl",
    }
    assert (
        (tmp_path / "out" / "card.md")
        .read_text()
        .startswith("# Judge Card: recorded:scores.jsonl\n")
    )
    markdown = (tmp_path / "out" / "card-appendix.md").read_text()
    for row in (
        "| model | recorded:scores.jsonl |",
        "| recorded: format | pyrit |",
        "| recorded: file | scores.jsonl |",
        "| recorded: rows | 3 |",
        "| recorded: items\\_without\\_verdict | 27 |",
    ):
        assert row in markdown
