"""The D-Bus control API: `org.mavend.Assistant1` on the session bus (docs/dbus.md).

The daemon exports one object, `/org/mavend/Assistant1`, with one interface,
`org.mavend.Assistant1`, under the well-known name `org.mavend.Assistant1`:

    methods     Say(s text) -> s reply          SayJson(s text) -> s turn_json
                Route(s text) -> s decision_json (+ "memory": what memory would change)
                ListReminders() -> s json_array
                CancelReminder(x id) -> b       CancelReminderJson(x id) -> s reminder_json
                Pause()  Resume()               Satellites() -> s json_array
    properties  Listening (b, read-only; PropertiesChanged on change)  Version (s)
    signals     Transcript(s text, d confidence)  Decision(s json)  ReminderFired(x id, s text)
    errors      org.mavend.Assistant1.Error.NotFound      no reminder with that id
                org.mavend.Assistant1.Error.InvalidInput  text over MAX_TEXT_CHARS
                org.mavend.Assistant1.Error.Failed        the controller raised

The interface only translates: every method delegates to a `Controller` (the
daemon) and every controller exception becomes a D-Bus error reply with a clear
message; a failing call never takes the service down. Introspection, Properties
and Peer come from dbus-next.

`DbusApi` owns the connection: `await api.start()` connects, exports and takes
the name (DO_NOT_QUEUE: a second daemon gets `NameTaken`, not a place in a
queue); `await api.stop()` gives it back. The `emit_*` methods send the signals
and may be called from any thread (the reminder scheduler's, say).
"""

# dbus-next reads the D-Bus signatures ("s", "xs") from string annotations.
# ruff: noqa: F821, UP037

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import threading
from collections.abc import Awaitable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from dbus_next import DBusError, Message, MessageType
from dbus_next.aio import MessageBus
from dbus_next.constants import NameFlag, PropertyAccess, RequestNameReply
from dbus_next.service import ServiceInterface, dbus_property, method, signal

from mavend import __version__
from mavend.errors import DeviceError, MavendError, NotFoundError

if TYPE_CHECKING:
    from mavend.assistant import Turn
    from mavend.router.decision import Decision as RouterDecision
    from mavend.scheduler import Reminder

log = logging.getLogger("mavend.dbus_api")  # the name its journal lines have always had

BUS_NAME = "org.mavend.Assistant1"
OBJECT_PATH = "/org/mavend/Assistant1"
INTERFACE = "org.mavend.Assistant1"
ERROR_NOT_FOUND = "org.mavend.Assistant1.Error.NotFound"
ERROR_INVALID_INPUT = "org.mavend.Assistant1.Error.InvalidInput"
ERROR_FAILED = "org.mavend.Assistant1.Error.Failed"
MAX_TEXT_CHARS = 4096  # longer than anything said in one breath; longer input is refused
CONNECT_TIMEOUT_S = 5.0

T = TypeVar("T")


class Routed(Protocol):
    """A routing answer: a router Decision, or a decision with memory's preview."""

    def to_json(self) -> dict[str, Any]: ...


class Controller(Protocol):
    """What the API drives; the daemon implements it."""

    async def say(self, text: str) -> Turn: ...

    async def route(self, text: str) -> Routed: ...  # read-only

    async def list_reminders(self) -> list[Reminder]: ...

    async def cancel_reminder(self, reminder_id: int) -> Reminder: ...  # NotFoundError

    async def pause(self) -> None: ...

    async def resume(self) -> None: ...

    async def satellites_status(self) -> list[dict[str, Any]]: ...  # [[satellites]], live

    @property
    def listening(self) -> bool: ...


class ApiUnavailable(DeviceError):
    """No session bus to export the API on (exit code 5)."""


class NameTaken(MavendError):
    """Another process (another mavend daemon) owns org.mavend.Assistant1."""


def session_bus_address() -> str | None:
    """$DBUS_SESSION_BUS_ADDRESS, else systemd's $XDG_RUNTIME_DIR/bus if it exists, else None."""
    address = os.environ.get("DBUS_SESSION_BUS_ADDRESS", "").strip()
    if address:
        return address
    runtime = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    if runtime and Path(runtime, "bus").is_socket():
        return f"unix:path={Path(runtime, 'bus')}"
    return None


