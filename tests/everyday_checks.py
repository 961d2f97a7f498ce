"""The everyday suite's judge: the end state a case left, read from the daemon's SQLite
file, against what the case expects (tests/everyday_kit.py runs the cases).

What an expectation may say:

    acts_run        ["lock_screen"]: the act_runs rows' names, exactly (order ignored)
    reminders       the pending reminder rows, exactly as many as listed, each matched
                    by one row: text_has (regex), kind, name (regex), local "HH:MM",
                    day ("+0", "+1", "next": the next HH:MM after the turn,
                    "weekday:mon": the next Monday at HH:MM, "nextweek:mon": the Monday
                    of next week, "dom:1": the next 1st,
                    "date:YYYY-MM-DD", "date:MM-DD": its next occurrence), weekday
                    ("mon": the day of the week), in_min (fire_at is the case's
                    first turn + N min, +-1.5 min),
                    paused (paused_left set), left_min (paused_left, +-1.5 min),
                    rule_has ([..] in the RRULE text), rule_not ([..]), once (rule NULL),
                    byday (the set of BYDAY days), ends (read from the series'
                    occurrences: {"count": 3, "days": 21}: 3 of them, or the last about
                    21 days on; {"date": "12-25"}: the last about then)
    lists           {"shopping": ["eggs", "milk"]}: those lists' open items, exactly
    lists_done      {"shopping": ["eggs"]}: ticked-off items among them
    notes, facts    how many rows
    nothing         true: no act run, nothing pending, no list item, note or fact
    reply_has       regexes the reply must match (case-insensitive); reply_not: must not
    reply_any       at least one of these must match
    reply_max_chars a short acknowledgement
    outcome         "done" or a list of allowed outcomes
    computed        answers checked against what this process computes at check time:
                    {"time_in": "Asia/Tokyo"}, {"days_until": "12-25"}

Times are the user's (Europe/Berlin, the kit's zone), relative to the moment the turn
was said. The judge reads the schema it finds: on an old database (no `rule` column,
no list tables) an expectation about those fails; it does not crash the run.
"""

from __future__ import annotations

import contextlib
import itertools
import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

TZ = ZoneInfo("Europe/Berlin")
# Every table a case can write; deleted between cases (firings before reminders).
STATE_TABLES = (
    "firings",
    "reminders",
    "list_items",
    "lists",
    "session",
    "act_runs",
    "notes",
    "facts",
    "turns",
    "memory",
)
MINUTE_TOLERANCE_S = 90.0
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


# what the database holds -----------------------------------------------------------
@dataclass(frozen=True)
class Snapshot:
    """The end state a case is judged by, read straight from the daemon's SQLite file."""

    acts_run: tuple[str, ...]
    reminders: tuple[dict[str, Any], ...]  # pending rows
    lists: dict[str, list[dict[str, Any]]] | None  # None: no list tables (old schema)
    notes: int
    facts: int
    has_rule: bool
    has_timer_columns: bool


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in db.execute(f"PRAGMA table_info({table})")}


def read_state(database: Path) -> Snapshot:
    with contextlib.closing(sqlite3.connect(database, timeout=10)) as db:
        db.row_factory = sqlite3.Row
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        acts = tuple(r["name"] for r in db.execute("SELECT name FROM act_runs ORDER BY id"))
        columns = _columns(db, "reminders")
        reminders = tuple(
            dict(r)
            for r in db.execute(
                "SELECT * FROM reminders WHERE status = 'pending' ORDER BY fire_ts, id"
            )
        )
        lists: dict[str, list[dict[str, Any]]] | None = None
        if {"lists", "list_items"} <= tables:
            lists = {}
            for r in db.execute("SELECT id, name FROM lists ORDER BY id"):
                lists[r["name"]] = [
                    dict(i)
                    for i in db.execute(
                        "SELECT * FROM list_items WHERE list_id = ? ORDER BY id", (r["id"],)
                    )
                ]
        notes = db.execute("SELECT count(*) FROM notes").fetchone()[0]
        facts = db.execute("SELECT count(*) FROM facts").fetchone()[0]
    return Snapshot(
        acts,
        reminders,
        lists,
        notes,
        facts,
        has_rule="rule" in columns,
        has_timer_columns={"name", "paused_left"} <= columns,
    )


def fired_count(database: Path) -> int:
    with contextlib.closing(sqlite3.connect(database, timeout=10)) as db:
        return int(db.execute("SELECT count(*) FROM firings").fetchone()[0])


def reset_state(database: Path) -> None:
    with contextlib.closing(sqlite3.connect(database, timeout=10)) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        with db:
            for table in STATE_TABLES:
                if table in tables:
                    db.execute(f"DELETE FROM {table}")


# checks ---------------------------------------------------------------------------
def _found(pattern: str, text: str) -> bool:
    return re.search(pattern, text, re.IGNORECASE) is not None


