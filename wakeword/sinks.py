"""Where the front end's events go: a thread-safe callable (see wakeword.frontend)."""

from __future__ import annotations

import asyncio
import queue

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
