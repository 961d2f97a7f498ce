"""Storing a repair is one transaction (issue 22, item 9): two writers never store two.

Two connections to one SQLite file (two `Store`s, as the daemon and `mavend say` have):
while one holds the write lock and is about to store the same correction, the other
stores it too. The look-up and the insert must be one IMMEDIATE transaction, so the
second sees the first's row and credits it; read outside the transaction, it stored a
duplicate. Then two real processes store the same corrections at once (a stress check:
read outside the transaction, they collide only now and then).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from mavend.memory.records import (
    _COLUMNS,
    CORRECTED,
    REPAIR,
    REPAIR_PREFIX,
    MemoryTable,
    Repair,
    _marker,
)
from mavend.memory.signature import FailureSignature
from mavend.state.store import Store, iso
from tests.scripted import NOW

SIGNATURE = FailureSignature("bins_out_remember_take_tonight", "note", "corrected")
TARGET = {"intent": "reminder", "fn": "", "args": {}}


def repair_rows(store: Store) -> list[tuple[str, int, int]]:
    with store.read() as conn:
        rows = conn.execute(
            "SELECT name, successes, failures FROM memory WHERE kind = 'repair' ORDER BY id"
        ).fetchall()
    return [tuple(r) for r in rows]


def test_a_repair_stored_while_another_connection_stores_it_is_credited_not_doubled(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mavend.sqlite3"
    first, second = Store(path), Store(path)
    results: list[Repair] = []
    errors: list[BaseException] = []

    def store_it() -> None:
        try:
            results.append(
                MemoryTable(second).store_repair(
                    scope="owner", signature=SIGNATURE, utterance="u", now=NOW, **TARGET
                )
            )
        except BaseException as exc:  # reported below
            errors.append(exc)

    with first.write("the other writer") as conn:
        # The other process is storing the same repair: it holds the write lock.
        racer = threading.Thread(target=store_it)
        racer.start()
        time.sleep(0.3)  # the racer is waiting for the lock by now
        conn.execute(
            f"INSERT INTO memory ({_COLUMNS.partition(', ')[2]})"
            " VALUES (?, ?, 'owner', 'u', 'reminder', '', '{}', 1.0, ?, ?, 1, 0, ?, ?, ?)",
            (
                REPAIR,
                REPAIR_PREFIX + SIGNATURE.key(),
                CORRECTED,
                _marker(REPAIR, signature=SIGNATURE.to_json(), intent="reminder", fn=""),
                iso(NOW),
                NOW.timestamp(),
                NOW.timestamp(),
            ),
        )
    racer.join(10)
    assert not racer.is_alive() and not errors, errors
    assert repair_rows(first) == [(REPAIR_PREFIX + SIGNATURE.key(), 2, 0)]
    assert results[0].successes == 2
    first.close()
    second.close()


WORKER = """
import json, sys, time
from datetime import datetime
from pathlib import Path
from mavend.memory.records import MemoryTable
from mavend.memory.signature import FailureSignature
from mavend.state.store import Store

path, start, count = Path(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
table = MemoryTable(Store(path, timeout_s=30.0))
now = datetime.fromisoformat(sys.argv[4])
while time.time() < start:
    time.sleep(0.001)
for i in range(count):
    sig = FailureSignature(f"pattern_{i}", "note", "corrected")
    table.store_repair(scope="owner", signature=sig, utterance=f"u{i}", intent="reminder",
                       fn="", args={}, now=now)
print(json.dumps("ok"))
"""


def test_two_processes_storing_the_same_corrections_store_each_once(tmp_path: Path) -> None:
    path = tmp_path / "mavend.sqlite3"
    store = Store(path)  # migrated before the workers start
    count = 40
    start = time.time() + 1.5  # both import mavend first, then go at once
    argv = [sys.executable, "-c", WORKER, str(path), str(start), str(count), NOW.isoformat()]
    workers = [subprocess.Popen(argv, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [w.communicate(timeout=60)[0] for w in workers]
    assert [w.returncode for w in workers] == [0, 0]
    assert [json.loads(o) for o in outputs] == ["ok", "ok"]
    rows = repair_rows(store)
    assert len(rows) == count  # one repair per signature
    assert {(s, f) for _, s, f in rows} == {(2, 0)}  # stored by one, credited by the other
    store.close()
