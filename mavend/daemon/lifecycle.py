"""The daemon: `mavend run` (with the microphone) and `mavend run --no-audio`.

Services, one asyncio task each, supervised (a service that crashes is logged
and restarted with backoff; the others go on):

    voice     microphone -> front end -> turns (mavend/daemon/voice.py)
    delivery  fired reminders -> desktop notifications, with retries
    stdin     text turns from stdin, one per line (`--no-audio` only)
    extra     whatever is added with `add_service` (the D-Bus API, the watchdog)

The reminder scheduler runs APScheduler's own threads; routing and handlers
run in worker threads (`asyncio.to_thread`): the event loop never waits on a
model. SIGTERM/SIGINT: stop taking turns (the microphone pauses; a turn from D-Bus,
stdin, a satellite or a Wyoming client, and one still waiting its turn, is refused in one
sentence and nothing of it runs), let the turn in progress finish within its own
deadline (`stop_wait_s`: the route's and the slowest handler's, under the units'
`TimeoutStopSec=30`), stop the scheduler, close the database, exit 0. SIGHUP: reload
the config, the grammars and the allowlist; the speaker, the microphone's front end,
the satellites and the Wyoming server start again only when their settings changed
(`mavend.daemon.reload`); the scheduler, and so every reminder, is untouched; the old router's
models are closed once the turn using them is over.

A lock file next to the database keeps a second daemon from running on the
same state; `mavend say` reads it to tell the user whether a reminder will
fire now or at the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import IO, Any, TypeVar

from mavend.assistant import Assistant, Turn
from mavend.clock import system_clock, user_timezone
from mavend.config import Settings
from mavend.conversation import DEFAULT_SESSION
from mavend.daemon.lock import AlreadyRunning, DaemonLock, daemon_pid, lock_path
from mavend.daemon.page import PageService
from mavend.daemon.reload import Changes, release_models
from mavend.daemon.remote import RemoteVoices
from mavend.daemon.sdnotify import SystemdNotifier
from mavend.daemon.speakers import SpeakerTags
from mavend.daemon.supervisor import Supervisor
from mavend.daemon.voice import PrefetchingRouter, VoiceService
from mavend.desktop.notify import Notification, Notifier, NotifyUnavailable
from mavend.errors import ConfigError, MavendError
from mavend.handlers.common import REPLY_TIMEOUT_S, Outcome, Reply, TurnContext
from mavend.memory import RouteView
from mavend.scheduler import (
    Firing,
    Reminder,
    ReminderDelivery,
    ReminderScheduler,
    ScheduledAct,
)
from mavend.state.records import SessionState
from mavend.state.store import Store
from mavend.workers import started_pool

log = logging.getLogger("mavend.daemon")  # the name its journal lines have always had
T = TypeVar("T")

# SIGTERM waits for the turn in progress this much longer than its own deadline (its rows
# and the turn log are written after the handler returns), and never longer than
# STOP_WAIT_MAX_S: the units' TimeoutStopSec=30 (mavend/data/systemd/) leaves the rest,
# 6 s, to stop the scheduler and close the models and the database before SIGKILL.
STOP_MARGIN_S = 2.0
STOP_WAIT_MAX_S = 24.0
# Expired session rows (a conversation's topic, a pending yes/no) are deleted this often,
# once an hour past their expiry (a late "yes" is still told that its question expired).
SESSION_PRUNE_EVERY_S = 300.0
SESSION_EXPIRED_KEEP_S = 3600.0
# The loop's worker threads (asyncio.to_thread): deliveries, the D-Bus API, reloads and
# speech for satellites overlap at most this much; more waits its turn for a thread.
IO_WORKERS = 4
# Start-up waits at most this long for the D-Bus API's first try (its connect and name
# request are bounded at 5 s each in mavend/api/server.py).
API_FIRST_TRY_S = 12.0

SHUTTING_DOWN = "mavend is shutting down: nothing was done or saved; ask again once it is back"
SHUTTING_DOWN_REPLY = "I'm shutting down, so I can't do that now. Nothing was saved."


class ShuttingDown(MavendError):
    """A turn that came after SIGTERM (or waited behind the last one): refused, not run."""


def turn_deadline_s(settings: Settings) -> float:
    """The longest one turn runs: its route ([router] llm_timeout_s), then its handler's
    own deadline: a free reply (REPLY_TIMEOUT_S), an act that runs to the end (its
    timeout_s), a Home Assistant call, the weather."""
    handler = [REPLY_TIMEOUT_S, settings.homeassistant.timeout_s, settings.weather.timeout_s]
    handler += [act.timeout_s for act in settings.acts.allow if not act.detach]
    return settings.router.llm_timeout_s + max(handler)


def stop_wait_s(settings: Settings) -> float:
    """How long SIGTERM waits for the turn in progress (20 s with the defaults)."""
    return min(turn_deadline_s(settings) + STOP_MARGIN_S, STOP_WAIT_MAX_S)


class DaemonState(enum.Enum):
    NEW = "new"
    STARTING = "starting"
    RUNNING = "running"
    RELOADING = "reloading"
    STOPPING = "stopping"
    STOPPED = "stopped"


@dataclass(frozen=True)
class DaemonOptions:
    audio: bool = False  # listen on the microphone (`mavend run`)
    stdin_turns: bool = True  # read text turns from stdin, one per line
    notify_replies: bool = True  # show each turn's reply as a notification
    poll_s: float = 1.0  # how often the scheduler looks for reminders set by others
    config_path: Path | None = None  # re-read on SIGHUP (None: the default place)
    # How long a turn in progress may delay SIGTERM; None: `stop_wait_s(settings)`.
    stop_timeout_s: float | None = None
    dbus_api: bool = True  # org.mavend.Assistant1 on the session bus (docs/dbus.md)


class Observer:
    """What the daemon tells whoever listens (the D-Bus API's signals). No-ops here."""

    def transcript(self, text: str, confidence: float) -> None: ...

    def decision(self, turn: Turn) -> None: ...

    def reminder_fired(self, firing: Firing) -> None: ...


class Daemon:
    def __init__(
        self,
        settings: Settings,
        *,
        router: Any = None,
        router_factory: Callable[[Settings, Callable[[], Any]], Any] | None = None,
        options: DaemonOptions | None = None,
        stdin: IO[str] | None = None,
        voice_factory: Callable[..., VoiceService] | None = None,
    ):
        self.settings = settings
        self.options = options or DaemonOptions()
        self.state = DaemonState.NEW
        self.tz = user_timezone(settings.reminders.timezone)
        self.clock = system_clock(self.tz)
        self._router = router
        self._router_factory = router_factory
        self._voice_factory = voice_factory
        self._stdin = stdin
        self._stdin_queue: asyncio.Queue[str | None] | None = None
        self._stop = asyncio.Event()
        self._stopping = False  # SIGTERM came: no new turn starts
        self.supervisor = Supervisor()
        self._lock = DaemonLock()
        self._turns_in_flight = 0
        self._turns_idle = asyncio.Event()
        self._turns_idle.set()
        self.observers: list[Observer] = []
        # Read once; removed from the environment so acts do not inherit it.
        self.systemd = SystemdNotifier(unset_environment=True)
        self.store: Store | None = None
        self.scheduler: ReminderScheduler | None = None
        self.notifier: Notifier | None = None
        self.delivery: ReminderDelivery | None = None
        self.assistant: Assistant | None = None
        self.router: PrefetchingRouter | None = None
        self.voice: VoiceService | None = None
        self.page: PageService | None = None  # the household's page, when [web] enabled
        self.speaker: Any = None  # mavend.tts.Speaker: spoken replies and earcons (audio only)
        # Wyoming satellites and the Wyoming server (mavend/daemon/remote.py).
        self.remote = RemoteVoices(self, self.supervisor, self._satellite_turn)
        # Who said each turn ([voices]); off until the store is open.
        self.speakers = SpeakerTags(self.settings, None)
        # Turns wait here in arrival order (asyncio.Lock wakes its waiters first come,
        # first served): rooms take turns at the one local LLM, and a waiting turn holds
        # no worker thread.
        self._turn_queue = asyncio.Lock()
        # Started with the store (mavend/workers.py): every worker thread and its
        # database connection exists from the start, none is added under load.
        self._workers: ThreadPoolExecutor | None = None
        self._turn_worker: ThreadPoolExecutor | None = None
        # Set when the D-Bus API's first try to own its name has ended (either way).
        self._api_settled = asyncio.Event()

    # lifecycle -----------------------------------------------------------
    async def run(self) -> int:
        """Start, serve until SIGTERM/SIGINT (SIGHUP reloads), stop. `mavend run`.

        Under systemd (Type=notify): READY=1 once the models are loaded,
        WATCHDOG=1 from this event loop (a hung loop stops the pings, and
        systemd restarts the service), RELOADING=1 on SIGHUP, STOPPING=1.
        """
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop)
        loop.add_signal_handler(signal.SIGHUP, self.request_reload)
        try:
            await self.start()
            what = "listening for the wake word" if self.options.audio else "no audio"
            log.info("mavend is running (%s); stop with SIGTERM, reload with SIGHUP", what)
            self.add_service("watchdog", self.systemd.run_watchdog)
            self.systemd.ready(self._status_line())
            await self._stop.wait()
        finally:
            self.systemd.stopping()
            await self.stop()
            self.systemd.close()
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                loop.remove_signal_handler(sig)
        return 0

    def request_stop(self) -> None:
        self._stopping = True  # at once: a turn that arrives from now on is refused
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stopping or self.state in (DaemonState.STOPPING, DaemonState.STOPPED)

    def request_reload(self) -> None:
        task = asyncio.get_running_loop().create_task(self._reload_notified(), name="reload")
        task.add_done_callback(_log_failure)

    async def _reload_notified(self) -> None:
        self.systemd.reloading()
        try:
            await self.reload()
        finally:
            self.systemd.ready(self._status_line())

    def _status_line(self) -> str:
        if self.voice is None:
            return "running without audio"
        return f"voice: {self.voice.state.value}" + (
            f" ({self.voice.error})" if self.voice.error else ""
        )

    @property
    def restarts(self) -> dict[str, int]:
        """How often each service crashed and was started again."""
        return self.supervisor.restarts

    def add_service(self, name: str, run: Callable[[], Awaitable[None]]) -> None:
        """Another supervised task (before `start()`, or started at once while running)."""
        self.supervisor.add(name, run, start=self.state is DaemonState.RUNNING)

    async def start(self) -> None:
        self.state = DaemonState.STARTING
        settings = self.settings
        self.store = Store.open(settings)
        try:
            self._lock.take(self.store.path)
        except BaseException:
            self.store.close()
            raise
        loop = asyncio.get_running_loop()
        self._start_workers(loop, self.store)
        await asyncio.to_thread(self._prune_sessions)
        self.notifier = Notifier(settings.notifications)
        self.scheduler = ReminderScheduler(
            self.store,
            settings,
            self.tz,
            on_fired=lambda firing: loop.call_soon_threadsafe(self._fired, firing),
            clock=self.clock,
            poll_s=self.options.poll_s,
        )
        self.delivery = ReminderDelivery(
            self.scheduler.book,
            self.notifier,
            settings,
            on_change=self.scheduler.request_sync,
            clock=self.clock,
        )
        self.router = PrefetchingRouter(self._router or await asyncio.to_thread(self._build_router))
        self.assistant = self._make_assistant(settings, self.router)
        self.delivery.run_act = self._run_scheduled_act
        self.speakers = SpeakerTags(settings, self.store)
        await asyncio.to_thread(self.speakers.load)
        self.router.context_for = self.assistant.memory.context_for
        await asyncio.to_thread(self.scheduler.start)
        # Reminders due at start-up (fired late, or while the daemon was down) are shown
        # while the models load: their delivery needs none of them.
        self.supervisor.add("delivery", self.delivery.run, start=True)
        services: list[tuple[str, Callable[[], Awaitable[None]]]] = [
            ("sessions", self._prune_sessions_every),
        ]
        if self.options.dbus_api:
            services.append(("dbus-api", self._serve_api))
        if settings.web.enabled:  # the household's page (mavend/web/)
            services.append(("web", self._start_page(settings).run))
        if self.options.audio:
            self.speaker = await asyncio.to_thread(self._load_speaker, settings)
            self.voice = self._make_voice(settings)
            await self.voice.load()
            services.append(("voice", self.voice.run))
        services += await self.remote.start(settings, self.router, self.speaker)
        # Ready means ready to answer: the models are loaded before start() returns
        # (and before READY=1), so the first turn is not the slow one.
        await asyncio.to_thread(self._warm_up, self.router)
        # The city table and the unit registry (~1 s): loaded now, not on the first question.
        await asyncio.to_thread(self.assistant.handler.answers.warm)
        if self.options.stdin_turns:
            services.append(("stdin", self._stdin_turns))
        self.state = DaemonState.RUNNING
        self.supervisor.start_all(services)
        if self.options.dbus_api:
            await self._api_first_try()

    async def _api_first_try(self) -> None:
        """Wait (bounded) for the D-Bus API to own its name: "running" and READY=1 come
        after it, so a `mavend say` right after `systemctl start` finds the daemon. No bus
        or a name taken still starts the daemon; the API keeps retrying on its own."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._api_settled.wait(), API_FIRST_TRY_S)

    async def stop(self) -> None:
        if self.state in (DaemonState.STOPPING, DaemonState.STOPPED):
            return
        self.state = DaemonState.STOPPING
        self._stopping = True  # every entry refuses new turns (submit_text)
        started = time.monotonic()
        if self.voice is not None:
            self.voice.pause()  # stop listening first: no new turn starts
        wait = self.options.stop_timeout_s
        wait = stop_wait_s(self.settings) if wait is None else wait
        if not self._turns_idle.is_set():
            log.info("stopping: waiting up to %.0f s for the turn in progress", wait)
        try:
            # The turn in progress finishes (its reminder is saved, its act logged).
            await asyncio.wait_for(self._turns_idle.wait(), wait)
        except TimeoutError:
            log.error("stopping: the turn in progress did not end within %.0f s; "
                      "what it had not saved yet is lost", wait)
        await self.supervisor.stop_all()
        if self.scheduler is not None:
            await asyncio.to_thread(self.scheduler.stop)
        if self.notifier is not None:
            await self.notifier.close()
        if self.speaker is not None:
            self.speaker.close()
        if self.router is not None:
            self.router.close()
        self._stop_workers()
        if self.store is not None:
            self.store.close()
        self._lock.release()
        self.state = DaemonState.STOPPED
        log.info("mavend stopped (%.1f s)", time.monotonic() - started)

    async def reload(self) -> bool:
        """SIGHUP: re-read the config, grammars and allowlist; False (logged) if invalid.

        Reminders are not touched: the scheduler and the database stay as they
        are. A bad config (or a model it names that cannot load) leaves the running
        one in place. Only what changed starts again (`mavend.daemon.reload.Changes`).
        """
        if self.state is not DaemonState.RUNNING:
            return False
        from mavend.config import load_settings

        speaker = None
        try:
            settings = await asyncio.to_thread(load_settings, self.options.config_path)
            changed = Changes.between(self.settings, settings)
            router = PrefetchingRouter(await asyncio.to_thread(self._build_router, settings))
            if self.options.audio:
                await asyncio.to_thread(self._warm_up, router)
            if self.speaker is not None and changed.speech:
                speaker = await asyncio.to_thread(self._load_speaker, settings)
            remote = await self.remote.prepare(settings, changed, router,
                                               speaker=speaker or self.speaker,
                                               new_speaker=speaker is not None)
        except MavendError as exc:
            log.error("reload failed, the running configuration stays: %s", exc)
            if speaker is not None:
                speaker.close()
            return False
        if self.state is not DaemonState.RUNNING:  # SIGTERM came while it loaded
            log.info("stopping: the reloaded configuration is not used")
            if speaker is not None:
                speaker.close()
            router.close()
            await asyncio.to_thread(release_models, router)
            return False
        self.state = DaemonState.RELOADING
        old_speaker = None
        if speaker is not None:  # [tts] or [earcons] changed: a new voice, chimes, output
            old_speaker, self.speaker = self.speaker, speaker
        old_router, self.router = self.router, router
        self.settings = settings
        self.assistant = self._make_assistant(settings, router)
        router.context_for = self.assistant.memory.context_for
        if changed.voices:
            self.speakers = SpeakerTags(settings, self.store)
            await asyncio.to_thread(self.speakers.load)
        assert self.delivery is not None and self.notifier is not None
        self.delivery.settings = settings
        self.notifier.settings = settings.notifications
        if self.voice is not None and (changed.listening or old_speaker is not None):
            # (A new speaker, too: the front end listens around what it plays.)
            log.info("audio settings changed: restarting the voice service")
            await self.supervisor.replace("voice", self._replace_voice(settings))
        elif self.voice is not None:
            self.voice.router = router
        await self.remote.commit(remote)
        if changed.web:
            await self._reload_page(settings)
        if old_speaker is not None:
            old_speaker.close()
            log.info("spoken replies and earcons reloaded")
        if self.state is DaemonState.RELOADING:
            self.state = DaemonState.RUNNING
        log.info("configuration reloaded")
        if old_router is not None:
            old_router.close()
            await self._release_when_unused(old_router)
        return True

    def _start_page(self, settings: Settings) -> PageService:
        self.page = PageService(
            settings, lambda: self.assistant, self.run_in_turn, self.satellites_status
        )
        self.observers.append(self.page)
        return self.page

    async def _reload_page(self, settings: Settings) -> None:
        """[web] changed: the page stops (its open streams end) and, if still on, starts
        again with the new settings; nothing else is touched."""
        if self.page is not None:
            self.observers.remove(self.page)
            await self.supervisor.remove("web")
            self.page = None
        if settings.web.enabled:
            self.supervisor.add("web", self._start_page(settings).run, start=True)
        log.info("the page: %s", f"at http://{settings.web.listen}/" if settings.web.enabled
                 else "off")  # fmt: skip

    async def _release_when_unused(self, router: PrefetchingRouter) -> None:
        """Close the old router's models (the LLM above all: two would sit in memory
        under MemoryMax) once no turn uses them. A turn takes its assistant, and so its
        router, once it holds the turn queue: the one holding it now may be on the old
        router; every later one is on the new. (A route preview or a prefetch still on
        the old LLM is waited for by the LLM's own lock.)"""
        async with self._turn_queue:
            await asyncio.to_thread(release_models, router)
        log.info("the previous configuration's models are closed")

    # the Controller of the D-Bus API -------------------------------------
    async def say(self, text: str) -> Turn:
        # The caller (`mavend say`, a script) shows the reply itself: no pop-up.
        return await self.submit_text(text, notify=False)

    async def route(self, text: str) -> RouteView:
        # The turn's own memory and router: the preview is what a turn would do. Read-only.
        router = self._need(self.router)
        assistant = self._need(self.assistant)
        return await asyncio.to_thread(assistant.memory.route_view, router, text)

    async def list_reminders(self) -> list[Reminder]:
        scheduler = self._need(self.scheduler)
        return await asyncio.to_thread(scheduler.book.list)

    async def cancel_reminder(self, reminder_id: int) -> Reminder:
        scheduler = self._need(self.scheduler)
        reminder = await asyncio.to_thread(scheduler.book.cancel, reminder_id)
        scheduler.request_sync()
        return reminder

    async def run_in_turn(self, job: Callable[[Assistant], T]) -> T:
        """A write that is not a spoken turn (the page's cancel, delete, undo): in the
        turn worker, in line with the turns, never beside one."""
        if self.stopping:
            raise ShuttingDown(SHUTTING_DOWN)
        async with self._turn_queue:
            assistant = self._need(self.assistant)
            return await asyncio.get_running_loop().run_in_executor(
                self._turn_worker, job, assistant
            )

    def _listening_asked(self, reply: Reply) -> None:
        """"stop listening (for twenty minutes)" / "resume listening", said or typed here:
        the system handler's reply says which (`data["listening"]`), the voice does it."""
        listening = reply.data.get("listening") if reply.data else None
        if listening is None or self.voice is None:
            return
        if listening:
            self.voice.resume()
            return
        until = reply.data.get("resume_at")
        for_s = (datetime.fromisoformat(until) - self.clock()).total_seconds() if until else None
        self.voice.pause(for_s)

    async def pause(self) -> None:
        if self.voice is not None:
            self.voice.pause()

    async def resume(self) -> None:
        if self.voice is not None:
            self.voice.resume()

    @property
    def listening(self) -> bool:
        return self.voice is not None and self.voice.listening

    # turns ---------------------------------------------------------------
    async def submit_text(
        self,
        text: str,
        *,
        notify: bool = True,
        session: str = DEFAULT_SESSION,
        context: TurnContext | None = None,
    ) -> Turn:
        """One text turn, as if it had been spoken; its reply is also shown.

        `session`: where it was said. The microphone, stdin, `mavend say` and the D-Bus
        API are the one local session (the same person at the same box: "and on
        friday?" typed continues a spoken question); a satellite passes its own, and its
        room and name as `context`."""
        if self.stopping:
            raise ShuttingDown(SHUTTING_DOWN)
        if self.assistant is None or self.state not in (
            DaemonState.RUNNING, DaemonState.RELOADING
        ):
            raise MavendError("the daemon is not running")
        self._turns_in_flight += 1
        self._turns_idle.clear()
        try:
            async with self._turn_queue:
                if self.stopping:  # it waited behind the last turn: not started, refused
                    raise ShuttingDown(SHUTTING_DOWN)
                # Taken now, not on arrival: a reload meanwhile has closed the old one.
                assistant = self.assistant
                context = self.speakers.context(session, context)
                turn = await asyncio.get_running_loop().run_in_executor(
                    self._turn_worker,
                    partial(assistant.handle_text, text, session=session, context=context),
                )
        finally:
            self._turns_in_flight -= 1
            if not self._turns_in_flight:
                self._turns_idle.set()
        self._tell("decision", turn)
        if session == DEFAULT_SESSION:
            self._listening_asked(turn.reply)
        if notify and self.options.notify_replies and turn.reply.text and self.notifier:
            await self._show_reply(turn.reply.text)
        return turn

    async def _voice_turn(self, transcript: Any) -> None:
        self._tell("transcript", transcript.text, transcript.confidence)
        speaker = await self.speakers.of_transcript(transcript)
        try:
            turn = await self.submit_text(transcript.text, context=TurnContext(speaker=speaker))
        except ShuttingDown:
            log.info("heard %r while stopping: refused", transcript.text)
            if self.speaker is not None:
                self.speaker.speak(SHUTTING_DOWN_REPLY)
            return
        decided = (time.monotonic() - transcript.speech_end_monotonic) * 1000.0
        log.info(
            "heard %r -> %s (%.0f ms from end of speech): %s",
            transcript.text,
            turn.decision.intent if turn.decision else "-",
            decided,
            turn.reply.text,
        )
        if self.speaker is not None:  # queued: speaking never holds up listening
            self.speaker.speak(turn.reply.text, turn.reply.spoken)
        if self.voice is not None:
            # A reply that expects an answer ("yes", "the kitchen one", "at six") opens
            # the next turn without the wake word, once the reply has been said (the
            # speech is queued first, so the front end knows to wait for it).
            self.voice.follow_up(turn.reply)

    async def _satellite_turn(self, text: str, spec: Any, audio: Any = None) -> Turn:
        """A transcript from satellite `spec` (a config SatelliteSpec): its own session,
        its room; the reply goes back to it (not to this box's notifications). `audio`:
        the utterance's, with [voices] on (who spoke: only a trusted satellite's counts)."""
        self._tell("transcript", text, 1.0)
        speaker = await self.speakers.of_satellite(spec, audio)
        context = TurnContext(room=spec.room, satellite=spec.name, speaker=speaker)
        try:
            return await self.submit_text(
                text, notify=False, session=f"satellite:{spec.name}", context=context
            )
        except ShuttingDown:  # said there, like any reply: the satellite is not left waiting
            log.info("satellite %s: %r while stopping: refused", spec.name, text)
            return refused_turn(text)

    async def satellites_status(self) -> list[dict[str, Any]]:
        """Each configured satellite: name, uri, room, state, last error (`mavend satellites`)."""
        return self.remote.status()

    @property
    def satellites(self) -> Any:
        """The SatelliteService, when [[satellites]] are configured."""
        return self.remote.satellites

    @property
    def wyoming(self) -> Any:
        """The WyomingServer, when [wyoming] listen is set."""
        return self.remote.server

    async def _show_reply(self, text: str) -> None:
        assert self.notifier is not None
        if not self.settings.notifications.enabled:
            return
        try:
            await self.notifier.notify(Notification(summary="mavend", body=text))
        except NotifyUnavailable as exc:
            # A reply is of the moment: it is printed, and not queued for later.
            log.warning("the reply could not be shown: %s", exc)

    async def _stdin_turns(self) -> None:
        lines = self._stdin_lines()
        while (line := await lines.get()) is not None:
            if not line.strip():
                continue
            try:
                turn = await self.submit_text(line.strip())
            except MavendError as exc:  # stopping: the daemon is going away
                log.warning("stdin turn not run: %s", exc)
                return
            print(turn.reply.text, flush=True)
        log.debug("stdin closed; text turns over (the daemon keeps running)")

    def _stdin_lines(self) -> asyncio.Queue[str | None]:
        """Lines from stdin, read by one thread for the daemon's life (a restarted
        service takes up the same queue: no second reader races the first)."""
        if self._stdin_queue is not None:
            return self._stdin_queue
        lines: asyncio.Queue[str | None] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        source = self._stdin or sys.stdin

        def read() -> None:
            # A plain thread, not the executor: a blocked readline must not
            # hold up the loop's shutdown.
            try:
                for line in source:
                    loop.call_soon_threadsafe(lines.put_nowait, line)
            except (OSError, ValueError) as exc:  # a closed or broken stdin
                log.warning("stdin: %s", exc)
            finally:
                with contextlib.suppress(RuntimeError):  # the loop may be closed
                    loop.call_soon_threadsafe(lines.put_nowait, None)

        threading.Thread(target=read, name="stdin-turns", daemon=True).start()
        self._stdin_queue = lines
        return lines

    async def _serve_api(self) -> None:
        from mavend.api.server import serve_api

        await serve_api(self, self._api_settled)

    # helpers -------------------------------------------------------------
    def _prune_sessions(self) -> None:
        assert self.store is not None
        gone = SessionState(self.store).prune(self.clock().timestamp() - SESSION_EXPIRED_KEEP_S)
        if gone:
            log.info("%d expired session rows deleted", gone)

    async def _prune_sessions_every(self) -> None:
        while True:
            await asyncio.sleep(SESSION_PRUNE_EVERY_S)
            await asyncio.to_thread(self._prune_sessions)

    def _build_router(self, settings: Settings | None = None) -> Any:
        settings = settings or self.settings
        if self._router_factory is not None:
            return self._router_factory(settings, self.clock)
        from mavend.router import build_available_router

        # Model files are checked now and loaded on first use (or by warm-up).
        router, problems = build_available_router(settings, clock=self.clock)
        for problem in problems:
            log.error("routing without a model: %s. Grammar commands still work.", problem)
        return router

    def _start_workers(self, loop: asyncio.AbstractEventLoop, store: Store) -> None:
        """The loop's worker pool (every `asyncio.to_thread`: deliveries, the D-Bus API,
        reloads, speech for satellites) and the turns' own thread, all started now.
        Turns run one at a time (the turn queue) on one thread: one connection keeps the
        pages every turn reads, instead of each pool thread caching its own copy."""
        self._workers = started_pool(IO_WORKERS, "mavend-io", initializer=store.connection)
        loop.set_default_executor(self._workers)
        self._turn_worker = started_pool(1, "mavend-turn", initializer=store.connection)

    def _stop_workers(self) -> None:
        # The loop may outlive the daemon (tests, an embedding program): it gets a
        # fresh default pool, and ours ends once its last job (if any) returns.
        for pool in (self._turn_worker, self._workers):
            if pool is not None:
                pool.shutdown(wait=False)
        if self._workers is not None:
            asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor())
        self._workers = self._turn_worker = None

    def _make_assistant(self, settings: Settings, router: Any) -> Assistant:
        assert self.store is not None and self.scheduler is not None
        return Assistant(
            settings,
            self.store,
            router,
            clock=self.clock,
            tz=self.tz,
            on_reminders_changed=self.scheduler.request_sync,
        )

    def _make_voice(self, settings: Settings) -> VoiceService:
        assert self.router is not None
        factory = self._voice_factory or VoiceService
        voice = factory(settings, self.router, self._voice_turn)
        if self.speaker is not None:  # earcons on the wake word and at the end of listening
            voice.on_event = self.speaker.on_voice_event
            if hasattr(voice, "attach_speaker"):  # barge-in; not on test doubles
                voice.attach_speaker(self.speaker)
        return voice

    @staticmethod
    def _load_speaker(settings: Settings) -> Any:
        from mavend.tts import Speaker

        speaker = Speaker.from_settings(settings)
        speaker.load()  # a missing voice or output device is logged, never fatal
        return speaker

    def _replace_voice(self, settings: Settings) -> Callable[[], Awaitable[None]]:
        self.voice = self._make_voice(settings)
        return self.voice.run

    @staticmethod
    def _warm_up(router: Any) -> None:
        warm_up = getattr(router, "warm_up", None)
        if warm_up is None:
            return
        try:
            warm_up()
        except ConfigError:
            raise  # a prompt too long for [router] llm_context: said at start, not dropped
        except Exception as exc:  # a broken model: turns fall back (classifier, grammar)
            log.error("router models: %s: %s", type(exc).__name__, exc)

    def _run_scheduled_act(self, act: ScheduledAct) -> str:
        """A scheduled act's turn (ReminderDelivery, off the loop): the assistant's handlers
        as they stand now (a reload's allowlist included) run it."""
        assistant = self.assistant
        if assistant is None:  # set before delivery starts; stopping: not run, said so
            return "I couldn't do it: mavend was stopping."
        return assistant.run_scheduled(act)

    def _fired(self, firing: Firing) -> None:
        if self.delivery is not None:
            self.delivery.wake.set()
        self._tell("reminder_fired", firing)
        if firing.reminder.act is not None:
            return  # not a reminder to read out: its delivery runs it and shows how it went
        if not self.settings.tts.speak_reminders:
            return
        said = f"Reminder: {firing.reminder.text}"
        origin = firing.reminder.origin
        if origin and self.remote.satellites is not None:
            # Set on a satellite: announced there. Not connected now: said here instead.
            if self.remote.announce(origin, said):
                return
            log.info("satellite %s is not connected: reminder %d is announced here",
                     origin, firing.reminder.id)
        if self.speaker is not None:
            self.speaker.speak(said)

    def _tell(self, what: str, *args: Any) -> None:
        for observer in self.observers:
            try:
                getattr(observer, what)(*args)
            except Exception:  # a listener's bug must not break a turn or a firing
                log.exception("observer %r failed on %s", observer, what)

    def _need(self, component: Any) -> Any:
        if component is None or self.state not in (DaemonState.RUNNING, DaemonState.RELOADING):
            raise MavendError("the daemon is not running")
        return component

def refused_turn(text: str) -> Turn:
    """The turn a satellite is answered with while the daemon stops: nothing ran."""
    return Turn(text, None, Reply(SHUTTING_DOWN_REPLY, Outcome.REFUSED, "shutting_down"), 0.0)


def _log_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("%s failed: %s", task.get_name(), task.exception())


def run_daemon(settings: Settings, *, audio: bool, config_path: Path | None = None) -> int:
    """`mavend run [--no-audio]`."""
    options = DaemonOptions(audio=audio, stdin_turns=not audio, config_path=config_path)
    return asyncio.run(Daemon(settings, options=options).run())


def run_headless(settings: Settings) -> int:
    """`mavend run --no-audio`: the daemon without the audio front end."""
    return run_daemon(settings, audio=False)


__all__ = [
    "AlreadyRunning",
    "Daemon",
    "DaemonOptions",
    "DaemonState",
    "Observer",
    "ShuttingDown",
    "daemon_pid",
    "lock_path",
    "run_daemon",
    "run_headless",
]

