"""Soak (issue 22): the real daemon for hours, or a compressed run of thousands of turns.

    .venv/bin/python bench/soak.py --duration 2h --interval 3s          # the long soak
    .venv/bin/python bench/soak.py --compressed --turns 20000 --firings 2000

A real `mavend run --no-audio` process with its own config and data dirs and a private
session bus (with a recording notification server, tests/notify_server.py). Turns reach
it the way they do in a home: two Wyoming clients ("kitchen" and "study", each its own
connection and conversation id, sending `transcript` events as a satellite pipeline or
Home Assistant does once speech is text) and the D-Bus API (`SayJson`). Audio turns
(wake word + whisper for every turn) are left out: on two shared cores they would measure
the speech models, not the daemon's state over time.

The LLM is off (`[router] llm_enabled = false`): every utterance is one the grammar or
the computed answers settle (clock, dates, arithmetic, units), plus notes ("remember
that ...", which grow the notes table and its embeddings), recalls of those notes and
timers/reminders set by voice that fire during the run. The utterances are generated
here (a seeded mix), not taken from any evaluation set.

Every `--interval` the daemon's RSS (/proc/<pid>/status VmRSS), open fds (/proc/<pid>/fd),
threads and the rows of every table (a read-only SQLite connection) are sampled. At the
end: the RSS slope after warm-up (least squares over the samples after the first 10 %, in
MiB/h), fd and thread growth, each table's growth against what was stored, and the
reminders: set vs fired, each exactly once by the firings table, the notifications the
server received (one per firing tag) and the `ReminderFired` signals on the bus.

Long mode: a turn every `--turn-every` seconds, a timer or reminder every few turns,
each due before the end. Compressed: the turns back to back over the three paths,
`--firings` of them setting a timer/reminder due `--fire-within` seconds later at most,
so the firings are packed into the run; after the last turn it waits for the last one
due. Exit 0 when every check holds. Nothing is written outside a temporary directory
(and `--json OUT`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.soak_kit import (  # noqa: E402
    PATHS,
    Sample,
    Tally,
    Utterances,
    drive,
    fired_signals,
    free_port,
    probe,
    session_bus,
    slope_per_hour,
    start_daemon,
    stop_daemon,
    table_rows,
    write_config,
)
from mavend.machine import describe_machine  # noqa: E402
from tests.notify_server import NotificationServer  # noqa: E402

# ------------------------------------------------------------------ the run


async def run_turns(
    args: argparse.Namespace, pid: int, port: int, address: str, database: Path
) -> tuple[Tally, list[Sample], Counter, float]:
    tally, samples, fired = Tally(), [], Counter()
    talk = Utterances(args.seed)
    queue: asyncio.Queue = asyncio.Queue(maxsize=len(PATHS) * 2)
    stop_signals = asyncio.Event()
    subscribed = asyncio.Event()
    listener = asyncio.create_task(fired_signals(address, fired, subscribed, stop_signals))
    await asyncio.wait_for(subscribed.wait(), 30)
    began = time.monotonic()
    end = began + args.duration_s

    def item(index: int) -> tuple[str, str, int | None]:
        if args.compressed:
            every = max(args.turns // max(args.firings, 1), 1)
            remind = args.firings and index % every == 0 and index // every < args.firings
            delay = talk.rng.randint(args.fire_min_s, args.fire_within_s)
        else:  # a reminder every few turns, due before the end
            remind = index % args.remind_every == 0
            delay = talk.rng.randint(args.fire_min_s, args.fire_within_s)
            remind = remind and time.monotonic() + delay < end - 10
        kind, text = talk.reminder(delay) if remind else talk.other()
        tally.sent[kind] += 1
        tally.utterances.setdefault(text, kind)
        return kind, text, delay if remind else None

    async def feed() -> None:
        index = 0
        # Compressed: the turns, or as many as `--time-limit` allows (0 = no limit).
        limit_at = began + args.time_limit_s if args.time_limit_s else float("inf")
        while (
            (index < args.turns and time.monotonic() < limit_at)
            if args.compressed
            else (time.monotonic() < end)
        ):
            await queue.put(item(index))
            index += 1
            if not args.compressed:
                await asyncio.sleep(args.turn_every_s)
        for _ in PATHS:
            await queue.put(None)

    async def sample_loop() -> None:
        while True:
            rss, fds, threads = probe(pid)
            rows = await asyncio.to_thread(table_rows, database)
            samples.append(
                Sample(
                    round(time.monotonic() - began, 1),
                    round(rss, 1),
                    fds,
                    threads,
                    tally.done,
                    rows,
                )
            )
            s = samples[-1]
            print(
                f"{s.t_s:8.1f} {s.rss_mib:8.1f} {s.fds:4d} {s.threads:4d} {s.turns_done:7d} "
                f"{rows.get('notes', 0):6d} {rows.get('firings', 0):6d}",
                flush=True,
            )
            await asyncio.sleep(args.interval_s)

    print(f"{'t_s':>8} {'rss_mib':>8} {'fds':>4} {'thr':>4} {'turns':>7} {'notes':>6} {'fired':>6}")
    sampler = asyncio.create_task(sample_loop())
    drivers = [asyncio.create_task(drive(p, queue, tally, port, address)) for p in PATHS]
    await feed()
    await asyncio.gather(*drivers)
    turns_s = time.monotonic() - began
    # The last reminders are due after the last turn: wait for them (and their delivery).
    last_due = max(tally.reminders_due, default=0.0)
    while time.monotonic() < last_due + args.fire_grace_s:
        rows = await asyncio.to_thread(table_rows, database)
        if rows.get("firings", 0) >= len(tally.reminders_due) and time.monotonic() > last_due:
            await asyncio.sleep(3.0)  # deliveries and signals trail the firing row
            break
        await asyncio.sleep(0.5)
    sampler.cancel()
    rss, fds, threads = probe(pid)
    samples.append(
        Sample(
            round(time.monotonic() - began, 1),
            round(rss, 1),
            fds,
            threads,
            tally.done,
            await asyncio.to_thread(table_rows, database),
        )
    )
    stop_signals.set()
    await listener
    return tally, samples, fired, turns_s


# ------------------------------------------------------------------ the verdict


SAVED_REPLIES = ("Noted: ", "Saved as a note: ")  # mavend/handlers/note.py


def database_checks(database: Path, tally: Tally) -> dict[str, object]:
    """What the tables say about the turns and the reminders, at the end."""
    conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10)
    try:
        routes: Counter = Counter()
        outcomes: Counter = Counter()
        notes_saved, notes_not_saved = 0, []
        for utterance, outcome, decision, reply in conn.execute(
            "SELECT utterance, outcome, decision, reply FROM turns"
        ):
            kind = tally.utterances.get(utterance, "other")
            decided = (json.loads(decision) or {}).get("decided_by", "") if decision else ""
            routes[f"{kind}:{decided or '-'}"] += 1
            outcomes[f"{kind}:{outcome}"] += 1
            # A note is stored when the reply said so; a note the router took for
            # something else ("remember that the camera 16 is ..." as an act, refused) is
            # a routing miss the user heard, counted apart from the table's growth.
            if kind == "note" and reply.startswith(SAVED_REPLIES):
                notes_saved += 1
            elif kind == "note":
                notes_not_saved.append(f"{utterance!r}: {reply[:60]!r}")
        fired_twice = conn.execute(
            "SELECT COUNT(*) FROM (SELECT reminder_id FROM firings GROUP BY reminder_id"
            " HAVING COUNT(*) > 1)"
        ).fetchone()[0]
        statuses = dict(conn.execute("SELECT status, COUNT(*) FROM reminders GROUP BY status"))
        undelivered = conn.execute(
            "SELECT COUNT(*) FROM firings WHERE delivered_at IS NULL"
        ).fetchone()[0]
        late = [
            _seconds(fired_at) - _seconds(due)
            for due, fired_at in conn.execute("SELECT due, fired_at FROM firings")
        ]
    finally:
        conn.close()
    late.sort()
    return {
        "routes": dict(sorted(routes.items())),
        "outcomes": dict(sorted(outcomes.items())),
        "notes_saved": notes_saved,
        "notes_not_saved": notes_not_saved,
        "reminders_fired_twice": fired_twice,
        "reminder_statuses": statuses,
        "firings_undelivered": undelivered,
        "firing_delay_s": {
            "p50": _pct(late, 0.5),
            "p95": _pct(late, 0.95),
            "max": late[-1] if late else None,
        },
    }


def _seconds(iso: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(iso).timestamp()


def _rate(window: list[Sample]) -> float | None:
    if len(window) < 2 or window[-1].t_s <= window[0].t_s:
        return None
    return round(
        (window[-1].turns_done - window[0].turns_done) / (window[-1].t_s - window[0].t_s), 1
    )


VECTOR_BYTES = 512 * 4  # the USE embedder's float32 vector, one per note and fact


def _vectors_per_kturns(warm: list[Sample]) -> float:
    rows = sum(warm[-1].rows.get(t, 0) - warm[0].rows.get(t, 0) for t in ("notes", "facts"))
    turns = warm[-1].turns_done - warm[0].turns_done
    return round(rows * VECTOR_BYTES / 2**20 / (turns / 1000), 3) if turns else 0.0


def _pct(values: list[float], q: float) -> float | None:
    return round(values[min(int(q * len(values)), len(values) - 1)], 2) if values else None


def summarize(
    tally: Tally,
    samples: list[Sample],
    baseline: dict[str, int],
    db: dict[str, object],
    notified: Counter,
    signalled: Counter,
) -> dict[str, object]:
    warm = samples[int(len(samples) * 0.1) :] or samples
    end_rows = samples[-1].rows
    growth = {t: end_rows.get(t, 0) - baseline.get(t, 0) for t in sorted(end_rows)}
    reminders_set = tally.answered["timer"] + tally.answered["reminder"]
    latencies = sorted(tally.latencies_ms)
    by_kind = {k: sorted(v) for k, v in sorted(tally.latencies_by_kind.items())}
    # The rate over the first and the last quarter of the turns: does it slow as tables grow?
    turning = [s for s in samples if 0 < s.turns_done < tally.done] or samples
    quarter = max(len(turning) // 4, 1)
    return {
        "turns_sent": sum(tally.sent.values()),
        "turns_answered": tally.done,
        "turns_by_path": dict(tally.by_path),
        "turns_by_kind": dict(tally.sent),
        "not_handled_by_kind": dict(tally.not_handled),
        "transport_errors": len(tally.errors),
        "turn_ms": {
            "p50": _pct(latencies, 0.5),
            "p95": _pct(latencies, 0.95),
            "max": round(latencies[-1], 1) if latencies else None,
        },
        "turn_ms_p50_p95_by_kind": {k: [_pct(v, 0.5), _pct(v, 0.95)] for k, v in by_kind.items()},
        "turns_per_s_first_last_quarter": [
            _rate(turning[: quarter + 1]),
            _rate(turning[-quarter - 1 :]),
        ],
        "samples": len(samples),
        "rss_mib": {
            "first": samples[0].rss_mib,
            "after_warmup": warm[0].rss_mib,
            "end": samples[-1].rss_mib,
            "max": max(s.rss_mib for s in samples),
        },
        "rss_slope_mib_per_h": round(slope_per_hour([(s.t_s, s.rss_mib) for s in warm]), 2),
        "slope_from_s": warm[0].t_s,
        # Per turn, not per hour: what a compressed run can say (slope_per_hour's unit is
        # "per 3600 x-units", so turns in x and /3.6 gives MiB per 1000 turns).
        "rss_mib_per_1000_turns": round(
            slope_per_hour([(s.turns_done, s.rss_mib) for s in warm]) / 3.6, 3
        ),
        # Recall keeps every stored note's and fact's vector in memory by design
        # (mavend/search/vectors.py): growth that is what was stored, not a leak.
        "stored_vectors_mib_per_1000_turns": _vectors_per_kturns(warm),
        "fds": {
            "after_warmup": warm[0].fds,
            "end": samples[-1].fds,
            "max": max(s.fds for s in samples),
        },
        "threads": {
            "after_warmup": warm[0].threads,
            "end": samples[-1].threads,
            "max": max(s.threads for s in samples),
        },
        "table_growth": growth,
        "expected_growth": {
            "turns": tally.done,
            "notes": db["notes_saved"],
            "reminders": reminders_set,
            "firings": reminders_set,
        },
        "reminders_set": reminders_set,
        "notifications": {
            "tags": len(notified),
            "shown_twice": sum(1 for n in notified.values() if n > 1),
        },
        "reminder_fired_signals": {
            "ids": len(signalled),
            "twice": sum(1 for n in signalled.values() if n > 1),
        },
        **db,
    }


def checks(
    summary: dict,
    *,
    max_slope: float,
    max_per_kturns: float,
    max_fd_growth: int = 8,
    max_thread_growth: int = 4,
) -> list[str]:
    """The failed checks, in words ([] = the soak passed). RSS growth is judged per hour in
    the long mode, per 1000 turns in the compressed one (its hours are not real hours)."""
    failed: list[str] = []

    def need(ok: bool, what: str) -> None:
        if not ok:
            failed.append(what)

    need(summary["transport_errors"] == 0, f"{summary['transport_errors']} turns got no answer")
    need(summary["turns_answered"] == summary["turns_sent"], "not every turn was answered")
    growth, expected = summary["table_growth"], summary["expected_growth"]
    for table, want in expected.items():
        got = growth.get(table, 0)
        need(got == want, f"table {table} grew by {got}, {want} stored")
    llm = {k: n for k, n in summary["routes"].items() if k.endswith(":llm")}
    need(not llm, f"turns decided by an LLM: {llm}")
    failed_turns = {k: n for k, n in summary["outcomes"].items() if k.endswith(":failed")}
    need(not failed_turns, f"failed turns: {failed_turns}")
    need(summary["reminders_fired_twice"] == 0, "a reminder fired twice")
    statuses = summary["reminder_statuses"]
    pending = statuses.get("pending", 0) + statuses.get("missed", 0)
    need(pending == 0, f"reminders not fired: {statuses}")
    need(summary["firings_undelivered"] == 0, f"{summary['firings_undelivered']} undelivered")
    set_ = summary["reminders_set"]
    notes, sigs = summary["notifications"], summary["reminder_fired_signals"]
    need(
        notes["tags"] == set_ and notes["shown_twice"] == 0,
        f"notifications: {notes['tags']} firings shown ({notes['shown_twice']} twice), {set_} set",
    )
    need(
        sigs["ids"] == set_ and sigs["twice"] == 0,
        f"ReminderFired: {sigs['ids']} ids ({sigs['twice']} twice), {set_} set",
    )
    if summary.get("mode") == "compressed":
        per_kturns = round(
            summary["rss_mib_per_1000_turns"] - summary["stored_vectors_mib_per_1000_turns"], 3
        )
        need(
            per_kturns < max_per_kturns,
            f"RSS grew {per_kturns} MiB per 1000 turns beyond the stored vectors "
            f">= {max_per_kturns:g}",
        )
    else:
        need(
            summary["rss_slope_mib_per_h"] < max_slope,
            f"RSS slope {summary['rss_slope_mib_per_h']} MiB/h >= {max_slope:g}",
        )
    fds, threads = summary["fds"], summary["threads"]
    need(
        fds["end"] - fds["after_warmup"] <= max_fd_growth,
        f"fds grew {fds['after_warmup']} -> {fds['end']}",
    )
    need(
        threads["end"] - threads["after_warmup"] <= max_thread_growth,
        f"threads grew {threads['after_warmup']} -> {threads['end']}",
    )
    need(summary.get("error_log_lines", 0) == 0, f"{summary.get('error_log_lines')} ERROR lines")
    need(summary.get("daemon_exit") == 0, f"the daemon exited with {summary.get('daemon_exit')}")
    return failed


# ------------------------------------------------------------------ main


def seconds(text: str) -> float:
    """ "2h", "90m", "3s", "1.5" (seconds) -> seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([hms]?)\s*", text)
    if match is None:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (say 2h, 30m, 3s)")
    return float(match[1]) * {"h": 3600, "m": 60, "s": 1, "": 1}[match[2]]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=seconds, default=seconds("2h"), dest="duration_s")
    p.add_argument(
        "--interval",
        type=seconds,
        default=None,
        dest="interval_s",
        help="sample every (default 3s; 5s compressed)",
    )
    p.add_argument("--turn-every", type=seconds, default=4.0, dest="turn_every_s")
    p.add_argument("--remind-every", type=int, default=8, help="long mode: every Nth turn")
    p.add_argument("--compressed", action="store_true", help="turns back to back")
    p.add_argument("--turns", type=int, default=20000)
    p.add_argument(
        "--time-limit",
        type=seconds,
        default=0.0,
        dest="time_limit_s",
        help="compressed: stop sending turns after this long (default: none)",
    )
    p.add_argument("--firings", type=int, default=2000)
    p.add_argument("--fire-min", type=int, default=5, dest="fire_min_s")
    p.add_argument(
        "--fire-within",
        type=int,
        default=None,
        dest="fire_within_s",
        help="seconds (default 120; 300 in long mode)",
    )
    p.add_argument("--fire-grace", type=seconds, default=60.0, dest="fire_grace_s")
    p.add_argument("--max-slope-mib-h", type=float, default=5.0, help="long mode's limit")
    p.add_argument(
        "--max-mib-per-1000-turns", type=float, default=1.0, help="compressed mode's limit"
    )
    p.add_argument("--seed", type=int, default=22)
    p.add_argument("--json", type=Path, metavar="OUT")
    p.add_argument("--keep", action="store_true", help="keep the work dir (logs, database)")
    args = p.parse_args(argv)
    if args.interval_s is None:
        args.interval_s = 5.0 if args.compressed else 3.0
    if args.fire_within_s is None:
        args.fire_within_s = 120 if args.compressed else 300
    args.fire_within_s = max(args.fire_within_s, args.fire_min_s)
    if args.compressed:
        args.duration_s = float("inf")
    return args


