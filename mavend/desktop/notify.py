"""Desktop notifications: a dbus-next client of org.freedesktop.Notifications.

`Notifier.notify()` sends one notification on the session bus and returns the
server's id; `ActionInvoked` and `NotificationClosed` signals are passed to the
`on_action` / `on_closed` callbacks. When the bus or the server is missing,
`notify()` raises `NotifyUnavailable` and the caller keeps the message to retry
(the reminder delivery loop does: see `mavend.scheduler.ReminderDelivery`); the
connection is re-made on the next call, so delivery resumes when the bus returns.

Bodies are cut to `max_body_chars` and, when the server renders markup (its
"body-markup" capability), escaped: text a user dictated must never be read as
markup ("<b>", "&"), and a 10 000-character body must not flood the screen.

Every notification names mavend's desktop entry (the `desktop-entry` hint:
`mavend service install` installs mavend.desktop and its icon, see
`mavend.desktop.entry`), so GNOME and KDE group mavend's notifications under one app
the user can configure. `show()` replaces an earlier notification through the
spec's `replaces_id`, but only when the same server instance gave that id:
servers number from 1 again after a restart, and an old id would then name
another application's notification.
"""

from __future__ import annotations

import asyncio
import html
import logging
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dbus_next import Message, MessageType, Variant
from dbus_next.aio import MessageBus

from mavend.config import NotificationSettings
from mavend.desktop.entry import APP_ID
from mavend.errors import DeviceError

log = logging.getLogger("mavend.notify")  # the name its journal lines have always had

BUS_NAME = "org.freedesktop.Notifications"
OBJECT_PATH = "/org/freedesktop/Notifications"
INTERFACE = "org.freedesktop.Notifications"
URGENCY = {"low": 0, "normal": 1, "critical": 2}
SUMMARY_CHARS = 120  # the spec asks for a short single line
ELLIPSIS = "…"
STACK_TAG_HINT = "x-dunst-stack-tag"  # same tag: replace, not add (dunst; others ignore it)
DBUS_NAME = "org.freedesktop.DBus"
DBUS_PATH = "/org/freedesktop/DBus"


class NotifyUnavailable(DeviceError):
    """No session bus, or no notification server on it: try again later."""


@dataclass(frozen=True)
class Notification:
    summary: str
    body: str = ""
    actions: tuple[tuple[str, str], ...] = ()  # (key, label) pairs
    urgency: str | None = None  # low | normal | critical; None: the configured one
    timeout_ms: int | None = None  # None: the configured one
    # Identifies what is shown: sent again with the same tag, a server that
    # stacks (dunst's "x-dunst-stack-tag") replaces the first instead of adding
    # a second. The reminder delivery tags each firing (see ReminderDelivery).
    tag: str = ""
    # The spec's "category" hint ("" = none): servers may group or style by it.
    category: str = ""
    # A sound from the freedesktop sound naming spec ("sound-name"); "" = the server's choice.
    sound: str = ""


@dataclass(frozen=True)
class Shown:
    """A notification as a server took it: its id, and which server instance gave it."""

    id: int
    # The server's unique bus name on one of our connections: an id means
    # something only to the server that returned it (see `Notifier.show`).
    server: str


def clean_text(text: str) -> str:
    """Control characters out (newlines and tabs stay): they garble a notification.
    Lone surrogates too: D-Bus strings must be valid UTF-8."""
    return "".join(
        ch if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cf", "Cs") else " "
        for ch in text
    )


def cut(text: str, limit: int) -> str:
    """At most `limit` characters, ending in an ellipsis when cut, at a word if one is near."""
    if len(text) <= limit:
        return text
    head = text[: max(limit - 1, 0)]
    space = max(head.rfind(" "), head.rfind("\n"))
    if space > limit * 3 // 4:  # a word boundary near the end; else cut mid-word
        head = head[:space]
    return head.rstrip() + ELLIPSIS


