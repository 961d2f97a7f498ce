"""The daemon's satellites: the shared models, one `SatelliteLink` task per satellite.

Shared by all satellites: one Whisper (`LockedStt`: one utterance at a time on two
cores) and mavend's voice. Each satellite's own: its wake word and VAD models (they
keep per-stream state), its front end, its connection and its backoff.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mavend.config import Settings
from mavend.wyoming.satellite import FrontEndFactory, SatelliteLink, TurnRunner
from mavend.wyoming.satellite_audio import LockedStt

log = logging.getLogger(__name__)


class SatelliteService:
    def __init__(
        self,
        settings: Settings,
        run_turn: TurnRunner,
        *,
        grammar: Any = None,  # the router's stage-0 grammar: vocabulary and early endpoints
        slots_filled: Callable[[str], bool] | None = None,  # the router's: see FrontEnd
        voice: Any = None,  # mavend.tts.Voice (the speaker's, when the daemon has one)
    ):
        self.settings = settings
        self.run_turn = run_turn
        self.grammar = grammar
        self.slots_filled = slots_filled
        self.voice = voice
        self.links: dict[str, SatelliteLink] = {}
        self._stt: LockedStt | None = None

    def load(self) -> None:
        """Load the shared models (blocking: call in a thread). A missing model raises
        ModelError naming `mavend models pull`, as the local microphone's does."""
        from mavend.models import require
        from wakeword.detector import resolve_wake_model
        from wakeword.stt import SpeechToText

        settings = self.settings
        models_dir = settings.models.models_path()
        vocabulary = self.grammar.vocabulary() if self.grammar is not None else []
        self._stt = LockedStt(SpeechToText.from_settings(
            settings.stt, models_dir, wake_words=settings.router.wake_words,
            vocabulary=vocabulary, window=settings.stt.encoder_window,
        ))
        self._wake_files = resolve_wake_model(settings.wakeword.model, models_dir)
        self._vad_path = require("silero-vad", models_dir)
        if self.voice is None and settings.tts.enabled:
            from mavend.errors import MavendError
            from mavend.tts import Voice

            try:
                self.voice = Voice.load(require(settings.tts.voice, models_dir))
            except MavendError as exc:  # replies go as text only
                log.error("satellites get text replies only: %s", exc)
        for spec in settings.satellites:
            self.links[spec.name] = SatelliteLink(
                spec,
                room=spec.room or settings.audio.room,
                run_turn=self.run_turn,
                front_end=self._front_end_factory(),
                voice=self.voice,
            )

    def services(self) -> list[tuple[str, Callable[[], Awaitable[None]]]]:
        """One supervised daemon service per satellite: `satellite:<name>`."""
        return [(f"satellite:{name}", link.run) for name, link in self.links.items()]

    def announce(self, name: str, text: str) -> bool:
        """Say `text` on satellite `name` (a reminder it set); False when it is not
        connected now (the caller speaks it here instead). Call on the event loop."""
        import asyncio

        link = self.links.get(name)
        if link is None or not link.connected:
            return False
        task = asyncio.get_running_loop().create_task(link.say(text))
        link.keep(task)
        return True

    def status(self) -> list[dict[str, Any]]:
        return [link.status.to_json() for link in self.links.values()]

    def _front_end_factory(self) -> FrontEndFactory:
        """A factory of front ends for one satellite, with that satellite's own wake word
        and VAD models (loaded once; each front end resets them at its start)."""
        from wakeword.detector import EnergyGate, TriggerConfig, WakeModel
        from wakeword.endpoint import EndpointConfig
        from wakeword.frontend import FrontEnd, command_checker
        from wakeword.vad import SileroVad

        settings = self.settings
        wake_settings = settings.wakeword
        gate = EnergyGate(wake_settings.energy_gate_db) if wake_settings.energy_gate else None
        wake = WakeModel(self._wake_files, gate=gate)
        vad = SileroVad(self._vad_path)
        early = self.grammar is not None and settings.endpoint.grammar_early_stop

        def front_end(sink: Callable[[Any], None]) -> FrontEnd:
            return FrontEnd(
                wake=wake,
                vad=vad,
                stt=self._stt,  # type: ignore[arg-type]  # LockedStt: the same interface
                sink=sink,
                trigger=TriggerConfig.from_settings(wake_settings),
                endpoint=EndpointConfig.from_settings(settings.endpoint),
                preroll_s=wake_settings.preroll_s,
                wake_words=settings.router.wake_words,
                is_complete=command_checker(self.grammar, self.slots_filled) if early else None,
                keep_audio=settings.voices.enabled,  # who spoke (mavend/daemon/speakers.py)
            )

        return front_end