def _fire_at(row: Mapping[str, Any]) -> datetime:
    return datetime.fromisoformat(row["fire_at"]).astimezone(TZ)


def _next_at(moment: datetime, hh: int, mm: int) -> datetime:
    """The first HH:MM after `moment` (today's, else tomorrow's)."""
    candidate = moment.replace(hour=hh, minute=mm, second=0, microsecond=0)
    while candidate <= moment:
        candidate += timedelta(days=1)
    return candidate


def expected_fire_day(day: str, moment: datetime, local: str | None) -> date | str:
    """The date a reminder must fire on, or a sentence why the expectation is malformed."""
    hh, mm = (int(x) for x in (local or "00:00").split(":"))
    today = moment.date()
    if day.startswith(("+", "-")) and day[1:].isdigit():
        return today + timedelta(days=int(day))
    if day == "next":
        return _next_at(moment, hh, mm).date()
    if day.startswith("nextweek:"):
        # "next monday": the Monday of the week after this one (the resolver's rule; said
        # on a Monday it is not today: the case failed on Mondays only)
        wanted = WEEKDAYS.index(day.split(":", 1)[1][:3])
        monday = today - timedelta(days=today.weekday())
        return monday + timedelta(days=7 + wanted)
    if day.startswith("weekday:"):
        wanted = WEEKDAYS.index(day.split(":", 1)[1][:3])
        candidate = _next_at(moment, hh, mm)
        while candidate.weekday() != wanted:
            candidate += timedelta(days=1)
        return candidate.date()
    if day in ("workday", "weekend"):
        candidate = _next_at(moment, hh, mm)
        while (candidate.weekday() < 5) != (day == "workday"):
            candidate += timedelta(days=1)
        return candidate.date()
    if day.startswith("dom:"):
        dom = int(day.split(":", 1)[1])
        candidate = _next_at(moment, hh, mm)
        while candidate.day != dom:
            candidate += timedelta(days=1)
        return candidate.date()
    if day.startswith("date:"):
        when = day.split(":", 1)[1]
        if len(when) == len("12-24"):  # a month and day: its next occurrence
            candidate = _next_at(moment, hh, mm)
            while candidate.strftime("%m-%d") != when:
                candidate += timedelta(days=1)
            return candidate.date()
        return date.fromisoformat(when)
    return f"unknown day expectation {day!r}"


def reminder_mismatch(
    want: Mapping[str, Any], row: Mapping[str, Any], moment: datetime, snap: Snapshot,
    start: datetime | None = None,
) -> str | None:
    """Why `row` is not the reminder `want` describes (None: it is). Day and time are
    relative to `moment` (the turn checked), in_min to `start` (the case's first turn)."""
    fire_at = _fire_at(row)
    if "text_has" in want and not _found(want["text_has"], row["text"] or ""):
        return f"text {row['text']!r} lacks /{want['text_has']}/"
    if "kind" in want and row["kind"] != want["kind"]:
        return f"kind {row['kind']} not {want['kind']}"
    if "name" in want:
        if not snap.has_timer_columns:
            return "no name column (old schema)"
        if not _found(want["name"], row.get("name") or ""):
            return f"name {row.get('name')!r} not /{want['name']}/"
    if "local" in want and fire_at.strftime("%H:%M") != want["local"]:
        return f"fires at {fire_at:%H:%M} not {want['local']}"
    if "day" in want:
        day = expected_fire_day(want["day"], moment, want.get("local"))
        if isinstance(day, str):
            return day
        if fire_at.date() != day:
            return f"fires on {fire_at:%a %Y-%m-%d} not {day:%a %Y-%m-%d} ({want['day']})"
    if "weekday" in want and WEEKDAYS[fire_at.weekday()] != want["weekday"][:3]:
        return f"fires on a {fire_at:%A}, not {want['weekday']}"
    if "in_min" in want:
        target = (start or moment) + timedelta(minutes=float(want["in_min"]))
        off = (fire_at - target).total_seconds()
        if abs(off) > MINUTE_TOLERANCE_S:
            return f"fires at {fire_at:%H:%M:%S}, {off / 60:+.1f} min off start+{want['in_min']}"
    if "paused" in want or "left_min" in want:
        if not snap.has_timer_columns:
            return "no paused_left column (old schema)"
        left = row.get("paused_left")
        if "paused" in want and (left is not None) != bool(want["paused"]):
            return f"paused_left {left!r}: paused should be {want['paused']}"
        if "left_min" in want and (
            left is None or abs(float(left) - 60 * float(want["left_min"])) > MINUTE_TOLERANCE_S
        ):
            return f"paused_left {left!r} s, not about {want['left_min']} min"
    if "rule_has" in want or "rule_not" in want or "once" in want:
        if not snap.has_rule:
            return "no rule column (old schema): no repeating reminders"
        rule = (row.get("rule") or "").upper()
        for part in want.get("rule_has", ()):
            if part.upper() not in rule:
                return f"rule {row.get('rule')!r} lacks {part}"
        for part in want.get("rule_not", ()):
            if part.upper() in rule:
                return f"rule {row.get('rule')!r} has {part}"
        if want.get("once") and row.get("rule"):
            return f"should fire once, rule {row.get('rule')!r}"
        if "byday" in want:
            found = re.search(r"BYDAY=([A-Z0-9,+-]+)", rule)
            days = set(found.group(1).split(",")) if found else set()
            if days != {d.upper() for d in want["byday"]}:
                return f"rule {row.get('rule')!r}: BYDAY should be {','.join(want['byday'])}"
        if "ends" in want and (why := _ends_mismatch(want["ends"], row, moment)):
            return f"rule {row.get('rule')!r}: {why}"
    return None


