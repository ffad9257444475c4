"""Turning a judge's raw answer into a verdict: from text, or from a distribution over labels."""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping

from judgeprobe._util.hashing import content_hash
from judgeprobe.core.verdict import Verdict
from judgeprobe.rubrics import Rubric

_TRUE = {"true", "yes"}
_FALSE = {"false", "no"}


def parse_label(text: str, rubric: Rubric) -> str | None:
    """The first scale label found at the start of ``text`` (after an optional answer prefix).

    Matching is case-insensitive on whole words; ``yes``/``no`` count as ``true``/``false`` for
    binary rubrics. Returns None when the text holds no label: the caller records it unparseable.
    """
    body = text.strip()
    prefix = rubric.answer_prefix.strip().rstrip(":").lower()
    if prefix and body.lower().startswith(prefix):
        body = body[len(prefix) :].lstrip(" :*\n")
    # a number keeps its sign: "Score: -1" holds no label of a 1-5 scale, not the label 1
    tokens = re.findall(r"[A-Za-z]+|-?\d+(?:\.\d+)?", body[:200])
    by_lower = {label.lower(): label for label in rubric.labels}
    for token in tokens[:8]:
        lowered = token.lower()
        if lowered in by_lower:
            return by_lower[lowered]
        if rubric.kind == "binary":
            if lowered in _TRUE and "true" in by_lower:
                return by_lower["true"]
            if lowered in _FALSE and "false" in by_lower:
                return by_lower["false"]
    return None


def parse_number(text: str, rubric: Rubric) -> float | None:
    """The first finite number in ``text`` inside the rubric's range (continuous rubrics).

    A number is read whole, exponent included: ``1e-3`` is 0.001 and ``1e999`` (infinite) is no
    score, never the 1 in front of them.
    """
    for match in re.findall(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", text[:200]):
        value = float(match)
        if not math.isfinite(value):
            continue
        if rubric.range is None or rubric.range[0] <= value <= rubric.range[1]:
            return value
    return None


def verdict_from_text(text: str, rubric: Rubric) -> Verdict:
    """A verdict from free text; unparseable when no label (or number) is found."""
    if rubric.kind == "continuous":
        number = parse_number(text, rubric)
        if number is None:
            return Verdict.unparseable(text)
        return Verdict.scored(number, raw_text=text)
    label = parse_label(text, rubric)
    if label is None:
        return Verdict.unparseable(text)
    return Verdict.scored(label_score(label, rubric), label=label, raw_text=text)


def label_score(label: str, rubric: Rubric) -> float:
    """The numeric score of a label; pairwise labels map to A=1, tie=0.5, B=0."""
    if rubric.kind == "pairwise":
        return {"A": 1.0, "tie": 0.5, "B": 0.0}[label]
    return rubric.value_of(label)


def normalise(weights: Mapping[str, float]) -> dict[str, float]:
    """Probabilities proportional to ``weights`` (non-negative, not all zero)."""
    total = sum(weights.values())
    if not total > 0 or math.isnan(total):
        raise ValueError("weights must have a positive sum")
    return {label: w / total for label, w in weights.items()}


def verdict_from_distribution(
    distribution: Mapping[str, float], rubric: Rubric, *, key: str, trial: int, raw_text: str = ""
) -> Verdict:
    """A verdict from probabilities over the scale's labels.

    Trial 0 takes the most probable label (deterministic; ties go to the earlier label of the
    scale). Trial t > 0 samples a label from the distribution with a seed derived from the request
    key and t, so rerun jitter is real and reproducible. ``meta["expected"]`` keeps the expected
    value of the scale under the distribution.
    """
    probs = normalise({label: float(distribution.get(label, 0.0)) for label in rubric.labels})
    if trial == 0:
        label = max(rubric.labels, key=lambda lab: probs[lab])
    else:
        rng = random.Random(int(content_hash([key, trial]), 16))
        label = rng.choices(list(rubric.labels), weights=[probs[lab] for lab in rubric.labels])[0]
    expected = sum(probs[lab] * label_score(lab, rubric) for lab in rubric.labels)
    return Verdict.scored(
        label_score(label, rubric),
        label=label,
        distribution=probs,
        raw_text=raw_text or label,
        meta={"expected": expected},
    )