def commit() -> str:
    out = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "--", "mavend"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return out.stdout.strip() + (" (+ uncommitted changes in mavend/)" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # The recording notification server's loop is dropped, not drained, at the end.
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    mode = "compressed" if args.compressed else "long"
    work = Path(tempfile.mkdtemp(prefix="mavend-soak-"))
    port = free_port()
    config = write_config(work / "config", port)
    env = {
        **os.environ,
        "MAVEND_CONFIG_DIR": str(work / "config"),
        "MAVEND_DATA_DIR": str(work / "data"),
        "XDG_DATA_HOME": str(work / "xdg-data"),
        "XDG_RUNTIME_DIR": str(work),
    }
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("JOURNAL_STREAM", None)
    env.pop("NOTIFY_SOCKET", None)
    database = work / "data" / "mavend.sqlite3"
    machine = describe_machine(load=True)
    settings = {k: v for k, v in vars(args).items() if k not in ("json",)}
    print(f"soak: {mode}; machine: {machine}; commit {commit()}")
    print(f"soak: settings {settings}; config: {config!r}; work dir {work}")
    with contextlib.ExitStack() as stack:
        address = stack.enter_context(session_bus(work))
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        server = NotificationServer(address).start()
        stack.callback(server.stop)
        daemon, ready_s = start_daemon(env, work / "daemon.log")
        stack.callback(stop_daemon, daemon)
        print(f"soak: daemon pid {daemon.pid} ready in {ready_s:.1f} s")
        baseline = table_rows(database)
        began = time.monotonic()
        tally, samples, signalled, turns_s = asyncio.run(
            run_turns(args, daemon.pid, port, address, database)
        )
        wall_s = time.monotonic() - began
        alive = daemon.poll() is None
        db = database_checks(database, tally)
        exit_code = stop_daemon(daemon)
        received = list(server.interface.received)
    notified = Counter(
        str(getattr(n.hints.get("x-dunst-stack-tag"), "value", "")) for n in received
    )
    notified.pop("", None)
    summary = summarize(tally, samples, baseline, db, notified, signalled)
    log_text = (work / "daemon.log").read_text(errors="replace")
    summary.update(
        mode=mode,
        wall_s=round(wall_s, 1),
        turns_s=round(turns_s, 1),
        stopped_by_time_limit=bool(args.compressed and sum(tally.sent.values()) < args.turns),
        ready_s=round(ready_s, 1),
        turns_per_s=round(tally.done / max(turns_s, 1e-9), 1),
        alive_at_end=alive,
        daemon_exit=exit_code if alive else f"died ({daemon.returncode})",
        error_log_lines=sum(1 for ln in log_text.splitlines() if " ERROR " in ln),
        first_errors=tally.errors[:5],
        machine=describe_machine(),
        commit=commit(),
        settings=settings,
        llm="off ([router] llm_enabled = false)",
    )
    failed = checks(
        summary, max_slope=args.max_slope_mib_h, max_per_kturns=args.max_mib_per_1000_turns
    )
    summary["failed_checks"] = failed
    print(json.dumps(summary, indent=1, default=str))
    print_table(summary)
    print("soak: PASS" if not failed else "soak: FAIL: " + "; ".join(failed))
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {"summary": summary, "series": [asdict(s) for s in samples]}, indent=1, default=str
            )
        )
    if args.keep:
        print(f"soak: kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if not failed else 1


def print_table(s: dict) -> None:
    rows = [
        (
            "turns answered / sent",
            f"{s['turns_answered']} / {s['turns_sent']} in {s['turns_s']} s ({s['turns_per_s']}/s)",
        ),
        (
            "turn ms p50 / p95 / max",
            f"{s['turn_ms']['p50']} / {s['turn_ms']['p95']} / {s['turn_ms']['max']}",
        ),
        (
            "turns/s first / last quarter",
            " / ".join(str(v) for v in s["turns_per_s_first_last_quarter"]),
        ),
        ("RSS MiB first / warm / end / max", " / ".join(str(v) for v in s["rss_mib"].values())),
        (
            "RSS slope after warm-up",
            f"{s['rss_slope_mib_per_h']} MiB/h, {s['rss_mib_per_1000_turns']} MiB per 1000 "
            f"turns (from {s['slope_from_s']} s)",
        ),
        (
            "of which stored vectors",
            f"{s['stored_vectors_mib_per_1000_turns']} MiB per 1000 turns",
        ),
        (
            "fds warm -> end (max)",
            f"{s['fds']['after_warmup']} -> {s['fds']['end']} ({s['fds']['max']})",
        ),
        (
            "threads warm -> end (max)",
            f"{s['threads']['after_warmup']} -> {s['threads']['end']} ({s['threads']['max']})",
        ),
        (
            "reminders set / fired rows",
            f"{s['reminders_set']} / {s['table_growth'].get('firings')}",
        ),
        ("fired twice / undelivered", f"{s['reminders_fired_twice']} / {s['firings_undelivered']}"),
        (
            "notifications / signals",
            f"{s['notifications']['tags']} / {s['reminder_fired_signals']['ids']}",
        ),
        (
            "firing delay s p50 / p95 / max",
            " / ".join(str(v) for v in s["firing_delay_s"].values()),
        ),
        (
            "notes said saved / rows grown",
            f"{s['expected_growth']['notes']} / {s['table_growth'].get('notes')}",
        ),
        (
            "notes routed elsewhere (heard)",
            f"{len(s['notes_not_saved'])} of {s['turns_by_kind'].get('note', 0)}"
            + (f": {'; '.join(s['notes_not_saved'][:3])}" if s["notes_not_saved"] else ""),
        ),
        (
            "rows grown: turns notes memory",
            " ".join(str(s["table_growth"].get(t)) for t in ("turns", "notes", "memory")),
        ),
        ("ERROR log lines", str(s["error_log_lines"])),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    raise SystemExit(main())
