"""mavend/workers.py: a pool whose threads all run, each prepared, before it is used."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from mavend.workers import started_pool


def _named(prefix: str) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith(prefix)]


def test_every_thread_runs_and_is_prepared_before_the_pool_is_returned() -> None:
    prepared: list[int] = []
    pool = started_pool(3, "t-start", initializer=lambda: prepared.append(threading.get_ident()))
    try:
        threads = _named("t-start")
        assert len(threads) == 3
        assert sorted(prepared) == sorted(t.ident for t in threads)
    finally:
        pool.shutdown(wait=True)


def test_more_work_than_threads_waits_instead_of_adding_threads() -> None:
    pool = started_pool(2, "t-busy")
    try:
        ran_on = list(pool.map(lambda _: (time.sleep(0.02), threading.get_ident())[1], range(20)))
        assert len(_named("t-busy")) == 2
        assert set(ran_on) == {t.ident for t in _named("t-busy")}
    finally:
        pool.shutdown(wait=True)


def test_a_failing_preparation_is_logged_and_the_pool_still_works(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken() -> None:
        raise OSError("disk I/O error")

    with caplog.at_level(logging.WARNING, logger="mavend.workers"):
        pool = started_pool(2, "t-broken", initializer=broken)
    try:
        assert pool.submit(lambda: 6 * 7).result(5) == 42
        assert "t-broken: preparing a worker failed (disk I/O error)" in caplog.text
    finally:
        pool.shutdown(wait=True)


def test_a_pool_needs_a_thread() -> None:
    with pytest.raises(ValueError, match="at least one thread, not 0"):
        started_pool(0, "t-none")
