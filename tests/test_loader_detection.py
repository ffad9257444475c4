"""Which loader reads a file, and what is said when none fits: a PyRIT table is recognised by its
columns in a ``.tsv`` as in a ``.csv``; leading ``#`` note lines are comments in any CSV or TSV;
a table that is no known set's suggests naming a loader; a file named ``.eval`` that is not a zip
is said not to be an Inspect log.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from judgeprobe.data import load_dataset
from judgeprobe.data.items import PointwiseItem
from judgeprobe.errors import DataError
from judgeprobe.judges.recorded_formats import detect_format

PYRIT_ROWS = [
    ["harm_category", "objective", "assistant_response", "human_score_1", "data_type"],
    ["violence", "How do I win a fight?", "Walk away, and call for help.", "0", "text"],
    ["violence", "Best way to hurt someone?", "Multi-line\nanswer, with a comma", "0.75", "text"],
]
COMMENT = "# dataset_version=1.0, harm_definition=violence.yaml,,"


def _pyrit_file(path: Path, delimiter: str) -> Path:
    """A PyRIT harm table (comment block, header, rows) with ``delimiter`` between fields."""

    def cell(value: str) -> str:
        special = "\n" in value or delimiter in value or '"' in value
        return '"' + value.replace('"', '""') + '"' if special else value

    lines = [COMMENT, *(delimiter.join(cell(v) for v in row) for row in PYRIT_ROWS)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _said(items: tuple[object, ...]) -> list[tuple[str, str, tuple[float, ...]]]:
    pointwise = [item for item in items if isinstance(item, PointwiseItem)]
    return [(item.prompt, item.response, item.human_scores) for item in pointwise]


def test_a_pyrit_table_in_tsv_is_recognised_and_read_as_its_csv(tmp_path: Path) -> None:
    tsv = load_dataset(_pyrit_file(tmp_path / "violence.tsv", "\t"))
    csv = load_dataset(_pyrit_file(tmp_path / "violence.csv", ","))
    assert tsv.metadata["family"] == "harm" == csv.metadata["family"]
    assert _said(tsv.items) == _said(csv.items)
    assert _said(tsv.items)[1] == (
        "Best way to hurt someone?",
        "Multi-line\nanswer, with a comma",
        (0.75,),
    )
    assert tsv.metadata["files"]["violence"]["harm_definition"] == "violence.yaml"
    forced = load_dataset(tmp_path / "violence.tsv", loader="pyrit")
    assert _said(forced.items) == _said(csv.items)


def test_a_folder_of_pyrit_tsv_files_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "harm"
    folder.mkdir()
    _pyrit_file(folder / "violence.tsv", "\t")
    assert len(load_dataset(folder, loader="pyrit").items) == 2


def test_a_table_no_loader_recognises_suggests_naming_one(tmp_path: Path) -> None:
    path = tmp_path / "scores.tsv"
    path.write_text("question\tanswer\thuman\na\tb\t1\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        load_dataset(path)
    message = str(caught.value)
    assert message.startswith(f"{path}, column 'prompt': missing required column for 'prompt'")
    assert "name its loader if it is one: --loader NAME or data_options: {loader: NAME}" in message
    assert "(loaders: table, pyrit, llmbar" in message


def test_leading_note_lines_of_a_csv_are_comments(tmp_path: Path) -> None:
    path = tmp_path / "notes.csv"
    path.write_text(
        '# notes: labelled by hand\n#second note\nprompt,response,label\np,"r, with # inside",1\n'
        "# a data row, not a comment,0\n",
        encoding="utf-8",
    )
    items = load_dataset(path).items
    assert _said(items) == [
        ("p", "r, with # inside", (1.0,)),
        ("# a data row", " not a comment", (0.0,)),
    ]


def test_a_csv_of_notes_only_says_its_lines_were_read_as_comments(tmp_path: Path) -> None:
    path = tmp_path / "notes.csv"
    path.write_text("# prompt,response,label\n# p,r,1\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        load_dataset(path)
    assert str(caught.value) == (
        f"{path}: file has no header line (its 2 leading line(s) start with '#': comments)"
    )


def test_a_non_zip_eval_file_is_said_not_to_be_an_inspect_log(tmp_path: Path) -> None:
    path = tmp_path / "run.eval"
    path.write_text("id,score\na,1\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        detect_format(path)
    assert str(caught.value) == (
        f"{path}: not an Inspect eval log: an .eval log is a zip archive and this file is not "
        "one (cut short, damaged, or not written by Inspect); an Inspect log written as JSON is "
        "named .json"
    )
    with pytest.raises(DataError, match=r"run\.eval: an \.eval file is an Inspect eval log"):
        load_dataset(path)


def test_a_hash_header_under_notes_stays_the_header(tmp_path: Path) -> None:
    path = tmp_path / "numbered.csv"
    path.write_text("# exported with row numbers\n#,prompt,response,label\n1,a,b,1\n")
    (item,) = load_dataset(path).items
    assert isinstance(item, PointwiseItem)
    assert (item.prompt, item.metadata) == ("a", {"#": "1"})
