"""One entry point for every loader: :func:`load_dataset` by short name or by path.

Short names resolve against a data root (the ``root=`` option or the ``JUDGEPROBE_DATA``
environment variable) laid out like the project's shared data folder; with neither set, the
``pyrit:*`` names read the files the installed ``pyrit`` package ships (its
``datasets/scorer_evals``; the card's data source names the package and its version)::

    pyrit:refusal                 refusal_scorer/refusal.csv + refusal_extra.csv (169 items)
    pyrit:harm, pyrit:objective   every CSV of that folder
    pyrit:<folder>/<stem>         one CSV, e.g. pyrit:harm/violence_multi_score
    llmbar:<subset>               e.g. llmbar:natural, llmbar:adversarial/neighbor,
                                  llmbar:processed/mt-bench (case-insensitive path tail)
    pandalm, hh-rlhf, evalbiasbench, attaq
    demo, demo:refusal, demo:pairwise   the shipped demo set (no data root needed)
    judgebench, judgebench:gpt-4o, judgebench:claude
    mt-bench-human[:human|:gpt4_pair|:both]   from the Hugging Face hub (needs judgeprobe[hf])
    mt-bench-votes[:unordered|:ordered]       mt_bench_human_judgments/ (votes and word counts,
                                              no texts; ``:ordered`` is the ordered-pair join)

A path is loaded by the loader its name or columns point to (``dataset.json`` -> LLMBar, a CSV
whose header, after any ``#`` comment lines, has ``objective``, ``assistant_response`` and
``human_score`` columns -> PyRIT, ``chosen``/``rejected`` -> HH-RLHF, ...), else by
:func:`load_table`. ``<loader>:<path>`` or the option ``loader=...`` forces a loader, e.g.
``table:my.csv``. A path is taken before a short name of the same spelling, except a folder
that holds no dataset: an empty ``pandalm/`` in the working directory does not hide ``pandalm``.

Options are checked against the chosen loader before it runs: a name it does not take, or a value
of the wrong type, is a :class:`~judgeprobe.errors.ConfigError` that names the option and the
loader and lists the options it takes.
"""

from __future__ import annotations

import difflib
import inspect
import os
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from judgeprobe._util.yaml_files import explain_validation
from judgeprobe.data._records import csv_header, guess_format, read_table
from judgeprobe.data.attaq import load_attaq
from judgeprobe.data.dataset import Dataset
from judgeprobe.data.demo import load_demo
from judgeprobe.data.mt_bench import HUB_ID, SPLITS, load_mt_bench_human
from judgeprobe.data.mt_bench_votes import LENGTHS_FILE, MATCHES, load_mt_bench_votes
from judgeprobe.data.pairwise_sets import (
    load_evalbiasbench,
    load_hh_rlhf,
    load_judgebench,
    load_llmbar,
    load_pandalm,
)
from judgeprobe.data.pyrit import has_pyrit_columns, load_pyrit_csv
from judgeprobe.data.pyrit_package import from_installed, installed_sets
from judgeprobe.data.tables import load_table
from judgeprobe.errors import ConfigError, DataError

DATA_ENV = "JUDGEPROBE_DATA"
"""The environment variable naming the data root for short names."""

Loader = Callable[..., Dataset]

LOADERS: dict[str, Loader] = {
    "table": load_table,
    "pyrit": load_pyrit_csv,
    "llmbar": load_llmbar,
    "pandalm": load_pandalm,
    "hh-rlhf": load_hh_rlhf,
    "judgebench": load_judgebench,
    "evalbiasbench": load_evalbiasbench,
    "attaq": load_attaq,
    "mt-bench-human": load_mt_bench_human,
    "mt-bench-votes": load_mt_bench_votes,
}
"""Loader names accepted before a colon in a spec, and as the ``loader`` option."""

COMMON_OPTIONS = ("loader", "root")
"""Options :func:`load_dataset` takes whatever the loader: which loader, and the data root."""

