"""Drawing a card's figures with matplotlib (Agg canvas, no pyplot state), as PNG and SVG bytes.

Each :class:`~judgeprobe.probes.base.FigureSpec` kind has one drawer; the data formats are in the
FigureSpec docstring. Labels come from data, so mathtext parsing is off (a ``$`` in a category
name is text, not a formula) and long labels are shortened. SVG text is drawn as paths and the
SVG carries no date, so the same card gives the same files.
"""

from __future__ import annotations

import io
import math
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from judgeprobe._util.atomic import write_atomic
from judgeprobe.errors import JudgeprobeError
from judgeprobe.report.text import display_text

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
)
"""Okabe-Ito colours: distinguishable with colour-vision deficiencies and in greyscale print."""
LABEL_LENGTH = 40
TITLE_LENGTH = 90
MAX_SERIES = 12
_RC: dict[RcKeyType, Any] = {
    "text.parse_math": False,
    "svg.fonttype": "path",
    "svg.hashsalt": "judgeprobe",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.facecolor": "white",
    "axes.facecolor": "white",
}


_STEM = re.compile(r"figures/[a-z0-9-]+")


class FigureDataError(JudgeprobeError, ValueError):
    """A figure's data does not have the shape its kind needs (the card says so, not drawn)."""


def figure_stem(spec: Mapping[str, Any]) -> str | None:
    """The figure's file stem (``figures/<probe>-<name>``) when it is a safe relative path."""
    stem = spec.get("file")
    return stem if isinstance(stem, str) and _STEM.fullmatch(stem) else None


def figure_bytes(spec: Mapping[str, Any], fmt: str = "png", *, dpi: int = 110) -> bytes:
    """``spec`` (a FigureSpec dict) drawn as ``fmt`` (``png`` or ``svg``) bytes."""
    return rendered(lambda: draw_figure(spec), fmt, dpi=dpi)


