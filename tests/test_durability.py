"""Durability of the daemon (in process): SIGTERM during a slow turn loses nothing and
refuses what comes after; a reload closes the old LLM once its turn is over; the session
table stays bounded however many conversations come and go.

Real daemon, real SQLite file, real grammar and router, the real D-Bus API on a private
bus; only the LLM is scripted (slow on purpose: a turn in flight for longer than the old
fixed 4 s stop wait).
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from pathlib import Path

import pytest

from mavend.api.client import DaemonClient, daemon_pid_on_bus
from mavend.config import Settings
from mavend.daemon.lifecycle import (
    STOP_WAIT_MAX_S,
    Daemon,
    DaemonOptions,
    ShuttingDown,
    stop_wait_s,
    turn_deadline_s,
)
from mavend.errors import MavendError
from mavend.handlers.common import REPLY_TIMEOUT_S
from mavend.router.decision import Intent
from mavend.state.records import SESSION_MAX_ROWS, FactLog, NoteBook, SessionState, TurnLog
from mavend.state.store import Store
from mavend.system.unit import unit_template
from tests.scripted import Route
from tests.state_kit import TZ, kit_router, kit_settings, real_clock
from tests.test_daemon_audio import synchronously, until

SLOW_S = 6.0  # the turn in flight: longer than the old fixed 4 s wait at SIGTERM
FACT = "I drank a glass of water"
LATER = "write down that the spare key is under the mat"  # no grammar phrase: the LLM's


class SlowLlm:
    """A routing LLM that takes `delay_s` per route, and records what happened to it."""

    def __init__(self, name: str, delay_s: float = 0.0):
        self.name = name
        self.delay_s = delay_s
        self.calls: list[str] = []
        self.started = threading.Event()
        self.events: list[str] = []  # "route:<text>", "routed:<text>", "close"
        self.closed = False

    def route(self, utterance: str, *, context: str = "") -> Route:
        self.calls.append(utterance)
        self.events.append(f"route:{utterance}")
        self.started.set()
        time.sleep(self.delay_s)
        self.events.append(f"routed:{utterance}")
        if "water" in utterance:
            return Route(Intent.FACT, 0.95, key="water", value="a glass")
        return Route(Intent.NOTE, 0.95, text=utterance)

    def close(self) -> None:
        self.events.append("close")
        self.closed = True


def options(**changes: object) -> DaemonOptions:
    values: dict[str, object] = {"stdin_turns": False, "notify_replies": False, "poll_s": 0.2}
    values.update(changes)
    return DaemonOptions(**values)  # type: ignore[arg-type]


def rows(settings: Settings) -> tuple[list[str], list[str], list[str]]:
    """(fact values, note texts, logged utterances), read from the file by a new connection."""
    store = Store.open(settings)
    try:
        facts = [f.value for f in FactLog(store, TZ).between("water", None, None)]
        notes = [n.text for n, _, _ in NoteBook(store, TZ).recent()]
        with store.read() as conn:
            turns = [r[0] for r in conn.execute("SELECT utterance FROM turns ORDER BY id")]
        return facts, notes, turns
    finally:
        store.close()


@synchronously
async def test_sigterm_lets_the_turn_in_flight_finish_and_refuses_every_later_one(
    tmp_path: Path, session_bus: str
) -> None:
    settings = kit_settings(tmp_path)
    llm = SlowLlm("only", delay_s=SLOW_S)
    router = kit_router(settings, real_clock(), llm=llm)
    daemon = Daemon(settings, router=router, options=options())
    await daemon.start()
    stopped = False
    try:
        async with DaemonClient(session_bus) as client:
            deadline = time.monotonic() + 20
            while not await client.available():
                assert time.monotonic() < deadline, "the D-Bus API did not come up"
                await asyncio.sleep(0.1)
            first = asyncio.create_task(daemon.say(FACT))
            await until(llm.started.is_set, 10, "the slow turn to reach the LLM")
            waiting = asyncio.create_task(daemon.say(LATER))  # queued behind the first
            await asyncio.sleep(0.2)
            started = time.monotonic()
            daemon.request_stop()  # what the SIGTERM handler does
            # After SIGTERM: refused at once, in one sentence, from every entry.
            with pytest.raises(ShuttingDown, match="shutting down"):
                await asyncio.wait_for(daemon.say(LATER + " again"), 1)
            with pytest.raises(MavendError, match="shutting down") as over_dbus:
                await asyncio.wait_for(client.say(LATER + " over the bus"), 5)
            refused_s = time.monotonic() - started
            await daemon.stop()
            stopped = True
            stop_s = time.monotonic() - started
            # Read the moment stop() returns (the database closed, the process would exit).
            facts, notes, turns = rows(settings)
    finally:
        if not stopped:
            await daemon.stop()
    turn = await asyncio.wait_for(first, 30)
    with pytest.raises(ShuttingDown):
        await waiting  # it had not started: refused, not run
    assert turn.decision is not None and turn.decision.intent == Intent.FACT, turn
    # The turn in flight finished after SIGTERM, with the database still open: its fact
    # and its turn-log row are in the file. Nothing of the refused ones is.
    assert facts == ["a glass"], (facts, turn.reply)
    assert turns == [FACT], turns
    assert notes == [], notes
    assert llm.calls == [FACT]
    assert refused_s < 3, refused_s
    assert SLOW_S - 1 < stop_s < SLOW_S + 5, stop_s
    assert "shutting down" in str(over_dbus.value)
    print(f"durability: SIGTERM during a {SLOW_S:.0f} s turn: it finished and was saved; "
          f"stop took {stop_s:.1f} s; the refusal over D-Bus: {over_dbus.value}")


@synchronously
async def test_a_satellite_turn_while_stopping_is_answered_with_a_refusal(
    tmp_path: Path,
) -> None:
    settings = kit_settings(tmp_path)
    daemon = Daemon(settings, router=kit_router(settings, real_clock()),
                    options=options(dbus_api=False))
    await daemon.start()
    try:
        daemon.request_stop()

        class Spec:
            name, room = "kitchen", "kitchen"

        turn = await daemon._satellite_turn("add milk to the shopping list", Spec())
    finally:
        await daemon.stop()
    assert turn.reply.text == "I'm shutting down, so I can't do that now. Nothing was saved."
    assert str(turn.reply.outcome) == "refused"
    store = Store.open(settings)
    try:
        with store.read() as conn:
            assert conn.execute("SELECT count(*) FROM list_items").fetchone()[0] == 0
        assert TurnLog(store, TZ).count() == 0
    finally:
        store.close()


@synchronously
async def test_a_started_daemon_already_owns_its_d_bus_name(
    tmp_path: Path, session_bus: str
) -> None:
    """start() returns (and "mavend is running", READY=1 follow) only once the API owns its
    name: a client that calls at once is answered, not told the daemon is not running
    (CI's failure of stop 33, where a burst of calls came a moment too early)."""
    settings = kit_settings(tmp_path)
    daemon = Daemon(settings, router=kit_router(settings, real_clock()), options=options())
    await daemon.start()
    try:
        # Asked from another thread while this loop waits: the daemon's tasks cannot
        # catch up in the meantime, so only what start() finished counts.
        owner: list[int | None] = []
        asker = threading.Thread(target=lambda: owner.append(daemon_pid_on_bus(session_bus)))
        asker.start()
        asker.join(20)
        assert owner and owner[0] is not None, "start() returned before the API owned its name"
        async with DaemonClient(session_bus) as client:
            assert await client.list_reminders() == []
    finally:
        await daemon.stop()


def test_the_stop_wait_is_the_turn_deadline_and_systemd_waits_longer() -> None:
    settings = Settings()
    # The defaults: a 3 s route and a 15 s free reply, 2 s to write its rows.
    assert turn_deadline_s(settings) == settings.router.llm_timeout_s + REPLY_TIMEOUT_S
    assert stop_wait_s(settings) == pytest.approx(20.0)
    assert DaemonOptions().stop_timeout_s is None  # derived, not a fixed 4 s
    for scope in ("user", "system"):
        stop_sec = re.search(r"^TimeoutStopSec=(\d+)$", unit_template(scope), re.M)
        assert stop_sec is not None, scope
        # systemd's SIGKILL comes well after the longest wait: 6 s to close the rest.
        assert int(stop_sec.group(1)) >= STOP_WAIT_MAX_S + 6, scope
        assert int(stop_sec.group(1)) > stop_wait_s(settings), scope


@synchronously
async def test_a_reload_closes_the_old_llm_after_its_turn_and_the_new_one_serves(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[reminders]\ntimezone = "Europe/Berlin"\n[storage]\ndata_dir = "{tmp_path / "data"}"\n'
        "[notifications]\nenabled = false\n"
    )
    settings = kit_settings(tmp_path)
    old, new = SlowLlm("old", delay_s=1.5), SlowLlm("new")
    made = iter([old, new])

    def factory(settings: Settings, clock):  # type: ignore[no-untyped-def]
        return kit_router(settings, clock, llm=next(made))

    daemon = Daemon(settings, router_factory=factory,
                    options=options(dbus_api=False, config_path=config))
    await daemon.start()
    try:
        in_flight = asyncio.create_task(daemon.say(FACT))
        await until(old.started.is_set, 10, "the turn on the old LLM")
        assert await daemon.reload()
        turn = await in_flight
        await until(lambda: old.closed, 10, "the old LLM's close")
        after = await daemon.say(LATER)
    finally:
        await daemon.stop()
    # The turn that was on the old LLM finished on it, and only then was it closed.
    assert old.events == [f"route:{FACT}", f"routed:{FACT}", "close"], old.events
    assert turn.decision is not None and turn.decision.intent == Intent.FACT
    assert new.calls == [LATER] and not new.closed
    assert after.decision is not None and after.decision.intent == Intent.NOTE


def test_ten_thousand_conversations_leave_a_bounded_session_table(tmp_path: Path) -> None:
    store = Store(tmp_path / "state.db")
    try:
        session = SessionState(store)
        session.put("listening", True)
        now = time.time()
        started = time.monotonic()
        for n in range(10_000):  # one Home Assistant conversation id each, as the keys go
            conversation = f"wyoming:ha-{n:05d}"
            session.put(f"conversation.topic:{conversation}", {"n": n}, expires_ts=now + 300)
            if n % 100 == 0:
                session.put(f"confirm:{conversation}", {"act": "x"}, expires_ts=now + 15)
        took = time.monotonic() - started
        assert session.count() <= SESSION_MAX_ROWS + 1, session.count()
        # The newest conversations are the ones kept; the daemon-wide flag stays.
        assert session.get("listening") is True
        assert session.get("conversation.topic:wyoming:ha-09999") == {"n": 9999}
        assert session.get("conversation.topic:wyoming:ha-00000") is None
        # Expired rows go at start and every few minutes (Daemon: prune with its clock).
        session.put("confirm:satellite:hall", {"act": "y"}, expires_ts=now - 1)
        gone = session.prune(now)
        assert gone >= 1 and session.get("confirm:satellite:hall") is None
        assert session.get("listening") is True
        assert session.prune(now + 400) >= SESSION_MAX_ROWS - 1  # every topic has expired
        assert session.count() == 1
    finally:
        store.close()
    print(f"durability: 10,100 session writes for 10,000 conversations in {took:.1f} s; "
          f"the table kept at most {SESSION_MAX_ROWS} rows")


def test_a_mavend_under_tmp_is_bound_into_the_units_private_tmp(tmp_path: Path) -> None:
    """PrivateTmp=yes hides /tmp from the service: a checkout cloned there (its venv's
    mavend, 203/EXEC under a real systemd before) is bound in, read-only."""
    from mavend.system.unit import UnitPlan, render_unit, tmp_paths

    assert tmp_path.is_relative_to("/tmp"), tmp_path  # pytest's base temp, as on the box
    script = tmp_path / "venv" / "bin" / "mavend"
    script.parent.mkdir(parents=True)
    script.write_text("#!/var/tmp/elsewhere/python\n")
    top = Path("/tmp") / tmp_path.relative_to("/tmp").parts[0]
    found = tmp_paths((str(script),))
    assert top in found and Path("/var/tmp/elsewhere") in found, found
    unit = render_unit(UnitPlan("system", (str(script),), tmp_paths=found))
    assert re.search(r"^PrivateTmp=yes\n#.*\nBindReadOnlyPaths=.*" + re.escape(str(top)),
                     unit, re.M), unit
    assert "BindReadOnlyPaths" not in render_unit(UnitPlan("system", ("/usr/bin/mavend",)))
