"""Live updates: every open page gets a queue; a change anywhere tells them all."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

KEEPALIVE_S = 15.0
_END = "\x00end"
QUEUE_BOUND = 64  # a page that stops reading loses updates, never the daemon's memory


class Events:
    """Called on the daemon's loop (from an observer or after a page's write)."""

    def __init__(self) -> None:
        self._queues: set[asyncio.Queue[dict[str, Any]]] = set()
        self._closed = False

    def close(self) -> None:
        """End every stream (the daemon stops): the pages reconnect to the next one."""
        self._closed = True
        for queue in list(self._queues):
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait({"kind": _END})

    def publish(self, kind: str, **data: Any) -> None:
        for queue in list(self._queues):
            if queue.qsize() >= QUEUE_BOUND - 1:  # the last place is the end marker's
                continue
            queue.put_nowait({"kind": kind, **data})

    @property
    def listeners(self) -> int:
        return len(self._queues)

    async def stream(self) -> AsyncIterator[str]:
        """Server-sent events for one page, until it goes away."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(QUEUE_BOUND)
        if self._closed:
            return
        self._queues.add(queue)
        try:
            yield ": connected\n\n"
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
                except TimeoutError:
                    yield ": keepalive\n\n"
                    continue
                if event["kind"] == _END:
                    return
                yield f"event: {event['kind']}\ndata: {json.dumps(event)}\n\n"
        finally:
            self._queues.discard(queue)