_FIXED: dict[str, tuple[str, ...]] = {
    "pandalm": ("pandalm_testset",),
    "hh-rlhf": ("hh_rlhf", "harmless-base", "test.jsonl.gz"),
    "evalbiasbench": ("offsetbias_evalbiasbench", "biasbench.json"),
    "attaq": ("attaq", "attaq_dataset.csv"),
    "judgebench": ("judgebench",),
    "mt-bench-votes": ("mt_bench_human_judgments",),
}

_DEMO: dict[str, Literal["pointwise", "pairwise"]] = {
    "demo": "pointwise",
    "demo:pointwise": "pointwise",
    "demo:harm": "pointwise",
    "demo:refusal": "pointwise",
    "demo:pairwise": "pairwise",
    "demo-pairs": "pairwise",
}
"""The names of the shipped demo sets, and the kind of items each holds."""

_MT_BENCH_COLUMNS = {
    "question_id",
    "model_a",
    "model_b",
    "winner",
    "judge",
    "conversation_a",
    "conversation_b",
    "turn",
}


def load_dataset(spec: str | Path, **options: Any) -> Dataset:
    """Load a dataset by short name or by path.

    Parameters
    ----------
    spec : str or Path
        A short name (see the module docstring), a path, or ``<loader>:<path>``.
    **options
        ``root`` (the data root for short names; default ``$JUDGEPROBE_DATA``), ``loader`` (one
        of :data:`LOADERS`: load the path with it, whatever its name and columns) and any keyword
        option of the chosen loader (``on_error``, ``seed``, ``kind``, ``columns``, ...).

    Raises
    ------
    ConfigError
        An unknown short name or loader, or an option the loader does not take (or of the wrong
        type); the message names the option and lists the ones the loader takes.
    DataError
        The data root is unset or the file is bad.
    """
    root = options.pop("root", None)
    forced = options.pop("loader", None)
    text = str(spec)
    if forced is not None:
        return _load_forced(_loader_name(forced), text, options)
    if text in _DEMO:
        if options:
            raise ConfigError(
                f"data option(s) {sorted(options)} given for the built-in demo data, which takes "
                f"none (only {', '.join(COMMON_OPTIONS)})"
            )
        if text == "demo:refusal":
            return load_demo("pointwise", label="refusal")
        return load_demo(_DEMO[text])
    path = Path(text)
    if not path.exists():
        return _by_name(text, root, options)
    if not _shadows(path, text):
        return _load_path(path, options)
    try:  # an empty folder named like a dataset does not hide it: the short name wins
        return _by_name(text, root, options)
    except (ConfigError, DataError) as exc:
        error = DataError if isinstance(exc, DataError) else ConfigError
        raise error(
            f"{exc} (the folder {text!r} here holds no dataset, so {text!r} was read as a "
            "short name)"
        ) from exc


_SHORT_NAMES = frozenset({*_FIXED, "pyrit", "llmbar", "mt-bench-human"})
"""The loaders a short name starts with (``pandalm``, ``pyrit:refusal``)."""


def _shadows(path: Path, text: str) -> bool:
    """True when ``path`` is a folder that holds no dataset and ``text`` is also a short name:
    an empty ``pandalm/`` in the working directory must not hide ``pandalm``."""
    if not path.is_dir() or text.partition(":")[0].strip().lower() not in _SHORT_NAMES:
        return False
    try:
        _detect(path)
    except DataError:
        return True
    return False


