"""The cluster probe's design: its clusters, the concatenations drawn from each, and their roles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from judgeprobe.core.plan import Role
from judgeprobe.data.items import PointwiseItem

ClusterBy = Literal["auto", "class", "quantile"]
Clustering = Literal["class", "quantile"]


@dataclass(frozen=True, slots=True)
class Cluster:
    """One cluster of items: its name, how it was chosen and its members (sorted ids)."""

    name: str
    rule: str
    members: tuple[str, ...]
    score_min: float
    score_max: float
    upward: bool = True
    """The cluster's own direction: True when its class (or tail) lies towards higher scores."""


@dataclass(frozen=True, slots=True)
class Concatenations:
    """The concatenations drawn from one cluster for one k: the part ids of each, in order."""

    cluster: str
    k: int
    parts: tuple[tuple[str, ...], ...]
    with_replacement: bool = False
    """True when the cluster has fewer than k items, so parts were drawn with replacement."""


@dataclass(frozen=True, slots=True)
class ClusterDesign:
    """The items and, once drawn from the base scores, the clusters and their concatenations.

    The first stage has only the items (``drawn`` False); :meth:`ClusterProbe.refine` adds the
    clusters tested (those with at least two members), the concatenations of each cluster and
    k (in the order of ``ks``) and the notes the drawing made.
    """

    items: tuple[PointwiseItem, ...]
    clustering: Clustering
    drawn: bool = False
    clusters: tuple[Cluster, ...] = ()
    concatenations: tuple[Concatenations, ...] = ()
    notes: tuple[str, ...] = ()

    def of(self, cluster: str) -> list[Concatenations]:
        """The concatenations of ``cluster``, one entry per k."""
        return [c for c in self.concatenations if c.cluster == cluster]


def concat_role(cluster: str, k: int, index: int) -> Role:
    """The role of the ``index``-th concatenation of k parts drawn from ``cluster``."""
    return ("concat", cluster, k, index)
