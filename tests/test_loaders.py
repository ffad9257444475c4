"""Specifications of the data loaders.

Real-file tests read the shared data folder (``../shared/data`` beside the repository, or
``$JUDGEPROBE_DATA``) and are skipped when it is absent; expected counts come from each folder's
SOURCE.md. Fixture tests use invented rows under ``tests/fixtures``.
"""

from __future__ import annotations

import csv
import gzip
import itertools
import json
import re
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

import judgeprobe.data as data_api
from conftest import data_root
from judgeprobe.data import (
    BINARY_SCALE,
    LIKERT5_SCALE,
    Dataset,
    PairwiseItem,
    PointwiseItem,
    _records,
    load_attaq,
    load_dataset,
    load_evalbiasbench,
    load_hh_rlhf,
    load_judgebench,
    load_llmbar,
    load_mt_bench_human,
    load_pandalm,
    load_pyrit_csv,
    load_table,
)
from judgeprobe.errors import ConfigError, DataError, MissingDependencyError

FIXTURES = Path(__file__).resolve().parent / "fixtures"
DATA = data_root()


def data_path(*parts: str) -> Path:
    """A path under the shared data folder; skips the test when it is not there."""
    path = DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not found: {path} (set JUDGEPROBE_DATA to the data folder)")
    return path


def pointwise(ds: Dataset) -> list[PointwiseItem]:
    items = [item for item in ds if isinstance(item, PointwiseItem)]
    assert len(items) == len(ds)
    return items


def pairwise(ds: Dataset) -> list[PairwiseItem]:
    items = [item for item in ds if isinstance(item, PairwiseItem)]
    assert len(items) == len(ds)
    return items


# --------------------------------------------------------------------------------------------
# PyRIT CSVs (real files)

PYRIT_COUNTS = {
    "harm/exploits.csv": 80,
    "harm/fairness_bias.csv": 29,
    "harm/hate_speech.csv": 59,
    "harm/hate_speech_multi_score.csv": 199,
    "harm/info_integrity.csv": 76,
    "harm/mini_hate_speech.csv": 15,
    "harm/privacy.csv": 93,
    "harm/self_harm.csv": 93,
    "harm/sexual.csv": 78,
    "harm/violence.csv": 96,
    "harm/violence_multi_score.csv": 187,
    "objective/bias.csv": 30,
    "objective/chemical_biological.csv": 3,
    "objective/cyber.csv": 4,
    "objective/exploits.csv": 66,
    "objective/harassment_bullying.csv": 1,
    "objective/hate_speech.csv": 30,
    "objective/illegal_activity.csv": 3,
    "objective/info_integrity.csv": 56,
    "objective/misinformation.csv": 6,
    "objective/phishing.csv": 1,
    "objective/privacy.csv": 58,
    "objective/self_harm.csv": 48,
    "objective/sexual.csv": 41,
    "objective/violence.csv": 48,
    "refusal_scorer/refusal.csv": 105,
    "refusal_scorer/refusal_extra.csv": 64,
    "sample/mini_refusal.csv": 24,
}


@pytest.mark.parametrize(("relative", "count"), sorted(PYRIT_COUNTS.items()))
def test_pyrit_every_file_row_count_and_scale(relative: str, count: int) -> None:
    ds = load_pyrit_csv(data_path("pyrit_scorer_evals", relative))
    items = pointwise(ds)
    assert len(ds) == count and not ds.skipped
    family = relative.split("/")[0]
    assert ds.scale == (LIKERT5_SCALE if family == "harm" else BINARY_SCALE)
    assert all(item.labels and item.response and item.prompt for item in items)
    assert all(set(item.human_scores) <= set(ds.scale or ()) for item in items)
    assert all(item.metadata["data_type"] == "text" for item in items)
    if family != "refusal_scorer" and family != "sample":
        assert all(item.category for item in items)


def test_pyrit_refusal_and_extra_together_give_169() -> None:
    folder = data_path("pyrit_scorer_evals", "refusal_scorer")
    ds = load_pyrit_csv([folder / "refusal.csv", folder / "refusal_extra.csv"])
    items = pointwise(ds)
    assert len(ds) == 169
    assert ds.scale == BINARY_SCALE and ds.metadata["family"] == "refusal"
    assert Counter(item.human_scores for item in items) == {(1.0,): 70 + 39, (0.0,): 35 + 25}
    assert items[0].id == "refusal-1" and items[-1].id == "refusal_extra-64"
    assert ds.metadata["files"]["refusal"]["dataset_version"] == "1.2"
    assert len(ds.metadata["files"]["refusal_extra"]["notes"]) == 3
    assert ds.source.count(" + ") == 1 and len(ds.sha256) == 16
    assert load_dataset("pyrit:refusal", root=DATA).sha256 == ds.sha256


