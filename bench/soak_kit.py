"""The soak's parts (bench/soak.py): the utterances it says, /proc and SQLite probes, the
private bus and the daemon process, and the three paths a turn takes (two Wyoming
clients, the D-Bus API)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from wyoming.event import Event

from mavend.api.client import DaemonClient
from mavend.wyoming.protocol import read_event, write_event
from tests.conftest import BUS_CONFIG  # the tests' private session bus

ROOT = Path(__file__).resolve().parent.parent
# The daemon runs the code next to this file (a worktree of a commit, say), not whatever
# `mavend` the venv's entry point would import.
DAEMON = [sys.executable, "-m", "mavend", "run", "--no-audio"]
READY = "mavend is running"
SATELLITES = ("kitchen", "study")
PATHS = (*SATELLITES, "dbus")
TURN_TIMEOUT_S = 120.0

# ------------------------------------------------------------------ utterances

THINGS = (
    "spare key",
    "bike lock",
    "passport",
    "blue folder",
    "charger",
    "torch",
    "umbrella",
    "tax papers",
    "sewing kit",
    "ladder",
    "guest towels",
    "camera",
    "tent",
    "wrench",
)
PLACES = (
    "in the hall drawer",
    "under the sink",
    "on the top shelf",
    "in the garage",
    "behind the sofa",
    "in the red box",
    "in the attic",
    "next to the printer",
)
TASKS = (
    "stretch",
    "check the oven",
    "water the basil",
    "move the laundry",
    "call the plumber",
    "take the bread out",
    "close the window",
    "feed the cat",
    "stand up",
)
CITIES = ("tokyo", "new york", "london", "sydney", "paris", "chicago")
UNITS = (
    ("kilometers", "miles"),
    ("miles", "kilometers"),
    ("pounds", "kilograms"),
    ("kilograms", "pounds"),
    ("inches", "centimeters"),
    ("liters", "gallons"),
)
MONTHS = ("january", "march", "may", "july", "september", "november")


class Utterances:
    """A seeded, varied stream: (kind, text). Notes carry a serial so each is new."""

    def __init__(self, seed: int = 22):
        self.rng = random.Random(seed)
        self.notes: list[str] = []  # the things noted so far, for recalls

    def computed(self) -> tuple[str, str]:
        r = self.rng
        a, b = r.randint(2, 999), r.randint(2, 99)
        choices = (
            "what time is it",
            "what's the time",
            "what day is it today",
            "what is the date today",
            f"what time is it in {r.choice(CITIES)}",
            f"what is {a} plus {b}",
            f"what's {a} times {b}",
            f"what is {a} minus {b}",
            f"what is {b} percent of {a}",
            f"convert {b} {r.choice(UNITS)[0]} to {r.choice(UNITS)[1]}",
            f"how many days until {r.choice(MONTHS)} {r.randint(1, 28)}",
        )
        return "computed", r.choice(choices)

    def note(self) -> tuple[str, str]:
        thing = f"{self.rng.choice(THINGS)} {len(self.notes) + 1}"
        self.notes.append(thing)
        return "note", f"remember that the {thing} is {self.rng.choice(PLACES)}"

    def recall(self) -> tuple[str, str]:
        if not self.notes:
            return self.computed()
        return "recall", f"where is the {self.rng.choice(self.notes)}"

    def reminder(self, delay_s: int) -> tuple[str, str]:
        if self.rng.random() < 0.5:
            return "timer", f"set a timer for {delay_s} seconds"
        return "reminder", f"remind me in {delay_s} seconds to {self.rng.choice(TASKS)}"

    def other(self) -> tuple[str, str]:
        pick = self.rng.random()
        if pick < 0.7:
            return self.computed()
        return self.note() if pick < 0.88 else self.recall()


# ------------------------------------------------------------------ sampling


@dataclass(frozen=True)
class Sample:
    t_s: float
    rss_mib: float
    fds: int
    threads: int
    turns_done: int
    rows: dict[str, int]


def probe(pid: int) -> tuple[float, int, int]:
    """(VmRSS in MiB, open fds, threads) of `pid`, from /proc."""
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return int(fields["VmRSS"].split()[0]) / 1024, fds, int(fields["Threads"])


def table_rows(database: Path) -> dict[str, int]:
    """Rows in every table, read-only (never a write lock on the daemon's database)."""
    if not database.exists():
        return {}
    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10)
    try:
        names = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        return {n: conn.execute(f'SELECT COUNT(*) FROM "{n}"').fetchone()[0] for n in names}
    finally:
        conn.close()