def _by_name(text: str, root: str | Path | None, options: dict[str, Any]) -> Dataset:
    """The dataset the short name ``text`` names (see the module docstring)."""
    loader, _, rest = text.partition(":")
    loader = loader.strip().lower()
    if loader in LOADERS and rest and Path(rest).exists():
        return _call(loader, rest, options)
    if text in (HUB_ID, f"hf:{HUB_ID}") or loader == "mt-bench-human":
        split = options.pop("split", "human")
        if loader == "mt-bench-human" and rest:
            split = rest
        if split not in SPLITS:
            raise ConfigError(f"unknown MT-Bench split {split!r}; use one of {SPLITS}")
        return _call("mt-bench-human", HUB_ID, {**options, "split": split})
    if loader not in LOADERS or loader == "table":
        raise ConfigError(
            f"unknown dataset {text!r} and no such path; short names: pyrit:<...>, "
            f"llmbar:<...>, {', '.join(sorted(_FIXED))}, mt-bench-human; or give a file path"
        )
    if loader == "pyrit" and root is None and not os.environ.get(DATA_ENV):
        return _pyrit_installed(rest, text, options)
    base = _root(root)
    if loader == "pyrit":
        return _pyrit(base / "pyrit_scorer_evals", rest, text, options)
    if loader == "llmbar":
        return _llmbar(base / "llmbar" / "Dataset", rest, text, options)
    path = base.joinpath(*_FIXED[loader])
    if loader == "judgebench" and rest:
        matches = sorted(p for p in path.glob("*.jsonl") if p.name.lower().startswith(rest.lower()))
        if len(matches) != 1:
            raise ConfigError(f"judgebench:{rest} matches {len(matches)} files in {path}")
        path = matches[0]
    if loader == "mt-bench-votes" and rest:
        if rest not in MATCHES:
            raise ConfigError(f"unknown MT-Bench votes matching {rest!r}; use one of {MATCHES}")
        options["match"] = rest
    options.setdefault("name", text)
    return _call(loader, path, options)