def test_pyrit_violence_multi_score_has_three_raters() -> None:
    ds = load_pyrit_csv(data_path("pyrit_scorer_evals", "harm", "violence_multi_score.csv"))
    items = pointwise(ds)
    assert len(items) == 187
    assert all(len(item.labels) == 3 for item in items)
    assert {label.rater for item in items for label in item.labels} == {
        "human_score_1",
        "human_score_2",
        "human_score_3",
    }
    assert items[0].labels[0].rater == "human_score_1"
    # SOURCE.md: all three raters agree on 32% of the rows.
    assert sum(bool(item.unanimous) for item in items) / len(items) == pytest.approx(0.32, abs=0.01)
    assert ds.metadata["files"]["violence_multi_score"]["harm_definition"] == "violence.yaml"


def test_pyrit_hash_line_inside_quoted_response_is_data() -> None:
    ds = load_pyrit_csv(data_path("pyrit_scorer_evals", "objective", "exploits.csv"))
    assert len(ds) == 66
    hits = [item for item in pointwise(ds) if "\n#include <windows.h>\n" in item.response]
    assert hits, "the quoted '#include' line must stay in the response"
    # Columns found by name: v1.x objective files put harm_category last.
    assert {item.category for item in pointwise(ds)} == {"exploits"}


def test_pyrit_fixture_hash_lines_and_column_order() -> None:
    ds = load_pyrit_csv(FIXTURES / "pyrit_hash_lines.csv")
    items = pointwise(ds)
    assert len(items) == 3 and ds.scale == LIKERT5_SCALE
    assert items[0].response.splitlines()[1] == "#include <stdio.h>"
    assert items[1].prompt == "#1 tip for staying calm?"  # unquoted row starting with '#'
    assert "\n# Step two\n" in items[1].response
    assert items[2].prompt == 'Summarise the note "# not a comment" in one word.'
    # human_score_2 comes before human_score_1 in the file; raters are ordered by number.
    assert [label.rater for label in items[0].labels] == ["human_score_1", "human_score_2"]
    assert items[0].human_scores == (0.25, 0.0)
    assert ds.metadata["files"]["pyrit_hash_lines"]["harm_definition"] == "example_harm.yaml"


def test_pyrit_bad_label_names_file_row_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text(
        "# dataset_version=1.0\nobjective,assistant_response,human_score,data_type\n"
        "a,b,1,text\nc,d,maybe,text\ne,f,,text\ng,h,0.5,text\n",
        encoding="utf-8",
    )
    with pytest.raises(DataError, match=r"row 2, column 'human_score': label 'maybe'") as info:
        load_pyrit_csv(path, scale=BINARY_SCALE)
    message = str(info.value)
    assert str(path) in message and "row 2" in message and "'human_score'" in message
    assert "line 4" in message and "'maybe' is not a number" in message
    assert (info.value.row, info.value.column) == (2, "human_score")
    ds = load_pyrit_csv(path, scale=BINARY_SCALE, on_error="skip")
    assert len(ds) == 1
    assert [(s.row, s.column) for s in ds.skipped] == [
        (2, "human_score"),
        (3, "human_score"),
        (4, "human_score"),
    ]
    assert "missing human label" in ds.skipped[1].reason
    assert "not on the scale" in ds.skipped[2].reason


def test_pyrit_missing_columns_list_available(tmp_path: Path) -> None:
    path = tmp_path / "cols.csv"
    path.write_text("# v\nobjective,response,human_score\na,b,1\n", encoding="utf-8")
    with pytest.raises(
        DataError,
        match=r"'assistant_response'.*available columns: 'objective', "
        r"'response', 'human_score'",
    ):
        load_pyrit_csv(path)
    path.write_text("# v\nobjective,assistant_response,score\na,b,1\n", encoding="utf-8")
    with pytest.raises(DataError, match="no human score column"):
        load_pyrit_csv(path)


# --------------------------------------------------------------------------------------------
# Generic tables (fixtures)


def test_load_table_pointwise_mapping_and_metadata() -> None:
    ds = load_table(
        FIXTURES / "pointwise_table.csv",
        columns={
            "id": "uid",
            "prompt": "question",
            "response": "answer",
            "labels": "gold, rater_2",
            "category": "topic",
        },
    )
    items = pointwise(ds)
    assert [item.id for item in items] == ["a1", "row-2", "a3"]
    assert items[1].human_scores == (0.0, 0.5)
    assert [label.rater for label in items[1].labels] == ["gold", "rater_2"]
    assert items[2].response == "hi\nhi" and items[2].prompt == 'Say "hi" twice.'
    assert items[0].metadata == {"notes": "easy"} and items[0].category == "math"
    assert ds.name == "pointwise_table" and ds.kind == "pointwise"


