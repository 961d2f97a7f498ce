"""A client of the daemon's D-Bus API (mavend/api/server.py), for the CLI.

`DaemonClient` is the async client, one session-bus connection. The module
functions (`daemon_available()`, `say()`, `route()`, ...) are sync wrappers
that connect, make one call and disconnect, for code without an event loop.

Errors: `DaemonUnavailable` (a DeviceError, exit code 5) when there is no
session bus or nothing owns org.mavend.Assistant1: the call was not delivered,
so running the same thing locally instead is safe. After delivery a failure is
`NotFoundError` (an unknown reminder id), `UsageError` (the text is too long) or
`MavendError` (the daemon's handler failed, or it did not answer in time).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from dbus_next import Message, MessageType
from dbus_next.aio import MessageBus

from mavend.api.server import (
    BUS_NAME,
    ERROR_FAILED,
    ERROR_INVALID_INPUT,
    ERROR_NOT_FOUND,
    INTERFACE,
    OBJECT_PATH,
    name_owner_pid,
    session_bus_address,
)
from mavend.errors import DeviceError, MavendError, NotFoundError, UsageError

log = logging.getLogger("mavend.dbus_client")  # the name its journal lines have always had

CONNECT_TIMEOUT_S = 2.0
CALL_TIMEOUT_S = 10.0
# A turn may wait for the daemon's models to load on first use, then for an act to run.
TURN_TIMEOUT_S = 300.0
NOT_DELIVERED = frozenset(
    {
        "org.freedesktop.DBus.Error.ServiceUnknown",
        "org.freedesktop.DBus.Error.NameHasNoOwner",
        "org.freedesktop.DBus.Error.UnknownObject",  # a process owns the name, not the API
    }
)
NOT_RUNNING = (
    f"the mavend daemon is not running (nothing owns {BUS_NAME} on the session bus);"
    " start it with `mavend run` (or `systemctl --user start mavend`)"
)

T = TypeVar("T")


class DaemonUnavailable(DeviceError):
    """No session bus, or no daemon on it; the call was not delivered."""


class DaemonClient:
    """Async client: `async with DaemonClient() as client: await client.say("hi")`."""

    def __init__(self, bus_address: str | None = None, *, name: str = BUS_NAME):
        self.bus_address = bus_address
        self.name = name
        self._bus: MessageBus | None = None

    async def connect(self) -> DaemonClient:
        address = self.bus_address or session_bus_address()
        if address is None:
            raise DaemonUnavailable(f"{NOT_RUNNING} (no session bus: DBUS_SESSION_BUS_ADDRESS)")
        try:
            self._bus = await asyncio.wait_for(
                MessageBus(bus_address=address).connect(), CONNECT_TIMEOUT_S
            )
        except Exception as exc:  # refused, no such socket, auth, timeout
            raise DaemonUnavailable(
                f"{NOT_RUNNING} (no session bus: {type(exc).__name__}: {exc})"
            ) from exc
        return self

    async def close(self) -> None:
        if self._bus is not None:
            self._bus.disconnect()
            self._bus = None

    async def __aenter__(self) -> DaemonClient:
        return await self.connect()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # the API -------------------------------------------------------------
    async def owner_pid(self) -> int | None:
        """The daemon's process id, or None when no daemon is on the bus."""
        return await asyncio.wait_for(name_owner_pid(self._connected(), self.name), CALL_TIMEOUT_S)

    async def available(self) -> bool:
        return await self.owner_pid() is not None

    async def say(self, text: str) -> str:
        """The reply text of one turn."""
        (reply,) = await self.call("Say", "s", [text], timeout_s=TURN_TIMEOUT_S)
        return str(reply)

    async def say_json(self, text: str) -> dict[str, Any]:
        """The whole turn, as `mavend say --json` prints it."""
        (turn,) = await self.call("SayJson", "s", [text], timeout_s=TURN_TIMEOUT_S)
        return json.loads(turn)

    async def route(self, text: str) -> dict[str, Any]:
        """The decision, as `mavend route --json` prints it."""
        (decision,) = await self.call("Route", "s", [text], timeout_s=TURN_TIMEOUT_S)
        return json.loads(decision)

    async def list_reminders(self) -> list[dict[str, Any]]:
        (reminders,) = await self.call("ListReminders")
        return json.loads(reminders)

    async def cancel_reminder(self, reminder_id: int) -> bool:
        (cancelled,) = await self.call("CancelReminder", "x", [reminder_id])
        return bool(cancelled)

    async def cancel_reminder_json(self, reminder_id: int) -> dict[str, Any]:
        (reminder,) = await self.call("CancelReminderJson", "x", [reminder_id])
        return json.loads(reminder)

    async def satellites(self) -> list[dict[str, Any]]:
        (satellites,) = await self.call("Satellites")
        return json.loads(satellites)

    async def pause(self) -> None:
        await self.call("Pause")

    async def resume(self) -> None:
        await self.call("Resume")

    async def listening(self) -> bool:
        return bool(await self._get_property("Listening"))

    async def version(self) -> str:
        return str(await self._get_property("Version"))

    async def call(
        self,
        member: str,
        signature: str = "",
        body: Sequence[Any] = (),
        *,
        interface: str = INTERFACE,
        timeout_s: float = CALL_TIMEOUT_S,
    ) -> list[Any]:
        """One method call on the daemon's object; its reply body, or a mavend error."""
        message = Message(
            destination=self.name,
            path=OBJECT_PATH,
            interface=interface,
            member=member,
            signature=signature,
            body=list(body),
        )
        try:
            reply = await asyncio.wait_for(self._connected().call(message), timeout_s)
        except TimeoutError as exc:
            raise MavendError(f"the daemon did not answer {member} within {timeout_s:g} s") from exc
        except Exception as exc:  # the connection dropped
            raise MavendError(f"{member} failed: {type(exc).__name__}: {exc}") from exc
        if reply is None:
            raise MavendError(f"{member}: no reply from the daemon")
        if reply.message_type == MessageType.ERROR:
            raise _error(member, reply.error_name or "", str(reply.body[0]) if reply.body else "")
        return list(reply.body)

    async def _get_property(self, name: str) -> Any:
        (value,) = await self.call(
            "Get", "ss", [INTERFACE, name], interface="org.freedesktop.DBus.Properties"
        )
        return value.value

    def _connected(self) -> MessageBus:
        if self._bus is None:
            raise RuntimeError("DaemonClient is not connected: use `async with` or connect()")
        return self._bus


