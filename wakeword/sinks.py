"""Where the front end's events go: a thread-safe callable (see wakeword.frontend);
and when a command is whole (grammar-aware endpointing)."""

from __future__ import annotations

import asyncio
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


def closed_command_checker(grammar) -> Callable[[str], bool]:
    """True for text that is a whole stage-0 command and could not go on."""

    def is_complete(text: str) -> bool:
        if grammar.match(text) is None:
            return False
        return grammar.match(f"{text} {_OPEN_PROBE}") is None

    return is_complete
