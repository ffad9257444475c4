"""Peak memory and time of the agreement probe's score statistics on many continuous scores.

A classifier's probabilities are nearly all distinct, the case where a values x values
coincidence matrix per item (what ``krippendorff.alpha`` builds at the interval level) needs
gigabytes for a thousand items. This builds ``--items`` synthetic items, each with three
human ratings on a 1..5 scale (some missing) and a judge probability in [0, 1], and computes the
agreement probe's scale findings (MAE, RMSE, Spearman, quadratic-weighted kappa, and interval
Krippendorff's alpha among judge+humans and among humans, each with its bootstrap interval), then
prints the seconds taken and the process's peak resident memory (``resource.getrusage``).

Run from the project root::

    .venv/bin/python benchmarks/bench_agreement_memory.py --items 100000 --resamples 1000
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np

from judgeprobe.data.items import HumanLabel, PointwiseItem
from judgeprobe.probes.agreement.data import AgreementData, RowBootstrap, scale_map
from judgeprobe.probes.agreement.findings import scale_findings
from judgeprobe.rubrics import builtin_rubric


def _peak_rss_mib() -> float:
    """The process's peak resident set size in MiB (``ru_maxrss`` is KiB on Linux, bytes on
    macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _data(n: int, seed: int) -> AgreementData:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 6, size=n)
    items = []
    for k in range(n):
        labels = tuple(
            HumanLabel(float(np.clip(truth[k] + rng.integers(-1, 2), 1, 5)), f"r{r}")
            for r in range(3)
            if rng.random() > 0.1
        )
        items.append(PointwiseItem(id=f"i{k}", prompt=f"p{k}", response="r", labels=labels))
    items = [i for i in items if len(i.labels) > 0]
    scores = {
        i.id: float(np.clip((i.human_mean - 1) / 4 + rng.normal(0, 0.2), 0, 1)) for i in items
    }
    rubric = builtin_rubric("toxicity")
    mapping = scale_map(rubric, items, (1.0, 5.0))
    return AgreementData.build(items, scores, rubric, mapping, "item", {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    data = _data(args.items, args.seed)
    distinct = len(np.unique(data.judge_score))
    print(f"items {len(data.items)}, distinct judge scores {distinct}")
    print(f"peak RSS after building the data: {_peak_rss_mib():.0f} MiB")
    start = time.perf_counter()
    findings = scale_findings(data, RowBootstrap(0.95, args.resamples, args.seed), "interval")
    seconds = time.perf_counter() - start
    for finding in findings:
        estimate, ci = finding.estimate, finding.estimate.ci
        interval = f"[{ci.low:.4f}, {ci.high:.4f}]" if ci is not None else "no interval"
        print(f"  {finding.name} {dict(finding.labels)}: {estimate.estimate:.4f} {interval}")
    print(f"scale findings with {args.resamples} resamples: {seconds:.1f} s")
    print(f"peak RSS: {_peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
