"""A reminder as the book keeps it (`Reminder`, its `Status`) and one occurrence of it
firing (`Firing`): what book.py, edits.py, jobs.py and delivery.py all speak of.
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mavend.recurrence import Series
from mavend.state.store import iso

JOB_PREFIX = "reminder-"


class Status(enum.StrEnum):
    PENDING = "pending"
    FIRED = "fired"  # fired; delivery is tracked on its firing row
    DONE = "done"  # acknowledged ("Done" on the notification)
    CANCELLED = "cancelled"
    MISSED = "missed"  # older than the misfire grace when the daemon came back


ACT_KIND = "act"  # a row that runs an act when it fires (ScheduledAct), not a reminder


@dataclass(frozen=True)
class ScheduledAct:
    """An allowlisted act mavend runs by itself when its row fires: the act's name, its
    checked arguments and the room it was asked in. The allowlist and the arguments are
    checked again when it runs (the config may have changed in between)."""

    fn: str
    args: dict[str, str] = field(default_factory=dict)
    room: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"fn": self.fn, "args": dict(self.args), "room": self.room}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)

    @classmethod
    def loads(cls, text: str | None) -> ScheduledAct | None:
        """The stored act, or None (no act, or a row no version of mavend could read)."""
        if not text:
            return None
        try:
            data = json.loads(text)
        except ValueError:
            return None
        if not isinstance(data, dict) or not isinstance(data.get("fn"), str):
            return None
        args = data.get("args") if isinstance(data.get("args"), dict) else {}
        return cls(data["fn"], {str(k): str(v) for k, v in args.items()},
                   str(data.get("room") or ""))


@dataclass(frozen=True)
class Reminder:
    id: int
    text: str
    kind: str  # reminder | timer
    fire_at: datetime
    due: str  # fire_at exactly as stored: the job argument and the firing key
    status: Status
    snoozes: int
    created_at: datetime
    origin: str | None = None  # the satellite it was set from; None: this box
    series: Series | None = None  # a repeating one: its rule and first occurrence
    name: str | None = None  # a kitchen timer's name ("pasta")
    paused_left: float | None = None  # a paused timer: the seconds it had left
    act: ScheduledAct | None = None  # kind "act": what mavend runs when it fires

    @property
    def job_id(self) -> str:
        return f"{JOB_PREFIX}{self.id}"

    @property
    def paused(self) -> bool:
        return self.paused_left is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "kind": self.kind,
            "fire_at": self.due,
            "status": str(self.status),
            "snoozes": self.snoozes,
            "created_at": iso(self.created_at),
            "origin": self.origin,
            "rule": self.series.rule if self.series else None,
            "rule_start": iso(self.series.start) if self.series else None,
            "repeats": self.series.describe() if self.series else None,
            "name": self.name,
            "paused_left": self.paused_left,
            "act": self.act.to_json() if self.act else None,
        }


@dataclass(frozen=True)
class Firing:
    reminder: Reminder
    due: str
    fired_at: datetime
    late: bool
    delivered_at: datetime | None
    notification_id: int | None
    attempts: int
    # A scheduled act's firing: None not started, "" started and never finished (a crash:
    # it is not run again), else how it went.
    act_result: str | None = None
