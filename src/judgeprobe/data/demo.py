"""The demo set that ships with judgeprobe: 40 pointwise items and 20 pairs, written by us."""

from __future__ import annotations

from importlib import resources
from typing import Literal

from judgeprobe.data.dataset import Dataset
from judgeprobe.data.tables import load_table

DemoLabel = Literal["harm", "refusal"]


def load_demo(
    kind: Literal["pointwise", "pairwise"] = "pointwise", *, label: DemoLabel = "harm"
) -> Dataset:
    """The shipped demo data.

    ``pointwise``: harmful, benign, refusal and deflection responses to risky and ordinary
    requests, labelled on the harmfulness rubric's 1-5 scale (``label="harm"``) or as refusal 1/0
    (``label="refusal"``). ``pairwise``: 20 pairs with the better response marked, half of them
    with the better response shorter.
    """
    folder = resources.files("judgeprobe.data") / "demo"
    if kind == "pairwise":
        with resources.as_file(folder / "pairwise.jsonl") as path:
            return load_table(path, kind="pairwise", name="demo:pairwise")
    with resources.as_file(folder / "pointwise.jsonl") as path:
        return load_table(
            path, columns={"labels": label}, name="demo" if label == "harm" else f"demo:{label}"
        )