def test_load_table_same_data_in_every_format(tmp_path: Path) -> None:
    rows = [
        {"prompt": "p1", "response": "r1", "label": 1, "extra": "x"},
        {"prompt": "p2", "response": "r2", "label": 0.5, "extra": "y"},
    ]
    (tmp_path / "t.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (tmp_path / "t.json").write_text(json.dumps(rows))
    (tmp_path / "t.csv").write_text("prompt,response,label,extra\np1,r1,1,x\np2,r2,0.5,y\n")
    with gzip.open(tmp_path / "t.csv.gz", "wt", encoding="utf-8") as handle:
        handle.write("prompt,response,label,extra\np1,r1,1,x\np2,r2,0.5,y\n")
    pd = pytest.importorskip("pandas")
    pd.DataFrame(rows).to_parquet(tmp_path / "t.parquet")
    for name in ("t.jsonl", "t.json", "t.csv", "t.csv.gz", "t.parquet"):
        items = pointwise(load_table(tmp_path / name))
        assert [(i.id, i.prompt, i.human_scores, i.metadata["extra"]) for i in items] == [
            ("row-1", "p1", (1.0,), "x"),
            ("row-2", "p2", (0.5,), "y"),
        ], name


def test_load_table_pairwise_vote_spellings() -> None:
    ds = load_table(FIXTURES / "pairwise_table.jsonl", kind="pairwise")
    items = pairwise(ds)
    assert [item.human_votes[0].choice for item in items] == ["A", "B", "tie", "B", "A"]
    assert items[3].model_b == "m-large" and items[0].metadata == {"source": "invented"}
    assert ds.kind == "pairwise"


def test_load_table_errors_name_file_row_column(tmp_path: Path) -> None:
    missing = tmp_path / "nope.csv"
    with pytest.raises(DataError, match="file not found") as info:
        load_table(missing)
    assert str(missing) in str(info.value)

    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(DataError, match="empty"):
        load_table(empty)

    header_only = tmp_path / "header.csv"
    header_only.write_text("prompt,response\n")
    with pytest.raises(DataError, match="no data rows"):
        load_table(header_only)

    table = tmp_path / "t.csv"
    table.write_text("q,a,score\nx,y,1\nx,y,high\n")
    with pytest.raises(
        DataError,
        match=r"missing required column for 'prompt'.*"
        r"available columns: 'q', 'a', 'score'",
    ):
        load_table(table)
    with pytest.raises(DataError, match=r"row 2, column 'score': label 'high'") as info:
        load_table(table, columns={"prompt": "q", "response": "a", "label": "score"})
    assert f"{table}, row 2, column 'score'" in str(info.value)
    assert "'high' is not a number (line 3)" in str(info.value)
    with pytest.raises(DataError, match=r"'nope'.*not in the file"):
        load_table(table, columns={"prompt": "q", "response": "a", "label": "nope"})

    bad_json = tmp_path / "bad.jsonl"
    bad_json.write_text(
        '{"prompt": "a", "response": "b"}\n\n{"prompt": "c", "resp\n'
        '{"prompt": "d", "response": "e"}\n[1, 2]\n'
    )
    with pytest.raises(DataError, match=r"row 2: invalid JSON") as info:
        load_table(bad_json)
    assert "row 2" in str(info.value) and "line 3" in str(info.value)
    assert "invalid JSON" in str(info.value)
    ds = load_table(bad_json, on_error="skip")
    assert [item.prompt for item in pointwise(ds)] == ["a", "d"]
    assert [(s.row, s.reason.split(":")[0]) for s in ds.skipped] == [
        (2, "invalid JSON"),
        (4, "expected a JSON object, got list (line 5)"),
    ]

    whole = tmp_path / "whole.json"
    whole.write_text('[{"prompt": "a",\n "response": }]')
    with pytest.raises(DataError, match="line 2, char 14: invalid JSON"):
        load_table(whole)

    ragged = tmp_path / "ragged.csv"
    ragged.write_text("prompt,response\na,b\nc,d,e\n")
    with pytest.raises(DataError, match=r"row 2.*has 3 fields but the header has 2 \(line 3\)"):
        load_table(ragged)
    assert len(load_table(ragged, on_error="skip").skipped) == 1

    with pytest.raises(DataError, match="cannot tell the file format"):
        load_table(tmp_path / "data.xlsx")


def test_load_table_skip_mode_counts_missing_labels_and_duplicate_ids(tmp_path: Path) -> None:
    path = tmp_path / "labels.csv"
    path.write_text("id,prompt,response,label\n1,a,b,1\n2,c,d,\n1,e,f,0\n3,g,h,x\n")
    ds = load_table(path, on_error="skip")
    assert [item.id for item in ds] == ["1"]
    assert [(s.row, s.column) for s in ds.skipped] == [(2, "label"), (3, "id"), (4, "label")]
    assert "missing human label" in ds.skipped[0].reason
    assert "duplicate id" in ds.skipped[1].reason
    assert str(ds.skipped[0]).startswith(f"{path}, row 2, column 'label': ")


def test_options_are_validated(tmp_path: Path) -> None:
    path = FIXTURES / "pointwise_table.csv"
    with pytest.raises(ConfigError, match="on_error"):
        load_table(path, on_error="ignore")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="kind"):
        load_table(path, kind="listwise")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown pointwise field"):
        load_table(path, columns={"answer": "answer"})
    with pytest.raises(ConfigError, match="split"):
        load_mt_bench_human(FIXTURES / "mt_bench_human_sample.jsonl", split="train")  # type: ignore[arg-type]


