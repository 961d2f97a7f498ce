"""The daemon's voices in other rooms: its Wyoming satellites (`[[satellites]]`, one
supervised service each) and its Wyoming server (`[wyoming] listen`, Home Assistant's
conversation agent). Both share the speaker's voice when the daemon has one.

On SIGHUP `prepare` loads what must start again (in a thread; a missing model raises and
the running configuration stays), then `commit` swaps it in. Satellites whose settings
did not change stay connected, and the front ends they start from then on use the new
grammar.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mavend.config import Settings
from mavend.daemon.reload import Changes
from mavend.daemon.supervisor import Supervisor

if TYPE_CHECKING:
    from mavend.wyoming.satellite import TurnRunner

log = logging.getLogger("mavend.wyoming.remote")  # the name its journal lines have always had

Service = tuple[str, Callable[[], Awaitable[None]]]


@dataclass
class Pending:
    """What a reload will swap in (`RemoteVoices.prepare`)."""

    settings: Settings
    router: Any
    satellites: Any  # a new, loaded SatelliteService; the running one; or None
    restart_server: bool
    speaker: Any


class RemoteVoices:
    def __init__(self, daemon: Any, supervisor: Supervisor, satellite_turn: TurnRunner):
        self.daemon = daemon  # its submit_text answers the Wyoming server's clients
        self.satellite_turn = satellite_turn  # runs a satellite's transcript as a turn
        self.supervisor = supervisor
        self.satellites: Any = None  # mavend.wyoming.satellite_service.SatelliteService
        self.server: Any = None  # mavend.wyoming.server.WyomingServer

    async def start(self, settings: Settings, router: Any, speaker: Any) -> list[Service]:
        """Load what the settings ask for; the services to run."""
        services: list[Service] = []
        if settings.satellites:
            self.satellites = await self._load_satellites(settings, router, speaker)
            services += self.satellites.services()
        if settings.wyoming.listen:
            self.server = self._make_server(settings, speaker)
            services.append(("wyoming", self.server.run))
        return services

    async def prepare(self, settings: Settings, changed: Changes, router: Any, *,
                      speaker: Any, new_speaker: bool) -> Pending:
        """Load what must start again. `new_speaker`: the speaker (and so the voice
        these share) is a new one: both start again with it (one voice loaded, not two)."""
        satellites = self.satellites if settings.satellites else None
        if settings.satellites and (satellites is None or changed.satellites or new_speaker):
            satellites = await self._load_satellites(settings, router, speaker)
        restart_server = changed.wyoming or (new_speaker and self.server is not None)
        return Pending(settings, router, satellites, restart_server, speaker)

    async def commit(self, pending: Pending) -> None:
        await self._swap_satellites(pending.satellites, pending.router)
        if pending.restart_server:
            await self._restart_server(pending.settings, pending.speaker)

    def announce(self, name: str, text: str) -> bool:
        """Say `text` on satellite `name`; False when there is no such connected one."""
        return self.satellites is not None and self.satellites.announce(name, text)

    def status(self) -> list[dict[str, Any]]:
        return [] if self.satellites is None else self.satellites.status()

    async def _swap_satellites(self, satellites: Any, router: Any) -> None:
        old = self.satellites
        if satellites is old:
            if old is not None:
                old.grammar = getattr(router, "grammar", None)
                old.slots_filled = getattr(router, "slots_filled", None)
            return
        self.satellites = satellites
        new = dict(satellites.services()) if satellites is not None else {}
        for name in sorted(old.links if old is not None else ()):
            if f"satellite:{name}" not in new:
                await self.supervisor.remove(f"satellite:{name}")
                log.info("satellite %s: no longer configured, disconnected", name)
        for name, run in new.items():
            await self.supervisor.replace(name, run)
        log.info("satellites reloaded: %s", ", ".join(sorted(new)) or "none")

    async def _restart_server(self, settings: Settings, speaker: Any) -> None:
        if not settings.wyoming.listen:
            if self.server is not None:
                await self.supervisor.remove("wyoming")
                self.server = None
                log.info("the Wyoming server is off")
            return
        self.server = self._make_server(settings, speaker)
        await self.supervisor.replace("wyoming", self.server.run)
        log.info("the Wyoming server restarted on %s", settings.wyoming.listen)

    async def _load_satellites(self, settings: Settings, router: Any, speaker: Any) -> Any:
        """A loaded SatelliteService (its shared models; a missing one raises ModelError)."""
        from mavend.wyoming.satellite_service import SatelliteService

        satellites = SatelliteService(
            settings,
            self.satellite_turn,
            grammar=getattr(router, "grammar", None),
            slots_filled=getattr(router, "slots_filled", None),
            voice=getattr(speaker, "voice", None),
        )
        await asyncio.to_thread(satellites.load)
        return satellites

    def _make_server(self, settings: Settings, speaker: Any) -> Any:
        from mavend.wyoming.server import WyomingServer

        return WyomingServer(self.daemon, settings, voice=getattr(speaker, "voice", None))
