"""Specifications of the files judgeprobe writes beside a run: never through a planted link.

The run store's lock file gets the holder's process id written over it, and the card's
``figures/`` folder gets a file per figure. A symbolic link planted at either place would have
those writes land wherever it points (a user's dotfile truncated, figures spread into another
folder); a lock file that is no regular file (a FIFO) would hang the open. Both are refused.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from audited import audited_store
from judgeprobe.engine.lock import StoreLock
from judgeprobe.errors import ConfigError, StoreError
from judgeprobe.report import write_card


def test_a_lock_file_that_is_a_symbolic_link_is_refused_and_its_target_untouched(
    tmp_path: Path,
) -> None:
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    (tmp_path / "run.sqlite.lock").symlink_to(precious)

    with pytest.raises(StoreError, match="symbolic link"):
        StoreLock(tmp_path / "run.sqlite").acquire()

    assert precious.read_text() == "keep me\n"


def test_a_dangling_link_in_place_of_the_lock_file_creates_nothing(tmp_path: Path) -> None:
    (tmp_path / "run.sqlite.lock").symlink_to(tmp_path / "elsewhere")

    with pytest.raises(StoreError, match="symbolic link"):
        StoreLock(tmp_path / "run.sqlite").acquire()

    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_lock_file_that_is_no_regular_file_is_refused(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "run.sqlite.lock")

    with pytest.raises(StoreError, match="not a regular file"):
        StoreLock(tmp_path / "run.sqlite").acquire()


def test_a_regular_lock_file_still_locks(tmp_path: Path) -> None:
    with StoreLock(tmp_path / "run.sqlite") as lock:
        assert lock.path.read_text().strip() == str(os.getpid())


def test_a_figures_folder_that_is_a_link_is_refused_and_nothing_is_written_there(
    tmp_path: Path,
) -> None:
    store = audited_store(tmp_path / "audit")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "card"
    out.mkdir()
    (out / "figures").symlink_to(elsewhere, target_is_directory=True)

    with pytest.raises(ConfigError, match="figures: not a real folder"):
        write_card(store, out)

    assert list(elsewhere.iterdir()) == []
