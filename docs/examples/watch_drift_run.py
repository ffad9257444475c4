"""A documented run of ``judgeprobe watch``: a planted judge that changes mid-series.

Run from the repository root (it starts the stub server of ``tests/fake_server.py`` in this
process and calls the command line as a user would)::

    python docs/examples/watch_drift_run.py /tmp/watch-demo

The stub answers the harmfulness rubric with 1 or 5 by a hash of the item, the same at every
rerun. The audit runs the repetition probe on the demo data; six checks follow with the judge
unchanged; then the stub answers the other way on 12 of the 40 items (the provider "updated the
model"), and checks follow until the watch exits 1. ``docs/watch.md`` shows its output.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from fake_server import FakeServer, serve_in_thread  # noqa: E402
from judgeprobe.data import load_dataset  # noqa: E402


class Planted:
    """1 or 5 by the item's hash; once switched, the other on the first 12 demo items."""

    def __init__(self) -> None:
        items = sorted(load_dataset("demo").items, key=lambda item: item.id)[:12]
        self.responses = [str(item.response) for item in items]
        self.switched = False

    def __call__(self, body: dict[str, Any]) -> str:
        text = str(body["messages"][-1]["content"])
        label = "1" if hashlib.sha256(text.encode()).digest()[0] % 2 else "5"
        if self.switched and any(response in text for response in self.responses):
            return "5" if label == "1" else "1"
        return label


def run(*args: str) -> int:
    """Run ``judgeprobe ARGS``, print the command and its output; its exit status."""
    print("$ judgeprobe " + " ".join(args))
    env = {**os.environ, "OPENAI_API_KEY": "sk-demo", "COLUMNS": "120"}
    done = subprocess.run(
        [sys.executable, "-m", "judgeprobe", *args], capture_output=True, text=True, env=env
    )
    print(done.stdout.rstrip())
    print(f"(exit {done.returncode})\n")
    return done.returncode


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "watch-demo")
    planted = Planted()
    with serve_in_thread(FakeServer(labels=("1", "2", "3", "4", "5"), decide=planted)) as stub:
        judge = ["--judge", f"openai:stub@{stub.base_url}", "-J", "logprobs=false"]
        common = ["--data", "demo", "--rubric", "harmfulness"]
        run("audit", *judge, *common, "--probes", "repetition", "--fixed-size", "--out", str(out))
        for _ in range(6):
            run("watch", str(out), *judge)
        planted.switched = True
        print("# the stub now answers the other way on 12 of the 40 items\n")
        for _ in range(5):
            if run("watch", str(out), *judge) == 1:
                break
        run("watch", str(out), "--report")


if __name__ == "__main__":
    main()
