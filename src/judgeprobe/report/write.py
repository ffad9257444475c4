"""Writing a Judge Card to disk: ``card.json``, ``card.md`` with ``card-appendix.md``,
``card.html`` and ``figures/`` (the probes' figures and the overview of the gated findings)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from judgeprobe._util.atomic import write_atomic
from judgeprobe.engine.store import RunStore
from judgeprobe.errors import ConfigError
from judgeprobe.report.card import build_card
from judgeprobe.report.figures import write_figures
from judgeprobe.report.html import render_html
from judgeprobe.report.markdown import APPENDIX_FILE, render_appendix, render_markdown
from judgeprobe.report.overview_figure import OVERVIEW_STEM, overview_bytes
from judgeprobe.report.pyrit_invariance import write_invariance_jsonl
from judgeprobe.report.schema import validate_card

FORMATS = ("json", "md", "html")
FILE_NAMES = {"json": "card.json", "md": "card.md", "html": "card.html"}


def render_card(
    store: RunStore | str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    formats: Sequence[str] = FORMATS,
    run_id: int | None = None,
) -> tuple[dict[str, Any], dict[str, Path]]:
    """Build the card of a run store, write it in ``formats`` and return it with the paths
    written (so a caller reads the card it wrote without reading the files back); no judge is
    called.

    Figures are written as ``figures/<probe>-<figure>.png`` and ``.svg`` next to the card files,
    and the overview of every gated finding as ``figures/overview.svg`` and ``.png`` (the HTML
    embeds them, so ``card.html`` stands alone). The Markdown card is short; ``md`` also writes
    its full tables to ``card-appendix.md`` beside it, which the card links to. Every file is
    replaced atomically (written to a temporary file in the same folder, then renamed over the
    old one), so a reader or a concurrent re-render never sees a half-written card. A file that
    cannot be written (a full disk, a folder without write permission) is a :class:`ConfigError`
    naming it, with how to write the card again from the run store; the old files stay whole.

    Parameters
    ----------
    store
        A run store or the path of one.
    out_dir
        Directory for the card files (created if missing).
    formats
        Any of ``"json"``, ``"md"``, ``"html"``.
    run_id
        As for :func:`~judgeprobe.report.build_card`.

    Returns
    -------
    tuple of dict
        The card, and the path written for each format, plus ``"appendix"`` (with ``md``) and
        ``"figures"`` (the figure directory) when the card has figures.
    """
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ConfigError(f"card formats must be among {', '.join(FORMATS)}; got {list(formats)}")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out}: is a file, not a folder; give a folder for the card files")
    card = build_card(store, run_id=run_id)
    validate_card(card)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{out}: cannot create the card folder ({exc.strerror})") from exc
    figures = out / "figures"
    if figures.is_symlink() or (figures.exists() and not figures.is_dir()):
        raise ConfigError(f"{figures}: not a real folder (a link or a file); remove it")
    with _writing(out, store):
        written = _write_files(card, out, formats)
        jsonl = write_invariance_jsonl(store, out, run_id)  # policy invariance, PyRIT's form
        if jsonl is not None:
            written["pyrit-invariance"] = jsonl
        return card, written


def _write_files(card: dict[str, Any], out: Path, formats: Sequence[str]) -> dict[str, Path]:
    """Write the figures and the card files of ``card`` under ``out``; the paths written."""
    pngs, errors = write_figures(card, out)
    overview = overview_bytes(card, "svg")
    written: dict[str, Path] = {}
    if overview is not None:
        (out / "figures").mkdir(exist_ok=True)
        write_atomic(out / f"{OVERVIEW_STEM}.svg", overview)
        write_atomic(out / f"{OVERVIEW_STEM}.png", overview_bytes(card, "png") or b"")
    if pngs or overview is not None:
        written["figures"] = out / "figures"
    for fmt in dict.fromkeys(formats):
        path = out / FILE_NAMES[fmt]
        if fmt == "json":
            text = json.dumps(card, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        elif fmt == "md":
            text = render_markdown(card)
        else:
            text = render_html(card, figures=pngs, figure_errors=errors, overview=overview)
        written[fmt] = write_atomic(path, text)
        if fmt == "md":
            written["appendix"] = write_atomic(out / APPENDIX_FILE, render_appendix(card))
    return written


@contextmanager
def _writing(out: Path, store: RunStore | str | os.PathLike[str]) -> Iterator[None]:
    """Turn an OS error while the card's files are written (ENOSPC, EACCES...) into one line
    naming the file and how to write the card again; the run store already holds the run."""
    try:
        yield
    except OSError as exc:
        where = exc.filename or out
        reason = exc.strerror or str(exc)
        source = store.path if isinstance(store, RunStore) else os.fspath(store)
        again = "" if source == ":memory:" else f"; `judgeprobe card {source}` writes it again"
        raise ConfigError(
            f"{where}: cannot write the card ({reason}); the run is stored, so free some "
            f"space or choose another folder{again}"
        ) from exc


def write_card(
    store: RunStore | str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    formats: Sequence[str] = FORMATS,
    run_id: int | None = None,
) -> dict[str, Path]:
    """:func:`render_card`'s paths alone: the card of a run store written in ``formats``."""
    return render_card(store, out_dir, formats=formats, run_id=run_id)[1]