async def name_owner_pid(bus: MessageBus, name: str = BUS_NAME) -> int | None:
    """The process id of `name`'s owner on this bus, or None when nobody owns it."""
    reply = await bus.call(
        Message(
            destination="org.freedesktop.DBus",
            path="/org/freedesktop/DBus",
            interface="org.freedesktop.DBus",
            member="GetConnectionUnixProcessID",
            signature="s",
            body=[name],
        )
    )
    if reply is None or reply.message_type == MessageType.ERROR:
        return None
    return int(reply.body[0])


class AssistantInterface(ServiceInterface):
    """org.mavend.Assistant1. The D-Bus signatures are the string annotations."""

    def __init__(self, controller: Controller, *, max_text_chars: int = MAX_TEXT_CHARS):
        super().__init__(INTERFACE)
        self.controller = controller
        self.max_text_chars = max_text_chars

    # methods -------------------------------------------------------------
    @method()
    async def Say(self, text: "s") -> "s":
        turn = await self._run("Say", self.controller.say(self._text(text)))
        return wire_text(turn.reply.text)

    @method()
    async def SayJson(self, text: "s") -> "s":
        turn = await self._run("SayJson", self.controller.say(self._text(text)))
        return _dumps(turn.to_json())

    @method()
    async def Route(self, text: "s") -> "s":
        routed = await self._run("Route", self.controller.route(self._text(text)))
        payload = routed.to_json()
        # Always present, as in `mavend route --json`: null when nothing learned applies.
        payload.setdefault("memory", None)
        return _dumps(payload)

    @method()
    async def ListReminders(self) -> "s":
        reminders = await self._run("ListReminders", self.controller.list_reminders())
        return _dumps([reminder.to_json() for reminder in reminders])

    @method()
    async def CancelReminder(self, reminder_id: "x") -> "b":
        reminder = await self._run("CancelReminder", self.controller.cancel_reminder(reminder_id))
        return str(reminder.status) == "cancelled"

    @method()
    async def CancelReminderJson(self, reminder_id: "x") -> "s":
        call = self.controller.cancel_reminder(reminder_id)
        reminder = await self._run("CancelReminderJson", call)
        return _dumps(reminder.to_json())

    @method()
    async def Satellites(self) -> "s":
        # A controller without satellites (an older test double) has none to report.
        status = getattr(self.controller, "satellites_status", None)
        satellites = await self._run("Satellites", status()) if status is not None else []
        return _dumps(satellites)

    @method()
    async def Pause(self):
        await self._run("Pause", self.controller.pause())
        self.listening_changed()

    @method()
    async def Resume(self):
        await self._run("Resume", self.controller.resume())
        self.listening_changed()

    # properties ----------------------------------------------------------
    @dbus_property(access=PropertyAccess.READ)
    def Listening(self) -> "b":
        return bool(self.controller.listening)

    @dbus_property(access=PropertyAccess.READ)
    def Version(self) -> "s":
        return __version__

    # signals (call to emit) -------------------------------------------------
    @signal()
    def Transcript(self, text: str, confidence: float) -> "sd":
        return [text, float(confidence)]

    @signal()
    def Decision(self, decision_json: str) -> "s":
        return decision_json

    @signal()
    def ReminderFired(self, reminder_id: int, text: str) -> "xs":
        return [int(reminder_id), text]

    def listening_changed(self) -> None:
        """Send PropertiesChanged for Listening (after Pause/Resume, or any other change)."""
        try:
            self.emit_properties_changed({"Listening": bool(self.controller.listening)})
        except Exception:  # a broken property must not fail the call that changed it
            log.exception("PropertiesChanged(Listening) failed")

    # helpers -------------------------------------------------------------
    def _text(self, text: str) -> str:
        if len(text) > self.max_text_chars:
            raise DBusError(
                ERROR_INVALID_INPUT,
                f"the text is {len(text)} characters long; at most {self.max_text_chars} are"
                " accepted",
            )
        return text

    async def _run(self, member: str, call: Awaitable[T]) -> T:
        """Await the controller; every failure becomes a D-Bus error reply."""
        try:
            return await call
        except DBusError:
            raise
        except NotFoundError as exc:
            raise DBusError(ERROR_NOT_FOUND, str(exc)) from exc
        except MavendError as exc:
            log.warning("%s failed: %s", member, exc)
            raise DBusError(ERROR_FAILED, f"{member} failed: {exc}") from exc
        except Exception as exc:
            log.exception("%s failed", member)
            raise DBusError(ERROR_FAILED, f"{member} failed: {type(exc).__name__}: {exc}") from exc


def _dumps(value: Any) -> str:
    # ASCII: NULs and lone surrogates (from a hostile note, say) become JSON escapes.
    return json.dumps(value, ensure_ascii=True)