def prepare_body(text: str, limit: int, *, markup: bool) -> str:
    """The body as sent: cleaned, cut (counted in visible characters), then escaped."""
    body = cut(clean_text(text).strip(), limit)
    # Cut before escaping, so an entity ("&amp;") is never split in two.
    return html.escape(body, quote=False) if markup else body


def prepare_summary(text: str) -> str:
    return cut(" ".join(clean_text(text).split()), SUMMARY_CHARS)


class Notifier:
    """One session-bus connection, made on first use and re-made after it drops."""

    def __init__(
        self,
        settings: NotificationSettings,
        *,
        address: str | None = None,
        call_timeout_s: float = 5.0,
    ):
        self.settings = settings
        self.address = address  # None: $DBUS_SESSION_BUS_ADDRESS, read at each connect
        self.call_timeout_s = call_timeout_s
        self.on_action: Callable[[int, str], None] | None = None
        self.on_closed: Callable[[int, int], None] | None = None
        self._bus: MessageBus | None = None
        self._capabilities: frozenset[str] | None = None
        self._connections = 0  # counts connects: a new bus may reuse unique names
        self._lock = asyncio.Lock()

    @property
    def connected(self) -> bool:
        return self._bus is not None and self._bus.connected

    async def notify(self, note: Notification, *, replaces_id: int = 0) -> int:
        """Show `note`; the server's notification id. Raises NotifyUnavailable."""
        async with self._lock:
            bus = await self._connection()
            return int((await self._notify(bus, note, replaces_id)).body[0])

    async def show(self, note: Notification, *, replacing: Shown | None = None) -> Shown:
        """Show `note`, in place of `replacing` when the server that showed it still runs.

        A server that has restarted since gets replaces_id 0: its ids start
        again from 1, so the old one may now be another program's notification.
        Raises NotifyUnavailable.
        """
        async with self._lock:
            bus = await self._connection()
            replaces_id = 0
            if replacing is not None and replacing.server == await self._server_key(bus):
                replaces_id = replacing.id
            reply = await self._notify(bus, note, replaces_id)
            return Shown(int(reply.body[0]), self._key(reply.sender or ""))

    async def _notify(self, bus: MessageBus, note: Notification, replaces_id: int) -> Message:
        capabilities = await self._server_capabilities(bus)
        markup = "body-markup" in capabilities
        actions: list[str] = []
        if "actions" in capabilities:
            for key, label in note.actions:
                actions += [key, label]
        return await self._call(
            bus,
            "Notify",
            "susssasa{sv}i",
            [
                self.settings.app_name,
                replaces_id,
                self.settings.icon,
                prepare_summary(note.summary),
                prepare_body(note.body, self.settings.max_body_chars, markup=markup),
                actions,
                self._hints(note, replacing=replaces_id != 0),
                self.settings.timeout_ms if note.timeout_ms is None else note.timeout_ms,
            ],
        )

    def _hints(self, note: Notification, *, replacing: bool) -> dict[str, Variant]:
        urgency = note.urgency or self.settings.urgency
        hints = {
            "urgency": Variant("y", URGENCY[urgency]),
            # The .desktop file's name without ".desktop": the server finds the
            # app's name, icon and per-app settings through it.
            "desktop-entry": Variant("s", APP_ID),
        }
        if note.category:
            hints["category"] = Variant("s", note.category)
        if note.sound and not replacing:  # an update in place should not ring a second time
            hints["sound-name"] = Variant("s", note.sound)
        if note.tag:
            hints[STACK_TAG_HINT] = Variant("s", note.tag)
        return hints

    async def close_notification(self, notification_id: int) -> None:
        async with self._lock:
            bus = await self._connection()
            await self._call(bus, "CloseNotification", "u", [notification_id])

    async def server_information(self) -> tuple[str, str, str, str]:
        async with self._lock:
            bus = await self._connection()
            reply = await self._call(bus, "GetServerInformation", "", [])
            return tuple(reply.body)  # type: ignore[return-value]

    async def close(self) -> None:
        if self._bus is not None:
            self._bus.disconnect()
            self._bus = None
        self._capabilities = None

    # the connection ------------------------------------------------------
    async def _connection(self) -> MessageBus:
        if self._bus is not None and self._bus.connected:
            return self._bus
        self._bus, self._capabilities = None, None
        try:
            bus = await asyncio.wait_for(
                MessageBus(bus_address=self.address).connect(), self.call_timeout_s
            )
        except Exception as exc:  # dbus-next raises many kinds: no address, refused, auth
            raise NotifyUnavailable(f"no session bus: {type(exc).__name__}: {exc}") from exc
        _ignore_disconnect_error(bus)
        bus.add_message_handler(self._on_message)
        try:
            await self._call(
                bus,
                "AddMatch",
                "s",
                [f"type='signal',interface='{INTERFACE}'"],
                destination=DBUS_NAME,
                path=DBUS_PATH,
                interface=DBUS_NAME,
            )
        except NotifyUnavailable:
            bus.disconnect()
            raise
        self._bus = bus
        self._connections += 1
        log.info("connected to the session bus")
        return bus

    def _key(self, unique_name: str) -> str:
        return f"{self._connections}/{unique_name}"

    async def _server_key(self, bus: MessageBus) -> str:
        """Who owns the notification name now, keyed like `Shown.server`."""
        reply = await self._call(
            bus,
            "GetNameOwner",
            "s",
            [BUS_NAME],
            destination=DBUS_NAME,
            path=DBUS_PATH,
            interface=DBUS_NAME,
        )
        return self._key(str(reply.body[0]))

    async def _server_capabilities(self, bus: MessageBus) -> frozenset[str]:
        # Asked once per connection: a server that appears later on the same
        # bus is found on the next try, because a failure leaves this unset.
        if self._capabilities is None:
            reply = await self._call(bus, "GetCapabilities", "", [])
            self._capabilities = frozenset(reply.body[0])
        return self._capabilities

    async def _call(
        self,
        bus: MessageBus,
        member: str,
        signature: str,
        body: Sequence[object],
        *,
        destination: str = BUS_NAME,
        path: str = OBJECT_PATH,
        interface: str = INTERFACE,
    ) -> Message:
        message = Message(
            destination=destination,
            path=path,
            interface=interface,
            member=member,
            signature=signature,
            body=list(body),
        )
        try:
            reply = await asyncio.wait_for(bus.call(message), self.call_timeout_s)
        except Exception as exc:  # a dropped connection, a timeout
            self._capabilities = None
            raise NotifyUnavailable(f"{member} failed: {type(exc).__name__}: {exc}") from exc
        if reply is None or reply.message_type == MessageType.ERROR:
            self._capabilities = None
            detail = reply.body[0] if reply is not None and reply.body else ""
            name = reply.error_name if reply is not None else "no reply"
            if name in (
                "org.freedesktop.DBus.Error.ServiceUnknown",  # a call to the server
                "org.freedesktop.DBus.Error.NameHasNoOwner",  # GetNameOwner
            ):
                raise NotifyUnavailable("no notification server on the session bus")
            raise NotifyUnavailable(f"{member} failed: {name}: {detail}")
        return reply

    def _on_message(self, message: Message) -> None:
        if message.message_type != MessageType.SIGNAL or message.interface != INTERFACE:
            return
        try:
            if message.member == "ActionInvoked" and self.on_action is not None:
                self.on_action(int(message.body[0]), str(message.body[1]))
            elif message.member == "NotificationClosed" and self.on_closed is not None:
                self.on_closed(int(message.body[0]), int(message.body[1]))
        except Exception:  # a callback's bug must not break the bus connection
            log.exception("handling %s failed", message.member)


def _ignore_disconnect_error(bus: MessageBus) -> None:
    """A dropped bus sets an exception nobody awaits; read it so asyncio does not warn."""
    future = asyncio.ensure_future(bus.wait_for_disconnect())

    def done(f: asyncio.Future) -> None:
        if not f.cancelled() and f.exception() is not None:
            log.warning("the session bus connection dropped: %s", f.exception())

    future.add_done_callback(done)
