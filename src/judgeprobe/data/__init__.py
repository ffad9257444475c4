"""Items and the loaders that read them from files."""

from judgeprobe.data.items import (
    PAIRWISE_CHOICES,
    HumanLabel,
    Item,
    PairwiseChoice,
    PairwiseItem,
    PointwiseItem,
    Vote,
    strict_majority,
)

__all__ = [
    "PAIRWISE_CHOICES",
    "HumanLabel",
    "Item",
    "PairwiseChoice",
    "PairwiseItem",
    "PointwiseItem",
    "Vote",
    "strict_majority",
]