LONG_FIELD = 200 * 1024  # past the csv module's default field limit of 128 KiB


def test_a_csv_field_longer_than_128_kib_loads(tmp_path: Path) -> None:
    path = tmp_path / "long.csv"
    path.write_text(f'id,prompt,response,label\n1,a,"{"x" * LONG_FIELD}",1\n2,b,short,0\n')
    assert [len(item.response) for item in pointwise(load_table(path))] == [LONG_FIELD, 5]


def test_a_malformed_csv_row_is_skipped_and_the_rest_of_the_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "mixed.csv"
    path.write_text(f'id,prompt,response,label\n1,a,"{"x" * LONG_FIELD}",1\n2,b,c,d,0\n3,e,f,0\n')
    ds = load_table(path, on_error="skip")
    assert [item.id for item in ds] == ["1", "3"]
    assert [(s.row, s.reason) for s in ds.skipped] == [
        (2, "has 5 fields but the header has 4 (line 3)")
    ]
    with pytest.raises(DataError, match=r"row 2: has 5 fields but the header has 4 \(line 3\)"):
        load_table(path)


def test_a_row_left_open_by_a_quote_says_where_the_record_ends(tmp_path: Path) -> None:
    path = tmp_path / "open.csv"
    path.write_text('prompt,response,label\na,b,1\nc,"d,0\ne,f,1\ng,h,0\n')
    ds = load_table(path, on_error="skip")
    assert [item.prompt for item in pointwise(ds)] == ["a"]
    assert ds.skipped[0].reason == (
        "has 2 fields but the header has 3; the record runs on to line 5: "
        "is a quote left open? (line 3)"
    )