# NUL, and lone surrogates (undecodable bytes as Python keeps them): neither is
# allowed in a D-Bus string.
_NOT_ON_THE_WIRE = re.compile("[\x00\ud800-\udfff]")


def wire_text(text: str) -> str:
    """`text` as a D-Bus string may carry it: valid UTF-8, no NUL.

    The bus disconnects a peer that sends anything else, so one stored note with
    a NUL in it (dictated, or written by a confused model) would take the whole
    API down at the next reply that quotes it.
    """
    return _NOT_ON_THE_WIRE.sub("\ufffd", text)


class _ServiceBus(MessageBus):
    """dbus-next's asyncio bus, with async methods' failures answered and kept quiet.

    dbus-next 0.2.3 (the last 0.2 release) does send the error reply when an async
    method raises, but then lets the exception escape into asyncio: a traceback at
    ERROR level in the journal for every NotFound. A cancelled call (the daemon
    stopping) got no reply at all, and a task in flight was only weakly held. This
    overrides the one (private) hook where it builds async method handlers.
    """

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.in_flight: set[asyncio.Future] = set()

    def _make_method_handler(self, interface: ServiceInterface, method: Any) -> Any:
        if not asyncio.iscoroutinefunction(method.fn):
            return super()._make_method_handler(interface, method)

        def handler(msg: Message, send_reply: Any) -> None:
            def done(future: asyncio.Future) -> None:
                self.in_flight.discard(future)
                try:
                    if future.cancelled():
                        raise DBusError(ERROR_FAILED, f"{method.name}: the daemon is stopping")
                    body, fds = ServiceInterface._fn_result_to_body(
                        future.result(), method.out_signature_tree
                    )
                    send_reply(Message.new_method_return(msg, method.out_signature, body, fds))
                except Exception as exc:
                    try:
                        send_reply.send_error(exc)  # a DBusError as itself, else ServiceError
                    except Exception as lost:  # the bus is gone: nobody to tell
                        log.debug("%s: the reply was lost: %s", method.name, lost)

            args = ServiceInterface._msg_body_to_args(msg)
            future = asyncio.ensure_future(method.fn(interface, *args))
            self.in_flight.add(future)
            future.add_done_callback(done)

        return handler


class DbusApi:
    """The API on the session bus: `start()` exports and takes the name, `stop()` lets go."""

    def __init__(
        self,
        controller: Controller,
        *,
        name: str = BUS_NAME,
        max_text_chars: int = MAX_TEXT_CHARS,
    ):
        self.name = name
        self.interface = AssistantInterface(controller, max_text_chars=max_text_chars)
        self._bus: _ServiceBus | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None

    @property
    def running(self) -> bool:
        return self._bus is not None and self._bus.connected

    async def start(self, bus_address: str | None = None) -> None:
        """Connect, export, own the name. ApiUnavailable: no bus; NameTaken: someone has it."""
        if self.running:
            raise RuntimeError("the D-Bus API is already started")
        self._bus = None  # a connection that dropped: start afresh
        address = bus_address or session_bus_address()
        if address is None:
            raise ApiUnavailable(
                "no session bus (DBUS_SESSION_BUS_ADDRESS is not set): the D-Bus API is off"
            )
        try:
            bus = await asyncio.wait_for(
                _ServiceBus(bus_address=address).connect(), CONNECT_TIMEOUT_S
            )
        except Exception as exc:  # dbus-next raises many kinds: refused, auth, bad address
            raise ApiUnavailable(f"no session bus: {type(exc).__name__}: {exc}") from exc
        bus.export(OBJECT_PATH, self.interface)
        try:
            reply = await asyncio.wait_for(
                bus.request_name(self.name, NameFlag.DO_NOT_QUEUE), CONNECT_TIMEOUT_S
            )
            if reply not in (RequestNameReply.PRIMARY_OWNER, RequestNameReply.ALREADY_OWNER):
                pid = await asyncio.wait_for(name_owner_pid(bus, self.name), CONNECT_TIMEOUT_S)
                raise NameTaken(
                    f"another process (pid {pid or '?'}; another mavend daemon?) already owns"
                    f" {self.name} on the session bus; stop it first"
                )
        except NameTaken:
            bus.disconnect()
            raise
        except Exception as exc:
            bus.disconnect()
            raise ApiUnavailable(f"could not own {self.name}: {type(exc).__name__}: {exc}") from exc
        self._bus = bus
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        _watch_disconnect(bus, self.name)
        log.info("D-Bus API: %s at %s on the session bus", self.name, OBJECT_PATH)

    async def stop(self) -> None:
        bus, self._bus = self._bus, None
        if bus is None:
            return
        calls = list(bus.in_flight)
        for call in calls:  # each still gets an error reply
            call.cancel()
        if calls:
            # Let the cancellations finish, and their replies go out, before the bus
            # goes: the order of these steps is not the same on every Python.
            await asyncio.wait(calls, timeout=CONNECT_TIMEOUT_S)
            await asyncio.sleep(0)
        if bus.connected:
            try:
                await asyncio.wait_for(bus.release_name(self.name), CONNECT_TIMEOUT_S)
            except Exception as exc:  # disconnecting releases it anyway
                log.debug("releasing %s: %s", self.name, exc)
            bus.unexport(OBJECT_PATH, self.interface)
            bus.disconnect()
        log.info("D-Bus API stopped")

    # signals: safe from any thread; a no-op while stopped -------------------
    def emit_transcript(self, text: str, confidence: float) -> None:
        self._emit(self.interface.Transcript, wire_text(text), float(confidence))

    def emit_decision(self, decision: RouterDecision | Mapping[str, Any]) -> None:
        payload = decision if isinstance(decision, Mapping) else decision.to_json()
        self._emit(self.interface.Decision, _dumps(dict(payload)))

    def emit_reminder_fired(self, reminder_id: int, text: str) -> None:
        self._emit(self.interface.ReminderFired, int(reminder_id), wire_text(text))

    def emit_listening_changed(self) -> None:
        """Listening changed other than by Pause/Resume (those emit it themselves)."""
        self._emit(self.interface.listening_changed)

    def _emit(self, send: Any, *args: Any) -> None:
        if not self.running or self._loop is None:
            log.debug("D-Bus API not running: %s not sent", getattr(send, "__name__", send))
            return
        if threading.get_ident() == self._loop_thread:
            _send(send, args)
        else:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the daemon is gone
                self._loop.call_soon_threadsafe(_send, send, args)


