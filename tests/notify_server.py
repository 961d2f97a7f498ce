"""A notification server written for the tests: org.freedesktop.Notifications
over dbus-next, recording every call. Runs on a private session bus.

`shown` is what would be on screen: a Notify whose replaces_id names a shown
notification replaces it (and returns that id, as the spec says); an unknown
replaces_id is shown as a new notification with a new id, as GNOME Shell does."""


import asyncio
import threading
from dataclasses import dataclass, field

from dbus_next import NameFlag, RequestNameReply
from dbus_next.aio import MessageBus
from dbus_next.service import ServiceInterface, method, signal


@dataclass
class Notified:
    app_name: str
    replaces_id: int
    icon: str
    summary: str
    body: str
    actions: list[str]
    hints: dict
    timeout: int


class NotificationsInterface(ServiceInterface):
    def __init__(self) -> None:
        super().__init__("org.freedesktop.Notifications")
        self.received: list[Notified] = []
        self.shown: dict[int, Notified] = {}
        self._next_id = 1

    @method()
    def Notify(self, app_name: "s", replaces_id: "u", app_icon: "s", summary: "s",
               body: "s", actions: "as", hints: "a{sv}", expire_timeout: "i") -> "u":
        note = Notified(app_name, replaces_id, app_icon, summary, body, list(actions),
                        dict(hints), expire_timeout)
        self.received.append(note)
        notification_id = replaces_id
        if replaces_id not in self.shown:
            notification_id = self._next_id
            self._next_id += 1
        self.shown[notification_id] = note
        return notification_id

    @method()
    def CloseNotification(self, id: "u"):
        self.shown.pop(id, None)
        self.NotificationClosed(id, 3)

    @method()
    def GetCapabilities(self) -> "as":
        return ["actions", "body", "body-markup"]

    @method()
    def GetServerInformation(self) -> "ssss":
        return ["mavend-test-server", "mavend", "1.0", "1.2"]

    @signal()
    def NotificationClosed(self, id: "u", reason: "u") -> "uu":
        return [id, reason]

    @signal()
    def ActionInvoked(self, id: "u", action_key: "s") -> "us":
        return [id, action_key]


@dataclass
class NotificationServer:
    """Runs the interface on its own event loop in a thread, for sync tests too."""

    address: str
    interface: NotificationsInterface = field(default_factory=NotificationsInterface)
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _bus: MessageBus | None = None

    def start(self) -> "NotificationServer":
        ready = threading.Event()

        async def serve() -> None:
            bus = self._bus = await MessageBus(bus_address=self.address).connect()
            bus.export("/org/freedesktop/Notifications", self.interface)
            # The name may still be held by a server stopped a moment ago: the
            # bus frees it once it sees that connection closed.
            for _ in range(100):
                reply = await bus.request_name(
                    "org.freedesktop.Notifications", NameFlag.DO_NOT_QUEUE
                )
                if reply == RequestNameReply.PRIMARY_OWNER:
                    break
                await asyncio.sleep(0.05)
            ready.set()
            await asyncio.Event().wait()

        def run() -> None:
            self._loop = asyncio.new_event_loop()
            self._loop.create_task(serve())
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, daemon=True, name="notify-server")
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the test notification server did not start")
        return self

    def stop(self) -> None:
        """Gone from the bus, as a server that exits: its name is free for another."""
        if self._loop is not None:
            if self._bus is not None:
                self._loop.call_soon_threadsafe(self._bus.disconnect)
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(5)