def rendered(draw: Callable[[], Figure], fmt: str = "svg", *, dpi: int = 110) -> bytes:
    """The figure ``draw`` makes, as ``png`` or ``svg`` bytes: in the card's style, without the
    missing-glyph warnings of untrusted text, and the same bytes each time (no date, no
    software stamp)."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"figure format must be png or svg, not {fmt!r}")
    with matplotlib.rc_context(_RC), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from")
        figure = draw()
        buffer = io.BytesIO()
        metadata = {"Date": None} if fmt == "svg" else {"Software": None}
        figure.savefig(buffer, format=fmt, dpi=dpi, metadata=metadata)
    return buffer.getvalue()


def row_axes(rows: int, *, base: float, bottom: float, margin: float) -> tuple[Figure, Axes]:
    """A figure with one row per finding (0.26 inch each, row 0 at the top) and an axis for their
    intervals on [0, 1], with ``base`` inches more for titles, ``bottom`` inches under the axis
    and ``margin`` inches of the height outside it."""
    height = base + 0.26 * rows
    figure = Figure(figsize=(10.5, height))
    FigureCanvasAgg(figure)
    ax = figure.add_axes((0.43, bottom / height, 0.3, (height - margin) / height))
    ax.set_xlim(0, 1)
    ax.set_ylim(rows - 0.5, -0.5)
    ax.axis("off")
    return figure, ax


def write_figures(
    card: Mapping[str, Any], out_dir: Path, *, formats: Sequence[str] = ("png", "svg")
) -> tuple[dict[str, bytes], dict[str, str]]:
    """Write every figure of ``card`` under ``out_dir`` (at ``<file>.<fmt>``).

    Returns the PNG bytes by figure file stem (for embedding) and, by the same stem, the reason
    any figure could not be drawn.
    """
    pngs: dict[str, bytes] = {}
    failed: dict[str, str] = {}
    for probe in card.get("probes", []):
        for spec in probe.get("figures", []):
            stem = figure_stem(spec)
            if stem is None:
                failed[str(spec.get("file"))] = "figure file name is not figures/<letters-digits>"
                continue
            try:
                drawn = {fmt: figure_bytes(spec, fmt) for fmt in formats}
            except FigureDataError as exc:
                failed[stem] = str(exc)
                continue
            for fmt, content in drawn.items():
                path = out_dir / f"{stem}.{fmt}"
                path.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(path, content)
            pngs[stem] = drawn["png"] if "png" in drawn else figure_bytes(spec, "png")
    return pngs, failed


def draw_figure(spec: Mapping[str, Any]) -> Figure:
    """A matplotlib Figure for ``spec``; :class:`FigureDataError` when its data is malformed."""
    kind = spec.get("kind")
    drawer = _DRAWERS.get(str(kind))
    if drawer is None:
        raise FigureDataError(f"unknown figure kind {kind!r}")
    data = spec.get("data")
    if not isinstance(data, Mapping):
        raise FigureDataError("figure data must be a mapping")
    figure = Figure(figsize=(6.4, 3.6), layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.subplots()
    try:
        drawer(figure, ax, data)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise FigureDataError(f"{kind} figure: malformed data ({exc})") from exc
    ax.set_title(_label(spec.get("title", ""), TITLE_LENGTH), loc="left", fontsize=10)
    if spec.get("x_label"):
        ax.set_xlabel(_label(spec["x_label"], TITLE_LENGTH))
    if spec.get("y_label"):
        ax.set_ylabel(_label(spec["y_label"], TITLE_LENGTH))
    return figure


# -- drawers --------------------------------------------------------------------------------------
def _distributions(figure: Figure, ax: Axes, data: Mapping[str, Any]) -> None:
    series = _series(data)
    values = {name: _finite(v) for name, v in series.items()}
    pooled = np.concatenate([v for v in values.values() if v.size] or [np.zeros(0)])
    if pooled.size == 0:
        _empty(ax)
        return
    bins: Any
    if np.all(pooled == np.round(pooled)) and np.ptp(pooled) <= 20:
        bins = np.arange(pooled.min() - 0.5, pooled.max() + 1.5)
    else:
        bins = np.histogram_bin_edges(pooled, bins="auto")[:61]
    for index, (name, v) in enumerate(values.items()):
        if not v.size:
            continue
        ax.hist(
            v,
            bins=bins,
            weights=np.full(v.size, 1.0 / v.size),
            histtype="step",
            linewidth=1.6,
            color=_colour(index),
            label=f"{_label(name)} (n={v.size})",
        )
    ax.set_ylabel("share of values")
    _legend(ax, len(values))


def _scatter(figure: Figure, ax: Axes, data: Mapping[str, Any]) -> None:
    series = _series(data)
    lows, highs = [], []
    for index, (name, points) in enumerate(series.items()):
        x = np.asarray(points["x"], dtype=float)
        y = np.asarray(points["y"], dtype=float)
        if x.shape != y.shape:
            raise ValueError(f"series {name!r}: x and y differ in length")
        keep = np.isfinite(x) & np.isfinite(y)
        x, y = x[keep], y[keep]
        ax.scatter(x, y, s=14, alpha=0.6, color=_colour(index), label=_label(name))
        if x.size:
            lows.append(min(x.min(), y.min()))
            highs.append(max(x.max(), y.max()))
    span = (min(lows), max(highs)) if lows else None
    limits = data.get("limits")
    if limits is not None:
        low, high = (float(v) for v in limits)
        if not low < high:
            raise ValueError(f"limits must be two numbers, low < high, not {limits!r}")
        ax.set_xlim(low, high)
        ax.set_ylim(low, high)
        span = (low, high)
    if data.get("diagonal") and span is not None:
        ax.plot(span, span, color="0.4", linestyle="--", linewidth=1, label="y = x")
    if not lows:
        _empty(ax)
    _legend(ax, len(series) + bool(data.get("diagonal")))


def _counts(figure: Figure, ax: Axes, data: Mapping[str, Any]) -> None:
    rows = [str(r) for r in data["rows"]]
    columns = [str(c) for c in data["columns"]]
    values = _matrix(data["values"], len(rows), len(columns))
    if len(rows) * len(columns) > 40 or len(columns) > 6:
        _matrix_plot(figure, ax, values, rows, columns, cmap="Blues")
        return
    width = 0.8 / max(len(columns), 1)
    positions = np.arange(len(rows))
    for index, column in enumerate(columns):
        heights = np.nan_to_num(values[:, index])
        offset = (index - (len(columns) - 1) / 2) * width
        bars = ax.bar(
            positions + offset, heights, width, label=_label(column), color=_colour(index)
        )
        ax.bar_label(bars, labels=[_fmt(v) for v in values[:, index]], fontsize=7, padding=1)
    ax.set_xticks(positions, [_label(r) for r in rows], rotation=_rotation(rows))
    _legend(ax, len(columns))


def _heatmap(figure: Figure, ax: Axes, data: Mapping[str, Any]) -> None:
    names = data.get("names")
    rows = [str(n) for n in (data.get("rows") or names or data["names"])]
    columns = [str(n) for n in (data.get("columns") or names or data["names"])]
    values = _matrix(data["values"], len(rows), len(columns))
    _matrix_plot(figure, ax, values, rows, columns, cmap="viridis")


def _intervals(figure: Figure, ax: Axes, data: Mapping[str, Any]) -> None:
    rows = list(data["rows"])
    figure.set_size_inches(6.4, max(2.2, 0.9 + 0.32 * len(rows)))
    positions = np.arange(len(rows))[::-1]
    for position, row in zip(positions, rows, strict=True):
        estimate, low, high = (_float(row.get(k)) for k in ("estimate", "low", "high"))
        if not math.isnan(low) and not math.isnan(high):
            ax.plot([low, high], [position, position], color=PALETTE[0], linewidth=2)
        if not math.isnan(estimate):
            ax.plot([estimate], [position], "o", color=PALETTE[0], markersize=5)
    reference = data.get("reference")
    if reference is not None:
        ax.axvline(float(reference), color=PALETTE[5], linestyle="--", linewidth=1)
    ax.set_yticks(positions, [_label(row.get("label", "")) for row in rows])
    ax.set_ylim(-0.7, len(rows) - 0.3)


# -- shared drawing code ------------------------------------------------------------------------
def _matrix_plot(
    figure: Figure, ax: Axes, values: Any, rows: list[str], columns: list[str], *, cmap: str
) -> None:
    row_labels = [_label(r) for r in rows]
    label_width = 0.07 * max((len(label) for label in row_labels), default=0)
    width = 1.8 + 0.55 * len(columns) + label_width
    figure.set_size_inches(max(4.0, min(11.0, width)), max(2.6, min(10.0, 1.2 + 0.4 * len(rows))))
    masked = np.ma.masked_invalid(values)
    image = ax.imshow(masked, cmap=cmap, aspect="auto")
    figure.colorbar(image, ax=ax, shrink=0.85)
    ax.set_xticks(range(len(columns)), [_label(c) for c in columns], rotation=_rotation(columns))
    ax.set_yticks(range(len(rows)), row_labels)
    ax.spines[:].set_visible(False)
    if len(rows) * len(columns) <= 400 and masked.count():
        middle = (float(masked.max()) + float(masked.min())) / 2
        for (i, j), value in np.ndenumerate(values):
            colour = "white" if cmap == "viridis" and value < middle else "black"
            if cmap == "Blues" and value > middle:
                colour = "white"
            ax.text(j, i, _fmt(value), ha="center", va="center", fontsize=7, color=colour)


def _series(data: Mapping[str, Any]) -> dict[str, Any]:
    series = data["series"]
    if not isinstance(series, Mapping):
        raise TypeError("series must map names to data")
    items = list(series.items())[:MAX_SERIES]
    return {str(name): value for name, value in items}


def _matrix(values: Any, rows: int, columns: int) -> Any:
    cells = [[_float(v) for v in row] for row in values]
    if any(len(row) != columns for row in cells) or len(cells) != rows:
        shape = f"{len(cells)} x {sorted({len(row) for row in cells})}"
        raise ValueError(f"values are {shape}, expected {rows} x {columns}")
    matrix = np.array(cells, dtype=float).reshape(rows, columns)
    if matrix.shape != (rows, columns):
        raise ValueError(f"values are {matrix.shape}, expected {rows} x {columns}")
    return matrix


def _finite(values: Any) -> Any:
    array = np.array([_float(v) for v in values], dtype=float)
    return array[np.isfinite(array)]


def _float(value: Any) -> float:
    if value is None or isinstance(value, bool):
        return math.nan
    return float(value)


def _fmt(value: float) -> str:
    if math.isnan(value):
        return ""
    return f"{value:.0f}" if value == int(value) else f"{value:.2g}"


def _label(value: Any, length: int = LABEL_LENGTH) -> str:
    text = display_text(value)
    return text if len(text) <= length else text[: length - 1] + "…"


def _rotation(labels: Sequence[str]) -> int:
    return 30 if sum(len(label) for label in labels) > 60 else 0


def _colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def _legend(ax: Axes, entries: int) -> None:
    if entries > 1 or ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, frameon=False)


def _empty(ax: Axes) -> None:
    ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes, color="0.4")


_DRAWERS: dict[str, Callable[[Figure, Axes, Mapping[str, Any]], None]] = {
    "distributions": _distributions,
    "scatter": _scatter,
    "counts": _counts,
    "heatmap": _heatmap,
    "intervals": _intervals,
}