def check_data_options(loader: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` checked against the keyword options of the loader named ``loader``.

    Returns the options as the loader's type hints read them (a YAML list for a tuple, say).

    Raises
    ------
    ConfigError
        An option the loader does not take (with the closest name it does take, when one is
        close) or a value of the wrong type; the message names the option and the loader.

    Examples
    --------
    >>> check_data_options("table", {"on_error": "skip"})
    {'on_error': 'skip'}
    >>> check_data_options("table", {"on_eror": "skip"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    judgeprobe.errors.ConfigError: data option 'on_eror' ... did you mean 'on_error'? ...
    """
    function = LOADERS[loader]
    taken = [
        name
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    hints = typing.get_type_hints(function)
    checked: dict[str, Any] = {}
    for key, value in options.items():
        if key not in taken:
            known = sorted({*taken, *COMMON_OPTIONS})
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(
                f"data option {key!r} is not one the {loader} loader takes; {hint}"
                f"it takes: {', '.join(known)}"
            )
        try:
            checked[key] = TypeAdapter(hints[key]).validate_python(value)
        except ValidationError as exc:
            raise _wrong_type(loader, key, value, exc) from None
    return checked


def _wrong_type(loader: str, key: str, value: Any, exc: ValidationError) -> ConfigError:
    detail = explain_validation(exc, root=key, locate=lambda loc: [key, *loc])
    return ConfigError(f"data option {key!r} of the {loader} loader: {detail} (got {value!r})")


def _call(loader: str, target: str | Path, options: Mapping[str, Any]) -> Dataset:
    """Run the loader named ``loader`` on ``target`` with ``options``, checked first."""
    return LOADERS[loader](target, **check_data_options(loader, options))


def _loader_name(value: Any) -> str:
    name = str(value).strip().lower() if isinstance(value, str) else None
    if name in LOADERS:
        return name
    close = difflib.get_close_matches(str(value).lower(), list(LOADERS), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise ConfigError(f"unknown loader {value!r}; {hint}loaders: {', '.join(LOADERS)}")


def _load_forced(loader: str, text: str, options: dict[str, Any]) -> Dataset:
    """Load the path ``text`` (or ``<loader>:<path>``) with the loader the user named."""
    prefix, _, rest = text.partition(":")
    prefix = prefix.strip().lower()
    if not Path(text).exists() and prefix in LOADERS and rest:
        if prefix != loader:
            raise ConfigError(
                f"data {text!r} names the {prefix} loader, but the loader option names {loader}"
            )
        text = rest
    return _call(loader, text, options)


def _root(root: str | Path | None) -> Path:
    value = root if root is not None else os.environ.get(DATA_ENV)
    if not value:
        raise DataError(f"short dataset names need a data root: pass root=... or set {DATA_ENV}")
    path = Path(value)
    if not path.is_dir():
        raise DataError("data root is not a directory", path=str(path))
    return path


def _pyrit(folder: Path, rest: str, spec: str, options: dict[str, Any]) -> Dataset:
    options.setdefault("name", spec)
    if rest == "refusal":
        files = [folder / "refusal_scorer" / n for n in ("refusal.csv", "refusal_extra.csv")]
        return load_pyrit_csv(files, **check_data_options("pyrit", options))
    target = folder / rest
    if target.is_dir():
        return _call("pyrit", target, options)
    csv_file = target.with_name(target.name + ".csv")
    if rest and csv_file.is_file():
        return _call("pyrit", csv_file, options)
    raise ConfigError(
        f"no PyRIT set {rest!r} under {folder}; try pyrit:refusal, pyrit:harm or "
        "pyrit:harm/violence_multi_score"
    )


def _pyrit_installed(rest: str, spec: str, options: dict[str, Any]) -> Dataset:
    """The PyRIT set ``rest`` from the installed ``pyrit`` package's own files."""
    sets = installed_sets()
    if sets is None:
        raise DataError(
            f"short dataset names need a data root: pass root=... or set {DATA_ENV}; "
            "or install judgeprobe[pyrit], whose pyrit package ships the pyrit:* sets"
        )
    return from_installed(_pyrit(sets.folder, rest, spec, options), sets)


def _llmbar(folder: Path, rest: str, spec: str, options: dict[str, Any]) -> Dataset:
    wanted = rest.strip("/").lower()
    found = sorted(folder.glob("**/dataset.json"))
    subsets = {"/".join(p.parent.relative_to(folder).parts).lower(): p for p in found}
    matches = [
        p for key, p in subsets.items() if wanted and (key == wanted or key.endswith("/" + wanted))
    ]
    if len(matches) != 1:
        raise ConfigError(f"llmbar:{rest} matches {len(matches)} subsets; known: {sorted(subsets)}")
    options.setdefault("name", spec)
    return _call("llmbar", matches[0], options)


def _load_path(path: Path, options: dict[str, Any]) -> Dataset:
    loader = _detect(path)
    try:
        return _call(loader, path, options)
    except DataError as exc:
        if loader != "table" or exc.column is None or exc.row is not None:
            raise
        # a column the generic table lacks: the file may be a known set in its own layout
        raise DataError(
            f"{exc.reason}; read as a generic table (its columns are not a known dataset's); "
            f"name its loader if it is one: --loader NAME or data_options: {{loader: NAME}} "
            f"(loaders: {', '.join(LOADERS)})",
            path=exc.path,
            column=exc.column,
        ) from exc


def _detect(path: Path) -> str:
    """The name of the loader for ``path``: from its name first, then from its columns."""
    if path.is_dir():
        for marker, loader in (
            ("dataset.json", "llmbar"),
            ("testset-v1.json", "pandalm"),
            ("biasbench.json", "evalbiasbench"),
            (LENGTHS_FILE, "mt-bench-votes"),
        ):
            if (path / marker).is_file():
                return loader
        if any(path.glob("*.csv")):
            return "pyrit"
        if any(path.glob("*.jsonl")):
            return "judgebench"
        raise DataError("cannot tell which dataset this directory holds", path=str(path))
    by_name = {
        "dataset.json": "llmbar",
        "testset-v1.json": "pandalm",
        "biasbench.json": "evalbiasbench",
        LENGTHS_FILE: "mt-bench-votes",
    }
    if path.name in by_name:
        return by_name[path.name]
    fmt = guess_format(path)
    delimiter = {"csv": ",", "tsv": "\t"}.get(fmt)
    if delimiter is not None and has_pyrit_columns(csv_header(path, delimiter=delimiter)):
        return "pyrit"
    columns = set(read_table(path, fmt=fmt, on_error="skip").columns)
    if {"chosen", "rejected"} <= columns:
        return "hh-rlhf"
    if {"pair_id", "response_A", "response_B", "label"} <= columns:
        return "judgebench"
    if columns >= _MT_BENCH_COLUMNS:
        return "mt-bench-human"
    if columns == {"label", "input", "additional_info"}:
        return "attaq"
    return "table"
