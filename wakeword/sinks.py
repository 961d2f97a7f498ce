"""Where the front end's events go: a thread-safe callable (see wakeword.frontend);
and when a command is whole (grammar-aware endpointing)."""

from __future__ import annotations

import asyncio
import enum
import queue
from collections.abc import Callable

from wakeword.events import Event, EventSink


class EventQueue:
    """A sink for consumers in threads: `fe = FrontEnd(..., sink=q)`, then `q.get()`."""

    def __init__(self) -> None:
        self._queue: queue.Queue[Event] = queue.Queue()

    def __call__(self, event: Event) -> None:
        self._queue.put(event)

    def get(self, timeout: float | None = None) -> Event:
        return self._queue.get(timeout=timeout)


def asyncio_sink(loop: asyncio.AbstractEventLoop, events: asyncio.Queue) -> EventSink:
    """A sink that hands events to an asyncio queue from the front end's threads."""

    def sink(event: Event) -> None:
        loop.call_soon_threadsafe(events.put_nowait, event)

    return sink


# Words no closed command accepts after it: if the grammar still matches the
# text with these appended, the template ends in a wildcard ("remind me to
# {task}") and the speaker may not be finished.
_OPEN_PROBE = "zebra xylophone quartz"


class Whole(enum.Enum):
    """How whole a partial transcript is as a command: how soon a pause may end it."""

    NO = "no"  # not a command, or one that takes free text still: the full silence
    FILLED = "filled"  # a command whose every slot is filled and resolved: a longer pause
    CLOSED = "closed"  # a command that could not go on: a short pause


def command_checker(
    grammar, slots_filled: Callable[[str], bool] | None = None
) -> Callable[[str], Whole]:
    """`text` -> `Whole`: CLOSED when the grammar matches and nothing could follow (no
    template ends in a wildcard that would take more words); FILLED when it matches and
    `slots_filled` (the router's stage 2: `Router.slots_filled`) says its slots are
    complete ("set a timer for two hours"); otherwise NO."""

    def whole(text: str) -> Whole:
        if grammar.match(text) is None:
            return Whole.NO
        if grammar.match(f"{text} {_OPEN_PROBE}") is None:
            return Whole.CLOSED
        if slots_filled is not None and slots_filled(text):
            return Whole.FILLED
        return Whole.NO

    return whole

