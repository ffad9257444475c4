"""A recorded judge on the pairwise probes: its votes become the probes' recorded vote source.

The pairwise probes read a judge's votes either live (through the engine) or from a recorded
source in the items' ``judge_votes`` (:mod:`judgeprobe.probes.pairwise.votes`). An audit with
``--judge recorded:PATH`` on pairwise data puts the file's votes (``id`` and ``winner`` or
``label`` A/B/tie, or a score that is one of the rubric's values) on the items under the judge's
name and points each pairwise probe at them; ``--judge recorded:dataset:NAME`` points the probes
at the dataset's own votes of ``NAME``. Either way no judge call is made.

The probe parameter ``judge_source`` did the second before the judge spec did; it still works,
with a :class:`FutureWarning` naming the spec to use instead. When every probe of an audit reads
one such source, the audit's judge is that source (:func:`judge_of_sources`), so the card names
it rather than a judge the audit never calls.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from judgeprobe.data.items import Item, PairwiseItem
from judgeprobe.errors import ConfigError
from judgeprobe.judges.recorded import RecordedJudge
from judgeprobe.probes.base import Probe
from judgeprobe.probes.pairwise.votes import LIVE
from judgeprobe.rubrics import Rubric


def fold_recorded(
    judge: RecordedJudge, name: str, probe: Probe, items: Sequence[Item], rubric: Rubric
) -> tuple[Probe, list[Item]]:
    """``probe`` reading ``judge``'s votes, and ``items`` carrying them (for a pairwise probe;
    any other probe and its items are returned as they are)."""
    source = getattr(probe, "judge_source", None)
    if source is None or not dataclasses.is_dataclass(probe):
        return probe, list(items)
    if source != LIVE and source != judge.vote_source:
        raise ConfigError(
            f"probes.{name}: judge_source {source!r} and the judge {judge.name!r} name two "
            "judges; drop judge_source (the recorded judge's votes are the probe's)"
        )
    votes_of = judge.vote_source or judge.name
    if judge.vote_source is None:
        votes = judge.pairwise_votes(rubric)
        items = [
            dataclasses.replace(item, judge_votes={**item.judge_votes, votes_of: votes[item.id]})
            if isinstance(item, PairwiseItem) and item.id in votes
            else item
            for item in items
        ]
    return dataclasses.replace(probe, judge_source=votes_of), list(items)


def judge_of_sources(probes: Sequence[Probe]) -> RecordedJudge | None:
    """The recorded judge ``recorded:dataset:NAME`` when every probe reads the recorded source
    ``NAME`` (the deprecated ``judge_source``): the audit's judge is then never called, and the
    card names that source instead of it. None otherwise."""
    sources = {getattr(probe, "judge_source", None) for probe in probes}
    if len(sources) != 1:
        return None
    (source,) = sources
    if not isinstance(source, str) or source == LIVE:
        return None
    return RecordedJudge(f"dataset:{source}")


def warn_judge_source(name: str, params: Mapping[str, Any]) -> None:
    """Warn that ``judge_source`` (a recorded source) is deprecated in favour of the judge spec."""
    source = params.get("judge_source", LIVE)
    if source != LIVE:
        warnings.warn(
            f"probes.{name}: judge_source {source!r} is deprecated; audit the recorded judge "
            f"with --judge recorded:dataset:{source} (judge: 'recorded:dataset:{source}' in a "
            "config) instead",
            FutureWarning,
            stacklevel=2,
        )
