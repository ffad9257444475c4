"""The drift test of ``judgeprobe watch`` on simulated series: false alarms and delays.

Run from the repository root::

    python benchmarks/watch_drift.py --series 1000

For each rerun rate, ``--series`` watches of 100 checks of a stationary judge (no change): the
share with any alarm (the false-alarm rate over 100 checks, against the level 0.05). Then a
judge whose verdicts flip on 10 % of the anchors from check 20 on: the share detected, the share
alarmed before the change, and the median delay (checks from the change to the alarm, the change's
own check counted as 1), for 20 and 40 anchors per check. The simulation is
``tests/drift_simulation.py`` (a pool of 200 anchors, the null from 100 reruns).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from drift_simulation import simulate_series

ALPHA = 0.05


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"level {ALPHA}, 100 checks per series, {args.series} series per line")
    print("stationary judge: rerun rate, anchors per check, series with a false alarm")
    for rate in (0.0, 0.05, 0.2):
        for anchors in (20, 40):
            start = time.perf_counter()
            runs = simulate_series(
                series=args.series,
                checks=100,
                anchors=anchors,
                rerun_rate=rate,
                change=0.0,
                change_at=None,
                alpha=ALPHA,
                seed=args.seed,
            )
            alarms = sum(s.detected_at is not None for s in runs) / len(runs)
            print(
                f"  {rate:.2f}  {anchors:3d}  {alarms:.4f}  ({time.perf_counter() - start:.1f} s)"
            )
    print("10% of the anchors flip at check 20: rerun rate, anchors, detected, early, median delay")
    for rate in (0.0, 0.05):
        for anchors in (20, 40):
            runs = simulate_series(
                series=args.series,
                checks=100,
                anchors=anchors,
                rerun_rate=rate,
                change=0.1,
                change_at=20,
                alpha=ALPHA,
                seed=args.seed + 1,
            )
            late = [
                s.detected_at for s in runs if s.detected_at is not None and s.detected_at >= 20
            ]
            early = sum(s.detected_at is not None and s.detected_at < 20 for s in runs)
            delay = statistics.median(d - 19 for d in late) if late else float("nan")
            print(
                f"  {rate:.2f}  {anchors:3d}  {len(late) / len(runs):.3f}  "
                f"{early / len(runs):.3f}  {delay:g}"
            )


if __name__ == "__main__":
    main()
