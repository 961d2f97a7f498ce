"""A really full disk: the database on a 1 MiB tmpfs, filled to the last byte.

A write that does not fit fails with one sentence that says the disk is full (a
`StorageFullError`), rolls back (the COMMIT's failure included), loses none of the rows
written before, and leaves the connection usable: once space is freed, the next write on
the same thread and the same connection succeeds, without reopening anything.

Needs root to mount the tmpfs (the test box runs as root). It never skips: where the mount
cannot be made, the test fails and says why.
"""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mavend.errors import StorageError
from mavend.scheduler import ReminderBook
from mavend.state.records import NoteBook
from mavend.state.store import StorageFullError, Store
from tests.state_kit import TZ

SIZE = "1m"
BIG = 300_000  # characters: more than the whole file system holds


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "small-disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={SIZE},mode=0700", "mavend-test-full", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(
            f"cannot mount a {SIZE} tmpfs to fill up (uid {os.getuid()}; needs root, or "
            f"CAP_SYS_ADMIN): `mount` exited {done.returncode}: {done.stderr.strip()}"
        )
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> Path:
    """Write a file until the file system has no byte left."""
    filler = disk / "filler"
    block = b"\0" * 4096
    with open(filler, "wb", buffering=0) as out:
        try:
            while True:
                out.write(block)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    with open(filler, "ab", buffering=0) as out:  # the last partial block
        try:
            while True:
                out.write(b"\0")
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    assert os.statvfs(disk).f_bavail == 0
    return filler


def test_a_full_disk_fails_a_write_in_one_sentence_and_the_next_one_succeeds(
    small_disk: Path,
) -> None:
    store = Store(small_disk / "state.db")
    try:
        notes = NoteBook(store, TZ)
        book = ReminderBook(store, TZ)
        now = datetime.now(TZ)
        kept_note = notes.add("the spare key is under the mat", now)
        kept_reminder = book.add("water the plants", now + timedelta(hours=1), now=now)
        connection = store.connection()
        filler = fill(small_disk)

        with pytest.raises(StorageFullError) as note_error:
            notes.add("a long note " * (BIG // 12), now)
        with pytest.raises(StorageFullError) as reminder_error:
            book.add("x" * BIG, now + timedelta(hours=2), now=now)
        for error in (note_error.value, reminder_error.value):
            message = str(error)
            assert "is full" in message and "nothing was saved" in message, message
            assert message.count(". ") == 0 and "\n" not in message, message  # one sentence
            assert error.reason == "the disk is full"
        # Still full, and still serving: a read works, and nothing earlier was lost.
        assert [n.text for n, _, _ in notes.recent()] == [kept_note.text]
        assert [r.text for r in book.list()] == [kept_reminder.text]
        assert not connection.in_transaction

        filler.unlink()  # space freed: the same thread, the same connection, no reopening
        added = notes.add("the boiler code is 4411", now)
        later = book.add("call the plumber", now + timedelta(hours=3), now=now)
        assert store.connection() is connection
        assert [n.text for n, _, _ in notes.recent()] == [added.text, kept_note.text]
        assert [r.text for r in book.list()] == [kept_reminder.text, later.text]
    finally:
        store.close()
    # And from a new connection (what the next start reads): the same rows, nothing more.
    reopened = Store(small_disk / "state.db")
    try:
        texts = [n.text for n, _, _ in NoteBook(reopened, TZ).recent()]
        assert texts == ["the boiler code is 4411", "the spare key is under the mat"]
        assert len(ReminderBook(reopened, TZ).list()) == 2
    finally:
        reopened.close()
    print(f"durability: full {SIZE} tmpfs: {note_error.value}")


def test_a_commit_that_fails_is_rolled_back_and_the_thread_writes_again(tmp_path: Path) -> None:
    """SQLite ends the transaction itself when a full disk fails the COMMIT (above); some
    COMMIT failures it leaves open (a deferred constraint, SQLITE_BUSY without WAL). Those
    are rolled back too: the thread's next write does not hit "cannot start a transaction
    within a transaction"."""
    store = Store(tmp_path / "state.db")
    try:
        book = ReminderBook(store, TZ)
        now = datetime.now(TZ)
        kept = book.add("water the plants", now + timedelta(hours=1), now=now)
        connection = store.connection()
        failing = pytest.raises(StorageError, match="FOREIGN KEY")  # at COMMIT, not before
        with failing, store.write("recording a firing") as conn:
            conn.execute("PRAGMA defer_foreign_keys = ON")
            conn.execute(
                "INSERT INTO firings (reminder_id, due, fired_at) VALUES (?, ?, ?)",
                (kept.id + 1000, "2026-01-01T00:00:00", "2026-01-01T00:00:00"),
            )
        assert not connection.in_transaction
        later = book.add("call the plumber", now + timedelta(hours=2), now=now)
        assert store.connection() is connection
        assert [r.text for r in book.list()] == [kept.text, later.text]
        with store.read() as conn:
            assert conn.execute("SELECT count(*) FROM firings").fetchone()[0] == 0
    finally:
        store.close()
