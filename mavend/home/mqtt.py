"""Publish to the MQTT broker, and wait briefly for devices to report their state.

One short session per command: connect, subscribe to the state topics that will
confirm it, publish, wait up to `[mqtt] confirm_timeout_s` for the states, leave.
A voice command is rare, so a connection kept open would only add a thread and
reconnect logic to the daemon. paho-mqtt's network loop is driven here, in the
calling thread, with deadlines: nothing blocks longer than the timeouts say.

Nothing is retried: a command that failed is reported, and the user decides
whether they still want it. Errors are classified, not logged, here: the caller
logs each failed turn once.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho

from mavend.config import MqttSettings

StateCheck = Callable[[Mapping[str, Any]], bool]

# Error classes, each said back in one sentence by mavend.home.run.
UNREACHABLE = "mqtt_unreachable"  # no connection (refused, timed out, no route)
REFUSED = "mqtt_refused"  # the broker refused the login
DROPPED = "mqtt_dropped"  # the connection went while sending or waiting
PASSWORD = "mqtt_password"  # the password file cannot be read


@dataclass(frozen=True)
class Message:
    topic: str
    payload: str
    qos: int = 0
    retain: bool = False


@dataclass
class MqttResult:
    error: str = ""  # "" or one of the classes above
    detail: str = ""
    published: bool = False  # the broker took every message (written, or acknowledged)
    states: dict[str, dict[str, Any]] = field(default_factory=dict)  # topic -> last state
    confirmed: set[str] = field(default_factory=set)  # topics whose state passed its check


class _Dropped(Exception):
    pass


@dataclass
class _Box:
    """What paho's callbacks saw, read by the loop below (same thread)."""

    watches: Mapping[str, StateCheck]
    kept_ok: frozenset[str] = frozenset()  # topics where the broker's kept state answers
    connack: Any = None
    subscribed: set[int] = field(default_factory=set)
    lost: bool = False
    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    confirmed: set[str] = field(default_factory=set)

    def on_connect(self, client, userdata, flags, reason, properties) -> None:
        self.connack = reason

    def on_subscribe(self, client, userdata, mid, reasons, properties) -> None:
        self.subscribed.add(mid)

    def on_disconnect(self, client, userdata, flags, reason, properties) -> None:
        self.lost = True

    def on_message(self, client, userdata, message) -> None:
        # A retained message is the state from before this command: it confirms nothing,
        # except for a read of a device that sleeps (a battery sensor never answers a /get).
        if message.topic not in self.watches or (
            message.retain and message.topic not in self.kept_ok
        ):
            return
        try:
            state = json.loads(message.payload.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return
        if isinstance(state, dict):
            self.states[message.topic] = state
            if self.watches[message.topic](state):
                self.confirmed.add(message.topic)


def read_secret(path: str) -> str:
    """The first line of a secret file (a password, a token), without its newline."""
    text = Path(path).expanduser().read_text(encoding="utf-8")
    return text.splitlines()[0].strip() if text.strip() else ""


def publish(
    settings: MqttSettings,
    messages: Sequence[Message],
    watches: Mapping[str, StateCheck] | None = None,
    kept_ok: frozenset[str] = frozenset(),
) -> MqttResult:
    """Send `messages`; then wait until every watched topic reports a state its check
    accepts, or `confirm_timeout_s` passes. Never raises for network trouble.

    `kept_ok`: watched topics whose retained message (the last state the broker kept)
    counts as an answer: reads of devices that sleep."""
    box = _Box(watches or {}, kept_ok)
    try:
        client = _client(settings, box)
    except OSError as exc:
        return MqttResult(PASSWORD, f"{settings.password_file}: {exc.strerror or exc}")
    try:
        client.connect(settings.host, settings.port, keepalive=30)
    except (OSError, ValueError) as exc:
        return MqttResult(UNREACHABLE, str(exc) or type(exc).__name__)
    try:
        return _session(client, box, settings, messages)
    finally:
        _leave(client)


def _client(settings: MqttSettings, box: _Box) -> paho.Client:
    client = paho.Client(
        paho.CallbackAPIVersion.VERSION2,
        client_id=f"mavend-{secrets.token_hex(4)}",  # two `mavend say` must not evict each other
        protocol=paho.MQTTv311,
    )
    client.connect_timeout = settings.connect_timeout_s
    if settings.username:
        password = read_secret(settings.password_file) if settings.password_file else None
        client.username_pw_set(settings.username, password)
    if settings.tls:
        client.tls_set(ca_certs=settings.ca_file or None)
    client.on_connect = box.on_connect
    client.on_subscribe = box.on_subscribe
    client.on_disconnect = box.on_disconnect
    client.on_message = box.on_message
    return client


def _session(
    client: paho.Client, box: _Box, settings: MqttSettings, messages: Sequence[Message]
) -> MqttResult:
    step = settings.connect_timeout_s
    try:
        if not _pump(client, box, lambda: box.connack is not None, step):
            return MqttResult(UNREACHABLE, "no answer to CONNECT")
    except _Dropped:
        return MqttResult(UNREACHABLE, "the connection closed before the broker answered")
    if box.connack.is_failure:
        return MqttResult(REFUSED, str(box.connack))
    result = MqttResult()
    try:
        if box.watches:
            _, mid = client.subscribe([(topic, 0) for topic in box.watches])
            if not _pump(client, box, lambda: mid in box.subscribed, step):
                return MqttResult(DROPPED, "no answer to SUBSCRIBE")
        infos = [client.publish(m.topic, m.payload, qos=m.qos, retain=m.retain) for m in messages]
        if not _pump(client, box, lambda: all(i.is_published() for i in infos), step):
            return MqttResult(DROPPED, "the broker did not take the message in time")
        result.published = True
        _pump(client, box, lambda: box.confirmed >= set(box.watches), settings.confirm_timeout_s)
    except _Dropped:
        result.error, result.detail = DROPPED, "the connection closed"
    result.states, result.confirmed = dict(box.states), set(box.confirmed)
    return result


def _pump(client: paho.Client, box: _Box, done: Callable[[], bool], seconds: float) -> bool:
    """Run paho's network loop until `done()`; False when `seconds` pass first."""
    deadline = time.monotonic() + seconds
    while not done():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        rc = client.loop(timeout=min(0.05, left))
        if (box.lost or rc != paho.MQTT_ERR_SUCCESS) and not done():
            # (A refused login closes the connection right after its CONNACK: done.)
            raise _Dropped
    return True


def _leave(client: paho.Client) -> None:
    try:
        client.disconnect()
        client.loop(timeout=0.01)
    except Exception:  # the connection may already be gone; nothing to clean up then
        pass
    sock = client.socket()
    if sock is not None:
        sock.close()