def series_dates(rule: str, first: datetime, limit: int = 1000) -> list[date] | None:
    """The dates of a series' occurrences from its first (None: it does not end)."""
    from dateutil.rrule import rrulestr

    text = rule.removeprefix("RRULE:")
    try:
        series = rrulestr(text, dtstart=first)
    except ValueError:  # an UNTIL without Z next to an aware start: read both naive
        series = rrulestr(text.replace("Z", ""), dtstart=first.replace(tzinfo=None))
    dates: list[date] = []
    for occurrence in series:
        dates.append(occurrence.date())
        if len(dates) > limit:
            return None
    return dates


def _ends_mismatch(
    ends: Mapping[str, Any], row: Mapping[str, Any], moment: datetime
) -> str | None:
    """A series' end, read from its occurrences: exactly `count` of them, or the last
    within a day of the date meant (`days` from the turn, or a month-day: "12-25")."""
    first = datetime.fromisoformat(row.get("rule_start") or row["fire_at"]).astimezone(TZ)
    try:
        dates = series_dates(row["rule"] or "", first)
    except (ValueError, TypeError) as exc:
        return f"the rule does not parse: {exc}"
    if dates is None:
        return f"the series does not end (want {dict(ends)})"
    if "count" in ends and len(dates) == int(ends["count"]):
        return None
    today = moment.date()
    if "days" in ends:
        meant = today + timedelta(days=int(ends["days"]))
    else:
        month, day = (int(x) for x in ends["date"].split("-"))
        meant = date(today.year, month, day)
        if meant < today:
            meant = date(today.year + 1, month, day)
    if dates and abs((dates[-1] - meant).days) <= 1:
        return None
    last = dates[-1] if dates else "none"
    return f"{len(dates)} occurrences, the last {last}; want {dict(ends)} (about {meant})"


def _describe(row: Mapping[str, Any]) -> str:
    extra = "".join(
        f" {k}={row[k]!r}" for k in ("name", "rule", "paused_left") if row.get(k) is not None
    )
    return f"[{row['kind']} {row['text']!r} at {_fire_at(row):%a %m-%d %H:%M:%S}{extra}]"


def check_reminders(
    wants: Sequence[Mapping[str, Any]], snap: Snapshot, moment: datetime,
    start: datetime | None = None,
) -> list[str]:
    rows = list(snap.reminders)
    pending = ", ".join(_describe(r) for r in rows) or "none"
    if len(rows) != len(wants):
        return [f"{len(rows)} pending reminders, want {len(wants)}: {pending}"]
    if not rows:
        return []
    # The best assignment of rows to expectations (cases hold a handful of rows).
    best: list[str] | None = None
    for order in itertools.permutations(rows):
        problems = [
            f"{_describe(row)}: {why}"
            for want, row in zip(wants, order, strict=True)
            if (why := reminder_mismatch(want, row, moment, snap, start)) is not None
        ]
        if not problems:
            return []
        if best is None or len(problems) < len(best):
            best = problems
    return best or []


def _norm_item(text: str) -> str:
    text = re.sub(r"^(a|an|some|the)\s+", "", text.strip().lower())
    return re.sub(r"[^\w ]+", "", text).strip()


def _items_match(want: Sequence[str], have: Sequence[str]) -> bool:
    """Same items; "egg" matches "eggs" (plural as said or not)."""
    if len(want) != len(have):
        return False
    rest = [_norm_item(h) for h in have]
    for item in want:
        w = _norm_item(item)
        hit = next(
            (h for h in rest if h == w or h.rstrip("s") == w.rstrip("s") or h == w + "es"),
            None,
        )
        if hit is None:
            return False
        rest.remove(hit)
    return True


def _list_key(name: str) -> str:
    """"To-do list", "todo", "to do" -> "todo"."""
    return re.sub(r"[^a-z0-9]+", "", name.lower().strip().removesuffix(" list"))


