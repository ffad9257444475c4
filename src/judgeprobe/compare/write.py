"""Comparing runs in one call: the document, checked against its schema, and its files."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from judgeprobe._util.atomic import write_atomic
from judgeprobe.compare.build import ALPHA, build_comparison
from judgeprobe.compare.render import render_html, render_markdown
from judgeprobe.compare.runs import load_run
from judgeprobe.compare.schema import validate_comparison
from judgeprobe.errors import ConfigError

FILE_NAMES = {"json": "compare.json", "md": "compare.md", "html": "compare.html"}


def compare_runs(
    runs: Sequence[str | os.PathLike[str]],
    *,
    allow_different_data: bool = False,
    allow_different_rubric: bool = False,
    alpha: float = ALPHA,
    n_resamples: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """Compare two or more runs (run stores, ``card.json`` files, or folders holding one).

    The first run is the baseline. Every finding the runs share is set side by side with its
    difference (candidate minus baseline, paired on shared items where the runs' stores hold
    per-item outcomes) and a word: worse, better, changed, no evidence or n/a
    (:mod:`judgeprobe.compare.build`). No judge is called.

    Raises
    ------
    ConfigError
        Fewer than two runs, a path that is neither, or runs on different data (or rubric kinds,
        or probe parameters) unless ``allow_different_data``. Rubrics of different kinds on
        the same data are compared, paired, with ``allow_different_rubric``: two judges each
        audited with the rubric it fits (the comparison says the rubrics differ, and compares
        findings in score units as shares of each rubric's score span).

    Examples
    --------
    >>> from judgeprobe import compare_runs  # doctest: +SKIP
    >>> doc = compare_runs(["old/run.sqlite", "new/run.sqlite"])  # doctest: +SKIP
    >>> doc["summary"]["worse_gated"]  # doctest: +SKIP
    []
    """
    if len(runs) < 2:
        raise ConfigError(f"compare needs two or more runs, got {len(runs)}")
    document = build_comparison(
        [load_run(path) for path in runs],
        allow_different_data=allow_different_data,
        allow_different_rubric=allow_different_rubric,
        alpha=alpha,
        n_resamples=n_resamples,
        seed=seed,
    )
    validate_comparison(document)
    return document


def write_comparison(document: dict[str, Any], out_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """Write ``document`` as ``compare.json``, ``compare.md`` and ``compare.html`` in
    ``out_dir`` (created if missing), each replaced atomically."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out}: is a file, not a folder; give a folder for the comparison")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{out}: cannot create the folder ({exc.strerror})") from exc
    texts = {
        "json": json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n",
        "md": render_markdown(document),
        "html": render_html(document),
    }
    return {fmt: write_atomic(out / FILE_NAMES[fmt], text) for fmt, text in texts.items()}


def exit_code(document: dict[str, Any], fail_on: str) -> int:
    """1 when ``fail_on`` is ``worse`` and a gated finding got worse with evidence, else 0.

    With ``worse``, a run that is not complete (still running, stopped by its budget or
    interrupted) or holds no finding cannot pass the gate: "nothing got worse" would only mean
    "nothing was measured". ConfigError (exit 2) then names every run's state.
    """
    if fail_on not in ("worse", "never"):
        raise ConfigError(f"--fail-on must be worse or never, not {fail_on!r}")
    runs = document["runs"]
    if fail_on == "worse" and any(not _gateable(run) for run in runs):
        raise ConfigError(
            "--fail-on worse needs complete runs with findings: "
            + "; ".join(_state(run) for run in runs)
        )
    return int(fail_on == "worse" and bool(document["summary"]["worse_gated"]))


def _gateable(run: Mapping[str, Any]) -> bool:
    return run.get("state") == "complete" and bool(run.get("findings"))


def _state(run: Mapping[str, Any]) -> str:
    reason = f" ({run['reason']})" if run.get("reason") else ""
    return (
        f"run {run['index']} {run['source']}: {run.get('state') or 'unknown state'}{reason}, "
        f"{run.get('findings', 0)} findings"
    )