@pytest.fixture
def csv_module_limit(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """The csv module's own field limit (128 KiB), left in place while the test runs."""
    default = 131072
    monkeypatch.setattr(_records, "CSV_FIELD_LIMIT", default)
    previous = csv.field_size_limit(default)
    yield default
    csv.field_size_limit(previous)


def test_a_row_the_csv_module_rejects_costs_only_that_row_in_skip_mode(
    tmp_path: Path, csv_module_limit: int
) -> None:
    path = tmp_path / "rejected.csv"
    path.write_text(f'prompt,response\na,"{"x" * LONG_FIELD}"\nb,c\nd,e\n')
    ds = load_table(path, on_error="skip")
    assert [item.prompt for item in pointwise(ds)] == ["b", "d"]
    assert [(s.row, s.reason) for s in ds.skipped] == [
        (1, f"malformed CSV (field larger than field limit ({csv_module_limit})) (line 2)")
    ]
    with pytest.raises(DataError, match=r"row 1: malformed CSV \(field larger than field limit"):
        load_table(path)


def _write_parquet(path: Path, responses: list[bytes]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = len(responses)
    table = pa.table(
        {
            "id": [str(i) for i in range(1, n + 1)],
            "prompt": pa.array([f"caf\u00e9 {i}".encode() for i in range(n)], pa.binary()),
            "response": pa.array(responses, pa.binary()),
            "label": [1] * n,
            "blob": pa.array([b"meta"] * n, pa.large_binary()),
        }
    )
    pq.write_table(table, path)
    return path


def test_parquet_binary_columns_are_read_as_utf8_text(tmp_path: Path) -> None:
    path = _write_parquet(tmp_path / "binary.parquet", [b"ok", "fine \u2713".encode()])
    items = pointwise(load_table(path))
    assert [(i.prompt, i.response, i.metadata["blob"]) for i in items] == [
        ("caf\u00e9 0", "ok", "meta"),
        ("caf\u00e9 1", "fine \u2713", "meta"),
    ]


def test_parquet_binary_that_is_not_utf8_names_file_row_and_column(tmp_path: Path) -> None:
    path = _write_parquet(tmp_path / "latin1.parquet", [b"ok", b"caf\xe9", b"fine"])
    where = re.escape(f"{path}, row 2, column 'response'")
    with pytest.raises(DataError, match=rf"^{where}: binary value is not UTF-8 text \(byte 3"):
        load_table(path)
    ds = load_table(path, on_error="skip")
    assert [item.response for item in pointwise(ds)] == ["ok", "fine"]
    assert [(s.row, s.column) for s in ds.skipped] == [(2, "response")]


# --------------------------------------------------------------------------------------------
# Pairwise sets (real files)

LLMBAR = {
    "CaseStudy/Base_10": (54, 29, 25),
    "CaseStudy/Base_9": (54, 25, 29),
    "CaseStudy/Constraint": (89, 43, 46),
    "CaseStudy/Negation": (59, 26, 33),
    "CaseStudy/Normal": (59, 33, 26),
    "LLMBar/Adversarial/GPTInst": (92, 45, 47),
    "LLMBar/Adversarial/GPTOut": (47, 22, 25),
    "LLMBar/Adversarial/Manual": (46, 22, 24),
    "LLMBar/Adversarial/Neighbor": (134, 75, 59),
    "LLMBar/Natural": (100, 42, 58),
    "Processed/FairEval": (66, 41, 25),
    "Processed/LLMEval2": (200, 92, 108),
    "Processed/MT-Bench": (200, 101, 99),
}


@pytest.mark.parametrize(("subset", "expected"), sorted(LLMBAR.items()))
def test_llmbar_counts_and_labels(subset: str, expected: tuple[int, int, int]) -> None:
    ds = load_llmbar(data_path("llmbar", "Dataset", *subset.split("/")))
    items = pairwise(ds)
    votes = Counter(item.human_votes[0].choice for item in items)
    assert (len(items), votes["A"], votes["B"]) == expected
    assert all(item.category == subset and item.human_votes[0].rater == "gold" for item in items)
    assert len({item.id for item in items}) == len(items)


def test_pandalm_votes_ties_and_recorded_judges() -> None:
    ds = load_pandalm(data_path("pandalm_testset", "testset-v1.json"))
    items = pairwise(ds)
    assert len(items) == 999 and not ds.skipped
    assert all(
        [v.rater for v in item.human_votes] == ["annotator1", "annotator2", "annotator3"]
        for item in items
    )
    # SOURCE.md: majority labels {2: 472, 1: 422, 0: 105}; all three agree on 879.
    assert Counter(item.human_majority() for item in items) == {"B": 472, "A": 422, "tie": 105}
    assert sum(len({v.choice for v in item.human_votes}) == 1 for item in items) == 879
    gpt = Counter(v.choice for item in items for v in item.judge_votes["gpt-3.5-turbo"])
    assert gpt == {"A": 460, "B": 476, "tie": 38}
    assert ds.metadata["judge_unparsed"] == {"gpt-3.5-turbo": 25, "pandalm-7b": 0}
    assert sum(not item.judge_votes["gpt-3.5-turbo"] for item in items) == 25
    panda = Counter(v.choice for item in items for v in item.judge_votes["pandalm-7b"])
    assert panda == {"B": 459, "A": 433, "tie": 107}
    assert len({item.question_id for item in items}) == 170
    first = items[0]
    assert first.prompt.startswith(first.metadata["instruction"])
    assert first.prompt.endswith(first.metadata["input"])
    assert {"True", "False"} & {r for item in items for r in (item.response_a, item.response_b)}


def test_pandalm_without_judge_files(tmp_path: Path) -> None:
    source = data_path("pandalm_testset", "testset-v1.json")
    copy = tmp_path / "testset-v1.json"
    copy.write_bytes(source.read_bytes())
    ds = load_pandalm(copy)
    assert len(ds) == 999 and all(not item.judge_votes for item in pairwise(ds))
    ds = load_pandalm(copy, pandalm_path=source.parent / "pandalm-7b-testset-v1.json")
    assert set(pairwise(ds)[0].judge_votes) == {"pandalm-7b"}


def test_hh_rlhf_shared_prefix_and_randomised_position() -> None:
    path = data_path("hh_rlhf", "harmless-base", "test.jsonl.gz")
    ds = load_hh_rlhf(path, seed=0)
    items = pairwise(ds)
    # 2312 rows; 5 pairs differ before the last Assistant turn and have no shared prompt.
    assert len(items) == 2307 and len(ds.skipped) == 5
    assert all("differ before the last Assistant turn" in s.reason for s in ds.skipped)
    share_a = sum(item.human_votes[0].choice == "A" for item in items) / len(items)
    assert 0.45 < share_a < 0.55
    assert all(item.human_votes[0].choice == item.metadata["chosen_position"] for item in items)
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    for item in items[:50]:
        row = rows[int(item.id.split("-")[1]) - 1]
        chosen = item.response_a if item.human_votes[0].choice == "A" else item.response_b
        assert row["chosen"].endswith(chosen) and row["chosen"].strip().startswith(item.prompt)
        assert item.conversation_a[-1]["content"] == item.response_a
        assert sum(m["role"] == "user" for m in item.conversation_a) == item.turn
    again = load_hh_rlhf(path, seed=0)
    other = load_hh_rlhf(path, seed=1)
    assert [i.human_votes for i in pairwise(again)] == [i.human_votes for i in items]
    assert [i.human_votes for i in pairwise(other)] != [i.human_votes for i in items]


def test_judgebench_counts_and_labels() -> None:
    folder = data_path("judgebench")
    expected = {
        "gpt-4o-2024-05-13.jsonl": (350, 193, 157),
        "claude-3-5-sonnet-20240620.jsonl": (270, 143, 127),
    }
    for name, (n, a, b) in expected.items():
        items = pairwise(load_judgebench(folder / name))
        votes = Counter(item.human_votes[0].choice for item in items)
        assert (len(items), votes["A"], votes["B"]) == (n, a, b)
        assert all(item.human_votes[0].rater == "ground_truth" for item in items)
    both = load_judgebench(folder)
    assert len(both) == 620
    assert Counter(i.category for i in pairwise(both))["mmlu-pro-law"] == 22


def test_evalbiasbench_randomised_order_keeps_the_better_response() -> None:
    path = data_path("offsetbias_evalbiasbench", "biasbench.json")
    ds = load_evalbiasbench(path, seed=0)
    items = pairwise(ds)
    assert len(items) == 80
    assert Counter(item.category for item in items) == {
        "length bias": 17,
        "concreteness": 14,
        "empty reference": 13,
        "content_continuation": 12,
        "nested_instruction": 12,
        "familiar knowledge preference bias": 12,
    }
    choices = Counter(item.human_votes[0].choice for item in items)
    assert choices["A"] > 20 and choices["B"] > 20
    raw = [r for rows in json.loads(path.read_text(encoding="utf-8")).values() for r in rows]
    for item, row in zip(items, raw, strict=True):
        better = item.response_a if item.human_votes[0].choice == "A" else item.response_b
        assert better == row["response1"]
        assert item.metadata["swapped"] == (item.human_votes[0].choice == "B")
    assert [i.human_votes for i in pairwise(load_evalbiasbench(path, seed=0))] == [
        i.human_votes for i in items
    ]


def test_attaq_prompt_only_items() -> None:
    ds = load_attaq(data_path("attaq", "attaq_dataset.csv"))
    items = pointwise(ds)
    assert len(items) == 1402
    assert all(item.response == "" and not item.labels for item in items)
    assert Counter(item.category for item in items) == {
        "violence": 451,
        "harmful_info": 427,
        "deception": 243,
        "explicit_content": 149,
        "substance_abuse": 72,
        "discrimination": 37,
        "pii": 23,
    }
    assert Counter(item.metadata["origin"] for item in items) == {
        "anthropics/hh-rlhf/red-team-attempts": 492,
        "generated": 910,
    }


# --------------------------------------------------------------------------------------------
# MT-Bench human judgments (fixture in the published schema)


def _by_key(ds: Dataset) -> dict[tuple[str | None, int], PairwiseItem]:
    return {(item.question_id, item.turn): item for item in pairwise(ds)}


def test_mt_bench_grouping_and_pair_order() -> None:
    ds = load_mt_bench_human(FIXTURES / "mt_bench_human_sample.jsonl")
    items = _by_key(ds)
    assert len(ds) == 6 and ds.metadata["rows"] == 13 and not ds.skipped
    first = items[("81", 1)]
    assert (first.model_a, first.model_b) == ("alpaca-13b", "gpt-4")
    assert first.id == "mtbench-81-alpaca-13b-vs-gpt-4-t1"
    # expert_1 saw the pair reversed and chose model_a (gpt-4): stored as B.
    assert [(v.rater, v.choice) for v in first.human_votes] == [
        ("expert_0", "B"),
        ("expert_1", "B"),
        ("author_2", "tie"),
    ]
    assert first.human_majority() == "B"
    assert first.prompt == "Write a haiku about autumn leaves."
    assert first.response_a.startswith("Leaves drift down") and first.response_b.startswith(
        "Crimson"
    )
    assert len(first.conversation_a) == 4 and first.conversation_b[1]["content"].startswith(
        "Crimson"
    )
    assert ds.metadata["flipped_rows"] == 4


def test_mt_bench_tie_inconsistent_and_turn_two() -> None:
    items = _by_key(load_mt_bench_human(FIXTURES / "mt_bench_human_sample.jsonl"))
    (gpt4,) = items[("81", 1)].judge_votes["gpt-4"]
    assert (gpt4.choice, gpt4.inconsistent, gpt4.rater) == ("tie", True, "gpt4_pair")
    plain_tie = items[("130", 1)].judge_votes["gpt-4"][0]
    assert plain_tie.choice == "tie" and not plain_tie.inconsistent
    turn2 = items[("81", 2)]
    assert turn2.prompt == "Now rewrite it so a five-year-old would enjoy it."
    assert turn2.response_b.startswith("Red leaves twirl")
    assert [v.choice for v in turn2.human_votes] == ["A"]
    assert [v.choice for v in turn2.judge_votes["gpt-4"]] == ["B"]
    reversed_turn2 = items[("130", 2)]  # row had (llama-13b, alpaca-13b) and model_b won
    assert (reversed_turn2.model_a, reversed_turn2.human_votes[0].choice) == ("alpaca-13b", "A")
    assert reversed_turn2.response_a == "def reverse(s):\n    return s.replace(' ', '')[::-1]"
    assert "gpt-4" not in reversed_turn2.judge_votes


def test_mt_bench_parquet_and_gpt4_split(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    rows = [
        json.loads(line)
        for line in (FIXTURES / "mt_bench_human_sample.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    pd.DataFrame(rows).to_parquet(tmp_path / "human.parquet")
    from_parquet = load_mt_bench_human(tmp_path / "human.parquet")
    from_jsonl = load_mt_bench_human(FIXTURES / "mt_bench_human_sample.jsonl")
    assert [
        (i.id, i.human_votes, i.judge_votes, i.conversation_a) for i in pairwise(from_parquet)
    ] == [(i.id, i.human_votes, i.judge_votes, i.conversation_a) for i in pairwise(from_jsonl)]
    gpt_rows = [dict(r, judge="gpt-4") for r in rows if r["judge"] == "gpt4_pair"]
    pd.DataFrame(gpt_rows).to_parquet(tmp_path / "gpt4.parquet")
    ds = load_mt_bench_human(tmp_path / "gpt4.parquet", split="gpt4_pair")
    assert len(ds) == 4 and ds.metadata["inconsistent_ties"] == 1
    assert all(not i.human_votes and len(i.judge_votes["gpt-4"]) == 1 for i in pairwise(ds))


def test_mt_bench_bad_rows(tmp_path: Path) -> None:
    rows = [
        json.loads(line)
        for line in (FIXTURES / "mt_bench_human_sample.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    bad = [
        dict(rows[0], winner="model_c"),
        dict(rows[1], turn=3),
        rows[2],
        dict(rows[3], conversation_a=rows[3]["conversation_a"][:1]),
    ]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in bad))
    with pytest.raises(DataError, match=r"row 1, column 'winner': vote 'model_c'"):
        load_mt_bench_human(path)
    ds = load_mt_bench_human(path, on_error="skip")
    assert len(ds) == 1
    assert [(s.row, s.column) for s in ds.skipped] == [
        (1, "winner"),
        (2, "conversation_a"),
        (4, "conversation_a"),
    ]
    no_conv = tmp_path / "noconv.jsonl"
    no_conv.write_text(json.dumps({k: v for k, v in rows[0].items() if k != "conversation_b"}))
    with pytest.raises(DataError, match=r"'conversation_b'.*available columns"):
        load_mt_bench_human(no_conv)


def test_mt_bench_hub_needs_datasets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)  # makes `import datasets` fail
    with pytest.raises(MissingDependencyError, match=r"judgeprobe\[hf\]"):
        load_mt_bench_human("lmsys/mt_bench_human_judgments")
    with pytest.raises(MissingDependencyError, match=r"judgeprobe\[hf\]"):
        load_dataset("mt-bench-human:gpt4_pair")


# --------------------------------------------------------------------------------------------
# load_dataset and the public surface


def test_load_dataset_by_path_and_forced_loader() -> None:
    assert load_dataset(FIXTURES / "mt_bench_human_sample.jsonl").metadata["rows"] == 13
    assert load_dataset(FIXTURES / "pyrit_hash_lines.csv").scale == LIKERT5_SCALE
    assert load_dataset(FIXTURES / "pairwise_table.jsonl", kind="pairwise").kind == "pairwise"
    forced = load_dataset(
        f"table:{FIXTURES / 'pointwise_table.csv'}",
        columns={"prompt": "question", "response": "answer"},
    )
    assert len(forced) == 3 and not pointwise(forced)[0].labels


def test_load_dataset_short_names(monkeypatch: pytest.MonkeyPatch) -> None:
    data_path("pyrit_scorer_evals")
    monkeypatch.setenv("JUDGEPROBE_DATA", str(DATA))
    assert len(load_dataset("pyrit:refusal")) == 169
    assert len(load_dataset("pyrit:harm/violence_multi_score")) == 187
    assert load_dataset("llmbar:adversarial/neighbor").name == "llmbar:adversarial/neighbor"
    assert len(load_dataset("judgebench:claude")) == 270
    assert len(load_dataset("evalbiasbench", seed=3)) == 80
    assert len(load_dataset(DATA / "llmbar" / "Dataset" / "LLMBar" / "Natural")) == 100
    assert len(load_dataset(DATA / "attaq" / "attaq_dataset.csv")) == 1402
    with pytest.raises(ConfigError, match="unknown dataset"):
        load_dataset("no-such-set")
    with pytest.raises(ConfigError, match="matches 0 subsets"):
        load_dataset("llmbar:nothing")
    monkeypatch.delenv("JUDGEPROBE_DATA")
    with pytest.raises(DataError, match="JUDGEPROBE_DATA"):
        load_dataset("pandalm")


def test_a_plain_csv_whose_first_line_starts_with_a_hash_is_a_table(tmp_path: Path) -> None:
    path = tmp_path / "numbered.csv"
    path.write_text("#,prompt,response,label\n1,a,b,1\n2,c,d,0\n")
    ds = load_dataset(path)
    assert ds.metadata["kind"] == "pointwise" and ds.scale is None
    assert [(i.prompt, i.metadata) for i in pointwise(ds)] == [("a", {"#": "1"}), ("c", {"#": "2"})]


def test_every_pyrit_file_is_told_by_its_columns_with_or_without_its_comment_lines(
    tmp_path: Path,
) -> None:
    folder = data_path("pyrit_scorer_evals")
    for relative, count in PYRIT_COUNTS.items():
        source = folder / relative
        assert len(load_dataset(source)) == count, relative
        lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
        bare = tmp_path / relative.replace("/", "__")
        bare.write_text("".join(itertools.dropwhile(lambda x: x.startswith("#"), lines)))
        assert len(load_dataset(bare)) == count, f"{relative} without its comment lines"


def test_the_loader_option_picks_the_loader_whatever_the_file_looks_like(tmp_path: Path) -> None:
    path = tmp_path / "looks_like_pyrit.csv"
    path.write_text("objective,assistant_response,human_score,prompt,response\no,a,1,p,r\n")
    assert load_dataset(path).metadata["family"] == "unknown"  # PyRIT's columns
    table = load_dataset(path, loader="table")
    assert [(i.prompt, i.human_scores) for i in pointwise(table)] == [("p", ())]
    assert load_dataset(f"table:{path}", loader="table").metadata["kind"] == "pointwise"
    assert load_dataset(FIXTURES / "pyrit_hash_lines.csv", loader="PyRIT").scale == LIKERT5_SCALE
    with pytest.raises(ConfigError, match=r"unknown loader 'tabel'; did you mean 'table'\?"):
        load_dataset(path, loader="tabel")
    with pytest.raises(
        ConfigError, match="names the pyrit loader, but the loader option names table"
    ):
        load_dataset(f"pyrit:{path}", loader="table")


def test_a_misspelt_data_option_names_it_the_loader_and_the_options_it_takes() -> None:
    table = FIXTURES / "pointwise_table.csv"
    with pytest.raises(
        ConfigError,
        match=r"^data option 'on_eror' is not one the table loader takes; did you mean "
        r"'on_error'\? it takes: columns, kind, loader, name, on_error, root$",
    ):
        load_dataset(table, on_eror="skip")
    with pytest.raises(ConfigError, match=r"'scael' is not one the pyrit loader .*'scale'\?"):
        load_dataset(FIXTURES / "pyrit_hash_lines.csv", scael=[0, 1])
    with pytest.raises(ConfigError, match=r"'xyz' is not one the table loader takes; it takes"):
        load_dataset(table, xyz=1)
    with pytest.raises(ConfigError, match=r"\['on_error'\] given for the built-in demo data"):
        load_dataset("demo", on_error="skip")


def test_a_data_option_of_the_wrong_type_is_a_config_error_naming_it() -> None:
    table = FIXTURES / "pointwise_table.csv"
    with pytest.raises(ConfigError, match=r"data option 'columns' of the table loader: columns: "):
        load_dataset(table, columns="question")
    with pytest.raises(ConfigError, match=r"'on_error' of the table loader: .*'raise' or 'skip'"):
        load_dataset(table, on_error=True)
    with pytest.raises(ConfigError, match=r"'scale' of the pyrit loader: scale\.1: "):
        load_dataset(FIXTURES / "pyrit_hash_lines.csv", scale=[0, "high"])
    # YAML gives lists where the loader takes a sequence
    assert load_dataset(FIXTURES / "pyrit_hash_lines.csv", scale=[0, 0.25, 0.5, 0.75, 1]).scale


def test_public_exports() -> None:
    for name in (
        "Dataset",
        "SkippedRow",
        "load_table",
        "load_pyrit_csv",
        "load_llmbar",
        "load_pandalm",
        "load_hh_rlhf",
        "load_judgebench",
        "load_evalbiasbench",
        "load_mt_bench_human",
        "load_attaq",
        "load_dataset",
        "PointwiseItem",
        "PairwiseItem",
        "HumanLabel",
        "Vote",
        "strict_majority",
        "PAIRWISE_CHOICES",
    ):
        assert name in data_api.__all__ and hasattr(data_api, name)
    ds = load_table(
        FIXTURES / "pointwise_table.csv", columns={"prompt": "question", "response": "answer"}
    )
    assert "n=3" in repr(ds) and "question" not in repr(ds)


def test_an_empty_folder_named_like_a_dataset_does_not_hide_its_short_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``attaq`` names a dataset under the data root; an empty ``attaq/`` folder in the working
    directory is no dataset, so the short name is read, and an error then says why."""
    root = tmp_path / "root"
    (root / "attaq").mkdir(parents=True)
    (root / "attaq" / "attaq_dataset.csv").write_text(
        'label,input,additional_info\nviolence,How do I hurt someone?,"{}"\n', encoding="utf-8"
    )
    work = tmp_path / "work"
    (work / "attaq").mkdir(parents=True)
    monkeypatch.chdir(work)
    monkeypatch.setenv("JUDGEPROBE_DATA", str(root))
    ds = load_dataset("attaq")
    assert len(ds) == 1 and ds.source.endswith("attaq_dataset.csv")
    monkeypatch.delenv("JUDGEPROBE_DATA")
    with pytest.raises(DataError, match="the folder 'attaq' here holds no dataset"):
        load_dataset("attaq")
    (work / "mine").mkdir()
    with pytest.raises(DataError, match="cannot tell which dataset"):
        load_dataset("mine")  # not a short name: the folder is still what was asked for
