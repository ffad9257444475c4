"""PyRIT's scorer-evaluation CSVs as the installed ``pyrit`` package ships them.

The ``pyrit`` package (the optional extra ``judgeprobe[pyrit]``) carries its human-labeled
scorer-evaluation sets under ``pyrit/datasets/scorer_evals``, laid out as the ``pyrit_scorer_evals``
folder of a data root (``refusal_scorer/``, ``harm/``, ``objective/``). A user who installed the
extra has that data, so the short names ``pyrit:*`` read it when no data root is given. The files
are found without importing PyRIT (importing it creates folders in the user's home), and the
dataset's ``source`` names the package and its version, so the card says which release's labels
an audit was measured on: the package's files change between PyRIT releases.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from judgeprobe.data.dataset import Dataset

SCORER_EVALS = ("datasets", "scorer_evals")
"""Where the scorer-evaluation sets lie inside the ``pyrit`` package."""


@dataclass(frozen=True, slots=True)
class InstalledSets:
    """The scorer-evaluation folder of the installed ``pyrit`` package and its version."""

    folder: Path
    version: str

    def describe(self, source: str) -> str:
        """``source`` (the loader's file paths) as the card shows it: the package and its version,
        then each file relative to the package, e.g. ``pyrit 1.1.0 package:
        pyrit/datasets/scorer_evals/harm/hate_speech.csv``."""
        package = self.folder.parents[len(SCORER_EVALS) - 1]
        files = [_relative(Path(part), package.parent) for part in source.split(" + ")]
        return f"pyrit {self.version} package: {' + '.join(files)}"


def installed_sets() -> InstalledSets | None:
    """The installed ``pyrit`` package's scorer-evaluation folder; None when PyRIT is not
    installed or its release ships no such folder."""
    try:
        spec = importlib.util.find_spec("pyrit")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        folder = Path(location).joinpath(*SCORER_EVALS)
        if folder.is_dir():
            try:
                version = metadata.version("pyrit")
            except metadata.PackageNotFoundError:
                version = "unknown"
            return InstalledSets(folder, version)
    return None


def from_installed(dataset: Dataset, sets: InstalledSets) -> Dataset:
    """``dataset``, loaded from the package's files, with its source naming the package and its
    version, and ``metadata["pyrit_version"]`` set."""
    return dataclasses.replace(
        dataset,
        source=sets.describe(dataset.source),
        metadata={**dataset.metadata, "pyrit_version": sets.version, "origin": "pyrit package"},
    )


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)