def _error(member: str, name: str, detail: str) -> MavendError:
    if name in NOT_DELIVERED:
        return DaemonUnavailable(NOT_RUNNING)
    if name == ERROR_NOT_FOUND:
        return NotFoundError(detail)
    if name == ERROR_INVALID_INPUT:
        return UsageError(detail)
    if name == ERROR_FAILED:
        return MavendError(f"the daemon: {detail}")
    return MavendError(f"{member} failed: {name}: {detail}")


# sync wrappers: one connection per call ------------------------------------
def _run(use: Callable[[DaemonClient], Awaitable[T]], bus_address: str | None) -> T:
    async def go() -> T:
        async with DaemonClient(bus_address) as client:
            return await use(client)

    return asyncio.run(go())


def daemon_available(bus_address: str | None = None) -> bool:
    """Whether a daemon owns org.mavend.Assistant1; False at once when there is no bus."""
    return daemon_pid_on_bus(bus_address) is not None


def daemon_pid_on_bus(bus_address: str | None = None) -> int | None:
    """The process id of the daemon on the session bus, or None (no bus, no daemon)."""
    if bus_address is None and session_bus_address() is None:
        return None
    try:
        return _run(lambda client: client.owner_pid(), bus_address)
    except Exception as exc:  # a probe: whatever went wrong, there is no daemon to use
        log.debug("looking for the daemon on the session bus: %s", exc)
        return None


def say(text: str, *, bus_address: str | None = None) -> str:
    return _run(lambda client: client.say(text), bus_address)


def say_json(text: str, *, bus_address: str | None = None) -> dict[str, Any]:
    return _run(lambda client: client.say_json(text), bus_address)


def route(text: str, *, bus_address: str | None = None) -> dict[str, Any]:
    return _run(lambda client: client.route(text), bus_address)


def list_reminders(*, bus_address: str | None = None) -> list[dict[str, Any]]:
    return _run(lambda client: client.list_reminders(), bus_address)


def cancel_reminder(reminder_id: int, *, bus_address: str | None = None) -> bool:
    return _run(lambda client: client.cancel_reminder(reminder_id), bus_address)


def satellites(*, bus_address: str | None = None) -> list[dict[str, Any]]:
    return _run(lambda client: client.satellites(), bus_address)


def pause(*, bus_address: str | None = None) -> None:
    _run(lambda client: client.pause(), bus_address)


def resume(*, bus_address: str | None = None) -> None:
    _run(lambda client: client.resume(), bus_address)


def listening(*, bus_address: str | None = None) -> bool:
    return _run(lambda client: client.listening(), bus_address)
