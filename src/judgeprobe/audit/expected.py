"""The expected cost of an audit in rounds, billed without a judge call.

An audit in rounds (:mod:`judgeprobe.audit.sequential`) stops once the card's verdict can no
longer change, so what it costs depends on how the judge decides: a judge with a clear defect
fails in the first round, a sound one is read until each gated finding is shown to pass or the
items run out. The bill's bound is the audit at a fixed size (every round on every item); its
expectation here is the audit in rounds of a **sound stand-in**: the audit is run, in rounds
exactly as ``judgeprobe audit`` runs it, against :class:`SoundStandIn`, a judge that makes no
call and has none of the defects the probes look for:

- a pointwise request is decided by the items its response holds (an item is found by the first
  :data:`SPAN_WORDS` words of its response, so a span the sensitivity probe inserts is found
  too): positive when any of them is, at the score of the most positive one; an item's score is
  its human label mapped onto the rubric's scale, or, without labels, one end of the scale drawn
  by a hash of its text. Repeats, concatenations, orders, rewordings and the bias edits leave
  the decision where it was; a response swapped for another class's moves it;
- a pairwise request prefers, of the two responses written for its prompt, the one the human
  votes prefer (else the one a hash of the two texts picks, the same in both orders); a response
  not written for the prompt (cut short, off topic) loses to one that was;
- a generation request gets an answer of the rubric's ``max_new_tokens`` words.

Such a judge is what an audit is run to certify, and the one whose audit costs most among judges
that pass: the expectation is an upper estimate for a judge that will pass, and a judge with a
decided defect stops sooner. The requests the stand-in was asked are then billed as the bill bills
any plan (the judge's own token counts, the run store's verdicts, the prices).
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from judgeprobe._util.hashing import content_hash
from judgeprobe.audit.config import AuditConfig
from judgeprobe.core.judge import InTheNameOf, Judge, JudgeCapabilities
from judgeprobe.core.request import Request
from judgeprobe.core.verdict import Verdict
from judgeprobe.data.items import Item, PairwiseItem, PointwiseItem
from judgeprobe.rubrics import Rubric

SPAN_WORDS = 40
"""An item is found in a request by this many first words of its response (the most words the
sensitivity probe's ``insert_harmful`` span takes)."""


def _key(text: str) -> str:
    return " ".join(text.split()[:SPAN_WORDS])


def _draw(*parts: object) -> int:
    return int(content_hash(list(parts))[:8], 16)


class SoundStandIn(InTheNameOf):
    """A judge without the defects the probes look for, that makes no call (module docstring).

    It answers for ``judge``: the same fingerprint, description, capabilities and token counts,
    so its requests have the keys, the skips and the token counts the judge's would.
    """

    def __init__(self, judge: Judge, items: Sequence[Item]) -> None:
        super().__init__(judge)
        self.asked: dict[str, Request] = {}
        self._points: dict[str, float] = {}
        """Per item (the first words of its response), where it lies between the scale's
        negative end (0) and its positive end (1)."""
        self._pairs: dict[str, dict[str, float]] = {}
        points = [i for i in items if isinstance(i, PointwiseItem)]
        human = [v for i in points for v in i.human_scores]
        self._human = (min(human), max(human)) if human else None
        for item in points:
            self._points.setdefault(_key(item.response), self._share(item))
        for pair in (i for i in items if isinstance(i, PairwiseItem)):
            self._pairs.setdefault(pair.prompt, {}).update(_preference(pair))

    # -- the Judge protocol, answered in the judge's name ---------------------------------------
    @property
    def capabilities(self) -> JudgeCapabilities:
        return dataclasses.replace(self.inner.capabilities, batch_size=1, in_process=False)

    async def judge(self, request: Request) -> Verdict:
        self.asked[request.key] = request
        return self.verdict(request)

    async def judge_batch(self, requests: Sequence[Request]) -> list[Verdict]:
        return [await self.judge(r) for r in requests]

    async def aclose(self) -> None:
        return None  # the audited judge is not ours to close

    # -- the stand-in's decisions ----------------------------------------------------------------
    def verdict(self, request: Request) -> Verdict:
        """What the sound stand-in answers to ``request``."""
        rubric = request.rubric
        if rubric.kind == "generation":
            return Verdict.scored(
                float(rubric.max_new_tokens), raw_text=" ".join(["answer"] * rubric.max_new_tokens)
            )
        fields = request.field_map
        if rubric.kind == "pairwise":
            return self._pairwise(fields)
        response = fields.get("response", "")
        found = [share for key, share in self._points.items() if key and key in response]
        negative, positive = _ends(rubric)
        share = max(found, default=0.0)
        return Verdict.scored(negative + share * (positive - negative))

    def _pairwise(self, fields: Mapping[str, str]) -> Verdict:
        own = self._pairs.get(fields.get("prompt", ""), {})
        a = own.get(fields.get("response_a", ""))
        b = own.get(fields.get("response_b", ""))
        if a is None and b is None:
            choice = "tie"
        elif b is None or (a is not None and a > b):
            choice = "A"
        elif a is None or b > a:
            choice = "B"
        else:
            choice = "tie"
        return Verdict.scored({"A": 1.0, "tie": 0.5, "B": 0.0}[choice], label=choice)

    def _share(self, item: PointwiseItem) -> float:
        """The item's mean human label on the labels' range, else one end drawn by a hash."""
        values = item.human_scores
        if values and self._human is not None:
            low, high = self._human
            return (sum(values) / len(values) - low) / ((high - low) or 1.0)
        return float(_draw("class", item.response) % 2)


def _ends(rubric: Rubric) -> tuple[float, float]:
    """The rubric's scores at its negative end and at its positive end."""
    if rubric.kind in ("scale", "binary") and rubric.labels:
        values = sorted(rubric.value_of(label) for label in rubric.labels)
        ends = (values[0], values[-1])
    else:
        ends = rubric.score_range or (0.0, 1.0)
    rule = rubric.decision
    if rule is not None and not rule.higher_is_positive:
        return ends[1], ends[0]
    return ends[0], ends[1]


def _preference(pair: PairwiseItem) -> dict[str, float]:
    """The two responses of ``pair`` with a rank each: the human majority's pick higher."""
    votes = [v.choice for v in pair.human_votes]
    a, b = votes.count("A"), votes.count("B")
    if a == b:
        a = _draw("pair", pair.response_a, pair.response_b) % 2
        b = 1 - a
    return {pair.response_a: float(a > b), pair.response_b: float(b > a)}


@dataclass(frozen=True, slots=True)
class RoundsExpectation:
    """The audit in rounds of the sound stand-in: its requests and how it ended."""

    requests: tuple[Request, ...]
    rounds: int
    verdict: str
    stopped: str


def expect_rounds(config: AuditConfig, judge: Judge, items: Sequence[Item]) -> RoundsExpectation:
    """Run ``config``'s audit in rounds against :class:`SoundStandIn` of ``judge`` (in a
    temporary folder, no call made) and return what it asked and how it ended."""
    from judgeprobe.audit.run import run_audit
    from judgeprobe.report import build_card

    stand_in = SoundStandIn(judge, items)
    with tempfile.TemporaryDirectory() as folder:
        sandboxed = config.model_copy(update={"out": str(Path(folder) / "out")})
        outcome = run_audit(sandboxed, judge=stand_in, write_card=False, progress=False)
        card = build_card(outcome.store_path, run_id=outcome.run_id)
    rounds = card.get("rounds") or {}
    return RoundsExpectation(
        requests=tuple(stand_in.asked.values()),
        rounds=len(rounds.get("rounds") or []),
        verdict=str(card["summary"]["overall"]),
        stopped=str(rounds.get("stopped_because") or rounds.get("stopped") or ""),
    )