def _find_list(lists: Mapping[str, Any], name: str) -> str | None:
    return next((have for have in lists if _list_key(have) == _list_key(name)), None)


def check_lists(expect: Mapping[str, Any], snap: Snapshot) -> list[str]:
    problems: list[str] = []
    for key, done in (("lists", 0), ("lists_done", 1)):
        for name, want in (expect.get(key) or {}).items():
            if snap.lists is None:
                if want:
                    problems.append(f"no list tables (old schema): list {name} {want}")
                continue
            found = _find_list(snap.lists, name)
            have = [i["text"] for i in snap.lists.get(found or "", []) if i["done"] == done]
            if not _items_match(want, have):
                label = "open" if done == 0 else "ticked-off"
                problems.append(
                    f"list {name!r} ({found or 'absent'}) {label} items {have}, want {want}"
                    f"; lists: {_lists_text(snap)}"
                )
    return problems


def _lists_text(snap: Snapshot) -> str:
    if snap.lists is None:
        return "(no list tables)"
    return "; ".join(
        f"{name}: {[i['text'] + (' (done)' if i['done'] else '') for i in items]}"
        for name, items in snap.lists.items()
    ) or "none"


def check_computed(computed: Mapping[str, Any], reply: str, now: datetime) -> list[str]:
    problems: list[str] = []
    if "time_in" in computed:
        zone = ZoneInfo(computed["time_in"])
        accepted = []
        for minutes in (-1, 0, 1):
            there = (now + timedelta(minutes=minutes)).astimezone(zone)
            accepted += [
                there.strftime("%H:%M"),
                f"{there.hour % 12 or 12}:{there.minute:02d} ?[ap]\\.? ?m",
            ]
        if not any(_found(rf"(?<!\d){a}", reply) for a in accepted):
            problems.append(
                f"reply lacks the time in {computed['time_in']} "
                f"({now.astimezone(zone):%H:%M} +-1 min): {reply!r}"
            )
    if "days_until" in computed:
        month, day = (int(x) for x in computed["days_until"].split("-"))
        today = now.astimezone(TZ).date()
        target = date(today.year, month, day)
        if target < today:
            target = date(today.year + 1, month, day)
        days = (target - today).days
        if not _found(rf"(?<!\d){days}(?!\d)", reply):
            problems.append(f"reply lacks {days} (days until {target}): {reply!r}")
    return problems


def check(
    expect: Mapping[str, Any],
    turn: Mapping[str, Any],
    snap: Snapshot,
    moment: datetime,
    start: datetime | None = None,
) -> list[str]:
    """Everything `expect` says that the turn and the state it left do not."""
    problems: list[str] = []
    reply = str((turn.get("reply") or {}).get("text") or "")
    outcome = str((turn.get("reply") or {}).get("outcome") or "")
    if expect.get("nothing"):
        if snap.acts_run:
            problems.append(f"acts ran: {list(snap.acts_run)}")
        if snap.reminders:
            problems.append(f"pending: {', '.join(_describe(r) for r in snap.reminders)}")
        if snap.lists and any(snap.lists.values()):
            problems.append(f"list items written: {_lists_text(snap)}")
        if snap.notes or snap.facts:
            problems.append(f"{snap.notes} notes and {snap.facts} facts written")
    if "acts_run" in expect and sorted(snap.acts_run) != sorted(expect["acts_run"]):
        problems.append(f"acts run {list(snap.acts_run)}, want {expect['acts_run']}")
    if "reminders" in expect:
        problems += check_reminders(expect["reminders"], snap, moment, start)
    problems += check_lists(expect, snap)
    for key in ("notes", "facts"):
        if key in expect and getattr(snap, key) != expect[key]:
            problems.append(f"{getattr(snap, key)} {key}, want {expect[key]}")
    for pattern in expect.get("reply_has", ()):
        if not _found(pattern, reply):
            problems.append(f"reply lacks /{pattern}/")
    for pattern in expect.get("reply_not", ()):
        if _found(pattern, reply):
            problems.append(f"reply has /{pattern}/")
    if "reply_any" in expect and not any(_found(p, reply) for p in expect["reply_any"]):
        problems.append(f"reply matches none of {expect['reply_any']}")
    if "reply_max_chars" in expect and len(reply) > int(expect["reply_max_chars"]):
        problems.append(f"reply is {len(reply)} chars, want <= {expect['reply_max_chars']}")
    if "outcome" in expect:
        allowed = expect["outcome"]
        allowed = [allowed] if isinstance(allowed, str) else list(allowed)
        if outcome not in allowed:
            problems.append(f"outcome {outcome!r}, want {' or '.join(allowed)}")
    problems += check_computed(expect.get("computed") or {}, reply, datetime.now(TZ))
    if problems and reply:
        problems.append(f"reply was {reply!r}")
    return problems
