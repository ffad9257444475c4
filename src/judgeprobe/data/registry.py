"""One entry point for every loader: :func:`load_dataset` by short name or by path.

Short names resolve against a data root (the ``root=`` option or the ``JUDGEPROBE_DATA``
environment variable) laid out like the project's shared data folder::

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
opening with ``#`` comments -> PyRIT, ``chosen``/``rejected`` -> HH-RLHF, ...), else by
:func:`load_table`. ``<loader>:<path>`` forces a loader, e.g. ``table:my.csv``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from judgeprobe.data._records import guess_format, read_table
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
from judgeprobe.data.pyrit import load_pyrit_csv
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
"""Loader names accepted before a colon in a spec."""

_FIXED: dict[str, tuple[str, ...]] = {
    "pandalm": ("pandalm_testset",),
    "hh-rlhf": ("hh_rlhf", "harmless-base", "test.jsonl.gz"),
    "evalbiasbench": ("offsetbias_evalbiasbench", "biasbench.json"),
    "attaq": ("attaq", "attaq_dataset.csv"),
    "judgebench": ("judgebench",),
    "mt-bench-votes": ("mt_bench_human_judgments",),
}

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
        ``root`` (the data root for short names; default ``$JUDGEPROBE_DATA``) and any keyword
        option of the chosen loader (``on_error``, ``seed``, ``kind``, ``columns``, ...).

    Raises
    ------
    ConfigError
        An unknown short name or loader.
    DataError
        The data root is unset or the file is bad.
    """
    root = options.pop("root", None)
    text = str(spec)
    if text in ("demo", "demo:pointwise", "demo:harm"):
        return load_demo("pointwise")
    if text == "demo:refusal":
        return load_demo("pointwise", label="refusal")
    if text in ("demo:pairwise", "demo-pairs"):
        return load_demo("pairwise")
    if Path(text).exists():
        return _load_path(Path(text), options)
    loader, _, rest = text.partition(":")
    loader = loader.strip().lower()
    if loader in LOADERS and rest and Path(rest).exists():
        return LOADERS[loader](rest, **options)
    if text in (HUB_ID, f"hf:{HUB_ID}") or loader == "mt-bench-human":
        split = options.pop("split", "human")
        if loader == "mt-bench-human" and rest:
            split = rest
        if split not in SPLITS:
            raise ConfigError(f"unknown MT-Bench split {split!r}; use one of {SPLITS}")
        return load_mt_bench_human(HUB_ID, split=split, **options)
    if loader not in LOADERS or loader == "table":
        raise ConfigError(
            f"unknown dataset {text!r} and no such path; short names: pyrit:<...>, "
            f"llmbar:<...>, {', '.join(sorted(_FIXED))}, mt-bench-human; or give a file path"
        )
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
    return LOADERS[loader](path, **options)


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
        return load_pyrit_csv(files, **options)
    target = folder / rest
    if target.is_dir():
        return load_pyrit_csv(target, **options)
    csv_file = target.with_name(target.name + ".csv")
    if rest and csv_file.is_file():
        return load_pyrit_csv(csv_file, **options)
    raise ConfigError(
        f"no PyRIT set {rest!r} under {folder}; try pyrit:refusal, pyrit:harm or "
        "pyrit:harm/violence_multi_score"
    )


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
    return load_llmbar(matches[0], **options)


def _load_path(path: Path, options: dict[str, Any]) -> Dataset:
    if path.is_dir():
        for marker, loader in (
            ("dataset.json", load_llmbar),
            ("testset-v1.json", load_pandalm),
            ("biasbench.json", load_evalbiasbench),
            (LENGTHS_FILE, load_mt_bench_votes),
        ):
            if (path / marker).is_file():
                return loader(path, **options)
        if any(path.glob("*.csv")):
            return load_pyrit_csv(path, **options)
        if any(path.glob("*.jsonl")):
            return load_judgebench(path, **options)
        raise DataError("cannot tell which dataset this directory holds", path=str(path))
    by_name: dict[str, Loader] = {
        "dataset.json": load_llmbar,
        "testset-v1.json": load_pandalm,
        "biasbench.json": load_evalbiasbench,
        LENGTHS_FILE: load_mt_bench_votes,
    }
    if path.name in by_name:
        return by_name[path.name](path, **options)
    fmt = guess_format(path)
    if fmt == "csv" and _first_line(path).startswith("#"):
        return load_pyrit_csv(path, **options)
    columns = set(read_table(path, fmt=fmt, on_error="skip").columns)
    if {"chosen", "rejected"} <= columns:
        return load_hh_rlhf(path, **options)
    if {"pair_id", "response_A", "response_B", "label"} <= columns:
        return load_judgebench(path, **options)
    if columns >= _MT_BENCH_COLUMNS:
        return load_mt_bench_human(path, **options)
    if columns == {"label", "input", "additional_info"}:
        return load_attaq(path, **options)
    return load_table(path, **options)


def _first_line(path: Path) -> str:
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        return handle.readline()
