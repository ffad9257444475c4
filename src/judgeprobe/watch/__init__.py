"""Watching an audited judge for drift: anchors from the audit, re-judged check after check.

``run_check`` runs one check (:mod:`judgeprobe.watch.check`), ``build_watch`` reads the series
from the watch store (:mod:`judgeprobe.watch.series`), ``report_watch`` writes ``watch.md`` and
``watch.html`` beside the audit (:mod:`judgeprobe.watch.render`); the test is
:mod:`judgeprobe.stats.drift`. See docs/watch.md.
"""

from judgeprobe.watch.check import DEFAULTS, CheckOutcome, run_check, watch_store_path
from judgeprobe.watch.render import report_watch, verdict_line, write_watch
from judgeprobe.watch.series import build_watch

__all__ = [
    "DEFAULTS",
    "CheckOutcome",
    "build_watch",
    "report_watch",
    "run_check",
    "verdict_line",
    "watch_store_path",
    "write_watch",
]
