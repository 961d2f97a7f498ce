"""What a turn says back: a `Reply` (its text, and what it did) and its `Outcome`.

Every room that answers a turn makes one: the handlers, the home acts (mavend/home/),
the list commands; the daemon, the D-Bus API and Wyoming pass them on. It imports
nothing of mavend, so all of them can.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any


class Outcome(enum.StrEnum):
    """How a turn ended; logged with the turn, and `mavend say`'s exit code reads it."""

    DONE = "done"  # it did what was asked (saved, ran, answered)
    ASKED = "asked"  # it asked a question instead (a missing time, an unclear intent)
    CONFIRM = "confirm"  # a destructive act waits for a spoken "yes"
    REFUSED = "refused"  # not allowed (an act off the allowlist, a bad argument)
    FAILED = "failed"  # it tried and failed (an act exited non-zero, storage broke)
    UNAVAILABLE = "unavailable"  # it needs something that is off or missing (the LLM)

    @property
    def is_failure(self) -> bool:
        return self in (Outcome.FAILED, Outcome.UNAVAILABLE)


@dataclass(frozen=True)
class Change:
    """Something a turn changed, and what taking it back needs (mavend/undo/ does that).

    `kind` says what was done ("reminder.set", "note.add", "list.add", ...) and so what
    undoes it; `ref` holds the ids and values the inverse needs; `summary` is what
    "what did you just do?" says ("set a reminder to call mum at 17:00"). A change that
    cannot be taken back (a command that ran) is still recorded, `undoable` False.
    """

    kind: str
    summary: str
    ref: Mapping[str, Any] = field(default_factory=dict)
    undoable: bool = True


@dataclass(frozen=True)
class Reply:
    """A short text to print, show or speak, and what happened."""

    text: str
    outcome: Outcome = Outcome.DONE
    error_class: str = ""  # coarse: not_found, timeout, exit_status, storage_locked, ...
    data: Mapping[str, Any] = field(default_factory=dict)
    # What to say instead of `text` when it is spoken (a long list, summarised); "" = text.
    spoken: str = ""
    # What this turn changed, each with its inverse (the undo journal keeps them).
    changes: tuple[Change, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out = {
            "text": self.text,
            "outcome": str(self.outcome),
            "error_class": self.error_class or None,
            "data": dict(self.data),
        }
        if self.spoken:
            out["spoken"] = self.spoken
        return out


def human_list(items: Sequence[str], *, conjunction: str = "and") -> str:
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {conjunction} {items[-1]}"


def joined_replies(first: Reply, second: Reply) -> Reply:
    """Two requests said as one: both replies, in order; the outcome that needs the user
    most (a failure, then a question to confirm or answer) is the turn's."""
    rank = [Outcome.FAILED, Outcome.UNAVAILABLE, Outcome.CONFIRM, Outcome.ASKED, Outcome.REFUSED]
    outcomes = [r.outcome for r in (first, second)]
    outcome = next((o for o in rank if o in outcomes), Outcome.DONE)
    spoken = ""
    if first.spoken or second.spoken:
        spoken = f"{first.spoken or first.text} {second.spoken or second.text}"
    return Reply(
        f"{first.text} {second.text}",
        outcome,
        first.error_class or second.error_class,
        {"parts": [first.to_json(), second.to_json()]},
        spoken=spoken,
        changes=first.changes + second.changes,
    )


def with_notice(reply: Reply, notice: str) -> Reply:
    """The reply with a sentence added (shown and spoken); all else unchanged."""
    spoken = f"{reply.spoken} {notice}" if reply.spoken else ""
    return replace(reply, text=f"{reply.text} {notice}", spoken=spoken)