def _send(send: Any, args: tuple[Any, ...]) -> None:
    try:
        send(*args)
    except Exception:  # a signal that cannot be sent must not break the caller
        log.exception("a D-Bus signal could not be sent")


def _watch_disconnect(bus: MessageBus, name: str) -> None:
    """Log when the bus drops (the API is gone until the daemon restarts)."""
    future = asyncio.ensure_future(bus.wait_for_disconnect())

    def done(f: asyncio.Future) -> None:
        if f.cancelled():
            return
        if f.exception() is not None:
            log.warning("the session bus dropped; %s is gone: %s", name, f.exception())

    future.add_done_callback(done)


# No session bus yet (a headless boot, a login still starting): look again this often.
API_RETRY_FIRST_S = 2.0
API_RETRY_MAX_S = 60.0


class ApiSignals:
    """The daemon's events as the D-Bus API's signals (a mavend.daemon.lifecycle.Observer)."""

    def __init__(self, api: Any):
        self.api = api

    def transcript(self, text: str, confidence: float) -> None:
        self.api.emit_transcript(text, confidence)

    def decision(self, turn: Any) -> None:
        if turn.decision is not None:
            self.api.emit_decision(turn.decision)

    def reminder_fired(self, firing: Any) -> None:
        self.api.emit_reminder_fired(firing.reminder.id, firing.reminder.text)


async def serve_api(daemon: Any, settled: asyncio.Event | None = None) -> None:
    """The daemon's "dbus-api" service: the API on the session bus while there is one;
    reconnects when it drops. `settled` is set once the first try has owned the name or
    failed, so the daemon says it is ready only when a client can reach it."""
    api = DbusApi(daemon)
    signals = ApiSignals(api)
    daemon.observers.append(signals)
    delay, told = API_RETRY_FIRST_S, False
    try:
        while True:
            try:
                try:
                    await api.start()
                finally:
                    if settled is not None:
                        settled.set()
            except (ApiUnavailable, NameTaken) as exc:
                if not told:
                    log.warning("D-Bus control API off: %s (retrying)", exc)
                    told = True
                await asyncio.sleep(delay)
                delay = min(delay * 2, API_RETRY_MAX_S)
                continue
            delay, told = API_RETRY_FIRST_S, False
            while api.running:
                await asyncio.sleep(1.0)
            log.warning("the session bus connection dropped: reconnecting the D-Bus API")
    finally:
        daemon.observers.remove(signals)
        await api.stop()