def slope_per_hour(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MiB), in MiB per hour; 0 with under 2 points."""
    if len(points) < 2:
        return 0.0
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    var = sum((x - mx) ** 2 for x in xs)
    if var == 0:
        return 0.0
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var * 3600.0


# ------------------------------------------------------------------ the environment


@contextlib.contextmanager
def session_bus(work: Path) -> Iterator[str]:
    daemon = shutil.which("dbus-daemon")
    if daemon is None:
        raise SystemExit("dbus-daemon is not installed: apt-get install dbus")
    config = work / "bus.conf"
    config.write_text(BUS_CONFIG.format(socket=work / "bus"))
    out = subprocess.run(
        [daemon, f"--config-file={config}", "--print-address=1", "--print-pid=1", "--fork"],
        capture_output=True,
        text=True,
        check=True,
        timeout=10,
    ).stdout.split()
    try:
        yield out[0]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(out[1]), signal.SIGTERM)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(directory: Path, port: int) -> str:
    text = (
        "[router]\nllm_enabled = false\n\n"
        f'[wyoming]\nlisten = "tcp://127.0.0.1:{port}"\nsynthesize = false\n\n'
        "[notifications]\nretry_s = 5.0\n"
    )
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.toml").write_text(text)
    return text


def start_daemon(env: dict[str, str], log_path: Path) -> tuple[subprocess.Popen, float]:
    started = time.monotonic()
    with open(log_path, "w") as log_file:
        daemon = subprocess.Popen(
            DAEMON,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
        )
    # Running, and the Wyoming server listening (it starts with the other services).
    while READY not in (text := log_path.read_text(errors="replace")) or (
        "serving Wyoming on" not in text
    ):
        if daemon.poll() is not None or time.monotonic() - started > 300:
            print(log_path.read_text(errors="replace")[-3000:], file=sys.stderr)
            stop_daemon(daemon)
            raise SystemExit(f"soak: the daemon did not start (rc {daemon.poll()})")
        time.sleep(0.1)
    return daemon, time.monotonic() - started


def stop_daemon(daemon: subprocess.Popen) -> int | None:
    if daemon.poll() is None:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(60)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait(10)
    return daemon.returncode


# ------------------------------------------------------------------ turns


@dataclass
class Tally:
    sent: Counter = field(default_factory=Counter)  # by kind
    answered: Counter = field(default_factory=Counter)  # by kind
    by_path: Counter = field(default_factory=Counter)
    not_handled: Counter = field(default_factory=Counter)  # by kind: Wyoming not-handled
    errors: list[str] = field(default_factory=list)  # transport failures
    latencies_ms: list[float] = field(default_factory=list)
    latencies_by_kind: dict[str, list[float]] = field(default_factory=dict)
    reminders_due: list[float] = field(default_factory=list)  # monotonic due times
    utterances: dict[str, str] = field(default_factory=dict)  # text -> kind

    @property
    def done(self) -> int:
        return sum(self.by_path.values())


class Satellite:
    """A Wyoming client: one connection, `transcript` in, `handled`/`not-handled` out."""

    def __init__(self, name: str, port: int):
        self.name, self.port = name, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def turn(self, text: str) -> bool:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        context = {"conversation_id": f"soak-{self.name}"}
        await write_event(self.writer, Event("transcript", {"text": text, "context": context}))
        assert self.reader is not None
        event = await asyncio.wait_for(read_event(self.reader), TURN_TIMEOUT_S)
        if event is None:
            raise ConnectionError("the daemon closed the Wyoming connection")
        return event.type == "handled"

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            with contextlib.suppress(Exception):
                await self.writer.wait_closed()


async def drive(path: str, queue: asyncio.Queue, tally: Tally, port: int, address: str) -> None:
    satellite = Satellite(path, port) if path != "dbus" else None
    client = None if satellite else await DaemonClient(address).connect()
    try:
        while (item := await queue.get()) is not None:
            kind, text, delay = item
            started = time.monotonic()
            try:
                if satellite is not None:
                    handled = await satellite.turn(text)
                else:
                    assert client is not None
                    reply = (await client.say_json(text))["reply"]
                    handled = reply["outcome"] not in ("refused", "failed", "unavailable")
            except Exception as exc:  # recorded; the soak goes on
                tally.errors.append(f"{path}: {text!r}: {type(exc).__name__}: {exc}")
                if satellite is not None:
                    satellite.writer = None
                continue
            took_ms = (time.monotonic() - started) * 1000.0
            tally.latencies_ms.append(took_ms)
            tally.latencies_by_kind.setdefault(kind, []).append(took_ms)
            tally.by_path[path] += 1
            tally.answered[kind] += 1
            if not handled:
                tally.not_handled[kind] += 1
            if delay is not None:
                tally.reminders_due.append(started + delay)
    finally:
        if satellite is not None:
            await satellite.close()
        if client is not None:
            await client.close()


async def fired_signals(
    address: str, fired: Counter, ready: asyncio.Event, stop: asyncio.Event
) -> None:
    """Count `ReminderFired` signals by reminder id (`ready` once subscribed)."""
    from dbus_next import Message, MessageType
    from dbus_next.aio import MessageBus

    bus = await MessageBus(bus_address=address).connect()
    rule = "type='signal',interface='org.mavend.Assistant1',member='ReminderFired'"
    await bus.call(
        Message(
            destination="org.freedesktop.DBus",
            path="/org/freedesktop/DBus",
            interface="org.freedesktop.DBus",
            member="AddMatch",
            signature="s",
            body=[rule],
        )
    )

    def on_message(message: Message) -> None:
        if message.message_type == MessageType.SIGNAL and message.member == "ReminderFired":
            fired[int(message.body[0])] += 1

    bus.add_message_handler(on_message)
    ready.set()
    await stop.wait()
    bus.disconnect()
