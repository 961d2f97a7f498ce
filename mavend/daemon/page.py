"""The household's page as one of the daemon's services (`[web] enabled`): the app
from mavend/web/, its live updates fed by the daemon's observers, its writes run in the
turn worker one at a time with the turns."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from mavend.assistant import Assistant, Turn
from mavend.config import Settings
from mavend.errors import MavendError
from mavend.scheduler import Firing
from mavend.web import Events, QuietServer, build_app, login_token

log = logging.getLogger(__name__)
T = TypeVar("T")


class PageService:
    def __init__(
        self,
        settings: Settings,
        current: Callable[[], Assistant | None],
        run_in_turn: Callable[[Callable[[Assistant], Any]], Awaitable[Any]],
        satellites: Callable[[], Awaitable[list[dict[str, Any]]]],
    ) -> None:
        self._current, self._run_in_turn = current, run_in_turn
        self._satellites = satellites
        self.events = Events()
        app = build_app(settings, self, self.events, login_token(settings))
        self.server = QuietServer(app, settings)
        self.where = settings.web.listen

    # the Backend the app reads and writes through -------------------------
    def assistant(self) -> Assistant:
        assistant = self._current()
        if assistant is None:
            raise MavendError("the daemon is not running")
        return assistant

    async def write(self, job: Callable[[Assistant], T]) -> T:
        return await self._run_in_turn(job)

    async def satellites(self) -> list[dict[str, Any]]:
        return await self._satellites()

    # the daemon's observer: a turn or a firing changes what the page shows ------
    def transcript(self, text: str, confidence: float) -> None: ...

    def decision(self, turn: Turn) -> None:
        self.events.publish("turn")

    def reminder_fired(self, firing: Firing) -> None:
        self.events.publish("fired", reminder=firing.reminder.id)

    # the service ------------------------------------------------------------
    async def run(self) -> None:
        log.info("the page is at http://%s/", self.where)
        try:
            await self.server.serve()
        except SystemExit:  # uvicorn exits when it cannot bind: say why, let it retry
            raise MavendError(f"the page cannot listen on {self.where}") from None
        except asyncio.CancelledError:
            self.events.close()  # open pages' streams end now, not at the shutdown timeout
            self.server.stop()
            with contextlib.suppress(Exception):
                await asyncio.shield(self.server.server.shutdown())
            raise
