"""Items and the loaders that read them from files."""

from judgeprobe.data.attaq import load_attaq
from judgeprobe.data.dataset import (
    BINARY_SCALE,
    LIKERT5_SCALE,
    Dataset,
    SkippedRow,
)
from judgeprobe.data.items import (
    PAIRWISE_CHOICES,
    HumanLabel,
    Item,
    PairwiseChoice,
    PairwiseItem,
    PointwiseItem,
    Vote,
    item_fields,
    strict_majority,
)
from judgeprobe.data.mt_bench import load_mt_bench_human
from judgeprobe.data.mt_bench_votes import load_mt_bench_votes
from judgeprobe.data.pairwise_sets import (
    load_evalbiasbench,
    load_hh_rlhf,
    load_judgebench,
    load_llmbar,
    load_pandalm,
)
from judgeprobe.data.pyrit import load_pyrit_csv
from judgeprobe.data.registry import load_dataset
from judgeprobe.data.tables import load_table

__all__ = [
    "BINARY_SCALE",
    "LIKERT5_SCALE",
    "PAIRWISE_CHOICES",
    "Dataset",
    "HumanLabel",
    "Item",
    "PairwiseChoice",
    "PairwiseItem",
    "PointwiseItem",
    "SkippedRow",
    "Vote",
    "item_fields",
    "load_attaq",
    "load_dataset",
    "load_evalbiasbench",
    "load_hh_rlhf",
    "load_judgebench",
    "load_llmbar",
    "load_mt_bench_human",
    "load_mt_bench_votes",
    "load_pandalm",
    "load_pyrit_csv",
    "load_table",
    "strict_majority",
]
