"""``pyrit:*`` names without a data root: the installed pyrit package's own CSV files.

A user who installed ``judgeprobe[pyrit]`` has PyRIT's scorer-evaluation sets inside the package;
with no data root given they are read from there, the card names the package and its version,
and a data root, when given, still wins.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from conftest import data_root
from judgeprobe.data import pyrit_package
from judgeprobe.data.registry import DATA_ENV, load_dataset
from judgeprobe.errors import ConfigError, DataError

pytest.importorskip("pyrit", reason="the optional extra judgeprobe[pyrit] is not installed")

VERSION = metadata.version("pyrit")


def _without_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DATA_ENV, raising=False)


def test_a_pyrit_name_without_a_data_root_reads_the_package_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without_root(monkeypatch)
    dataset = load_dataset("pyrit:harm/hate_speech")
    assert dataset.source == (
        f"pyrit {VERSION} package: pyrit/datasets/scorer_evals/harm/hate_speech.csv"
    )
    assert dataset.metadata["pyrit_version"] == VERSION
    assert len(dataset) > 20 and dataset.scale == (0.0, 0.25, 0.5, 0.75, 1.0)
    assert all(item.labels for item in dataset.items)


def test_the_refusal_set_joins_the_package_s_two_refusal_files(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without_root(monkeypatch)
    dataset = load_dataset("pyrit:refusal")
    assert dataset.source.count("refusal_scorer/") == 2
    assert dataset.metadata["family"] == "refusal"


@pytest.mark.skipif(
    not (data_root() / "pyrit_scorer_evals").is_dir(), reason="no shared data folder"
)
def test_a_data_root_still_wins_over_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    root = data_root()  # read before the variable that may name it is removed
    _without_root(monkeypatch)
    from_root = load_dataset("pyrit:harm/hate_speech", root=root)
    assert from_root.source == str(root / "pyrit_scorer_evals/harm/hate_speech.csv")
    assert "pyrit_version" not in from_root.metadata
    monkeypatch.setenv(DATA_ENV, str(root))
    assert load_dataset("pyrit:harm/hate_speech").source == from_root.source


def test_without_pyrit_the_error_names_the_data_root_and_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _without_root(monkeypatch)
    monkeypatch.setattr(pyrit_package.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(DataError, match=r"set JUDGEPROBE_DATA.*judgeprobe\[pyrit\]"):
        load_dataset("pyrit:refusal")


def test_an_unknown_set_in_the_package_lists_what_to_try(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_root(monkeypatch)
    with pytest.raises(ConfigError, match=r"no PyRIT set 'harm/nope'.*pyrit:refusal"):
        load_dataset("pyrit:harm/nope")


def test_finding_the_package_files_does_not_import_pyrit() -> None:
    # importing PyRIT creates folders in the user's home: reading its CSVs must not
    code = (
        "import sys; from judgeprobe.data.registry import load_dataset; "
        "load_dataset('pyrit:harm/hate_speech'); print('pyrit' in sys.modules)"
    )
    env = {k: v for k, v in os.environ.items() if k != DATA_ENV}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_cli_audit_on_the_package_data_writes_a_card_naming_pyrit_s_version(
    tmp_path: Path,
) -> None:
    env = {k: v for k, v in os.environ.items() if k != DATA_ENV}
    done = subprocess.run(
        [
            sys.executable, "-m", "judgeprobe", "audit", "--judge", "profanity",
            "--rubric", "toxicity", "--data", "pyrit:harm/hate_speech", "--probes", "agreement",
            "--fixed-size", "--out", "out",
        ],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr  # 1: a gated finding may fail; a card either way
    card = json.loads((tmp_path / "out" / "card.json").read_text())
    data = card["tested"]["data"]
    assert data["source"] == (
        f"pyrit {VERSION} package: pyrit/datasets/scorer_evals/harm/hate_speech.csv"
    )
    assert data["n"] > 20
    assert f"pyrit {VERSION} package" in (tmp_path / "out" / "card-appendix.md").read_text()
