"""Real things for the home tests: a Mosquitto broker, MQTT devices and listeners
(paho-mqtt clients), and a local HTTP server that answers as Home Assistant's REST
API documents (Home Assistant itself cannot be installed here).

The broker is Debian's `mosquitto`, started on 127.0.0.1 on a free port with a
config file written per test; a missing binary fails the test, naming the package.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import paho.mqtt.client as paho
import pytest

SBIN = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/local/sbin"])

# The example home of the README and config.example.toml, as the tests use it.
HOME_CONFIG = """
[audio]
room = "kitchen"

[mqtt]
host = "127.0.0.1"
port = {port}
confirm_timeout_s = 1.5
connect_timeout_s = 2.0

[homeassistant]
url = "{ha_url}"
token_file = "{token_file}"
timeout_s = 3.0

[[devices]]
name = "kitchen ceiling"
room = "kitchen"
dimmable = true
mqtt = "zigbee2mqtt/kitchen_ceiling"

[[devices]]
name = "kitchen spots"
room = "kitchen"
mqtt = "zigbee2mqtt/kitchen_spots"

[[devices]]
name = "kettle"
type = "plug"
room = "kitchen"
mqtt = "zigbee2mqtt/kettle_plug"

[[devices]]
name = "study lamp"
aliases = ["lamp", "desk lamp"]
room = "study"
dimmable = true
mqtt = "zigbee2mqtt/study_lamp"

[[devices]]
name = "bedside lamp"
aliases = ["lamp"]
room = "bedroom"
homeassistant = "light.bedside_lamp"
dimmable = true
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def mosquitto_binary() -> str:
    found = shutil.which("mosquitto", path=SBIN)
    if found is None:
        pytest.fail(
            "the MQTT tests need Debian's Mosquitto broker: `sudo apt-get install mosquitto` "
            "(scripts/setup.sh installs it for `make test`)"
        )
    return found


@dataclass
class Broker:
    port: int
    folder: Path
    proc: subprocess.Popen[bytes] | None = None
    password: tuple[str, str] | None = None

    def start(self) -> Broker:
        conf = self.folder / "mosquitto.conf"
        lines = [
            f"listener {self.port} 127.0.0.1",
            "persistence false",
            f"log_dest file {self.folder / 'mosquitto.log'}",
            # As root, Mosquitto would switch to the `mosquitto` user, who cannot read
            # this test's private folder: stay who we are.
            f"user {getpass.getuser()}",
        ]
        if self.password is None:
            lines.append("allow_anonymous true")
        else:
            passwd = self.folder / "passwd"
            subprocess.run(
                ["mosquitto_passwd", "-b", "-c", str(passwd), *self.password],
                check=True,
                capture_output=True,
                env={**os.environ, "PATH": SBIN},
            )
            lines += ["allow_anonymous false", f"password_file {passwd}"]
        conf.write_text("\n".join(lines) + "\n")
        self.proc = subprocess.Popen([mosquitto_binary(), "-c", str(conf)])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2),
            ):
                return self
            assert self.proc.poll() is None, (self.folder / "mosquitto.log").read_text()
            time.sleep(0.05)
        raise AssertionError(f"mosquitto did not listen on {self.port}")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


@contextlib.contextmanager
def running_broker(folder: Path, password: tuple[str, str] | None = None) -> Iterator[Broker]:
    folder.mkdir(parents=True, exist_ok=True)
    broker = Broker(free_port(), folder, password=password).start()
    try:
        yield broker
    finally:
        broker.kill()


def _connected(port: int, name: str, auth: tuple[str, str] | None = None) -> paho.Client:
    client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=name)
    if auth:
        client.username_pw_set(*auth)
    ready = threading.Event()
    client.on_connect = lambda *a: ready.set()
    client.connect("127.0.0.1", port)
    client.loop_start()
    assert ready.wait(5), f"{name} could not connect"
    return client


@dataclass
class Listener:
    """A subscriber to every topic: what went over the broker, in order."""

    port: int
    auth: tuple[str, str] | None = None
    seen: list[tuple[str, str]] = field(default_factory=list)
    client: paho.Client | None = None

    def __enter__(self) -> Listener:
        self.client = _connected(self.port, "test-listener", self.auth)
        subscribed = threading.Event()
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.on_message = lambda c, u, m: self.seen.append(
            (m.topic, m.payload.decode("utf-8", "replace"))
        )
        self.client.subscribe("#", qos=1)
        assert subscribed.wait(5)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.client is not None
        self.client.loop_stop()
        self.client.disconnect()

    def sent_to_devices(self) -> list[tuple[str, str]]:
        return [(t, p) for t, p in self.seen if t.endswith(("/set", "/get"))]


@dataclass
class Z2mDevices:
    """Zigbee2MQTT devices: answer a /set or /get on their state topic, as Z2M does.

    `silent`: friendly names that never answer. `on_command`: called with each
    command before the device answers (a test kills the broker there). `react`: per
    friendly name, what a /set payload makes the device report (a cover told OPEN
    reports its position too); by default the payload is taken as the new state."""

    port: int
    silent: set[str] = field(default_factory=set)
    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    on_command: Any = None
    client: paho.Client | None = None
    react: dict[str, Any] = field(default_factory=dict)
    # Friendly names published with retain (Zigbee2MQTT's per-device `retain: true`).
    retained: set[str] = field(default_factory=set)

    def __enter__(self) -> Z2mDevices:
        self.client = _connected(self.port, "test-z2m")
        subscribed = threading.Event()
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.on_message = self._command
        self.client.subscribe([("zigbee2mqtt/+/set", 1), ("zigbee2mqtt/+/get", 1)])
        assert subscribed.wait(5)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.client is not None
        self.client.loop_stop()
        self.client.disconnect()

    def _command(self, client: paho.Client, userdata: object, message: paho.MQTTMessage) -> None:
        _, name, verb = message.topic.split("/")
        if self.on_command is not None:
            self.on_command(message.topic)
        if name in self.silent:
            return
        state = self.states.setdefault(name, {"state": "OFF", "brightness": 254})
        if verb == "set":
            payload = json.loads(message.payload)
            state.update(self.react[name](payload) if name in self.react else payload)
        self.report(name)

    def report(self, name: str) -> None:
        """Publish the device's state, as it does on a change or a /get (or on its own:
        a sensor waking up); qos 1, so a kept state is on the broker when this returns."""
        assert self.client is not None
        info = self.client.publish(
            f"zigbee2mqtt/{name}", json.dumps(self.states[name]), qos=1,
            retain=name in self.retained,
        )
        if threading.current_thread() is not getattr(self.client, "_thread", None):
            info.wait_for_publish(5)


# Home Assistant's REST API -----------------------------------------------------------
@dataclass
class HaRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class FakeHomeAssistant:
    """Answers as Home Assistant's REST API documents: checks the method, the path,
    `Authorization: Bearer <token>`, `Content-Type: application/json` and the JSON body;
    401 for a wrong token, 400 for a body that isn't a JSON object, 404 for an unknown
    entity or path, 405 for a wrong method. Keeps the entities' states."""

    token: str
    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[HaRequest] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeHomeAssistant:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                fake.answer(self, "GET")

            def do_POST(self) -> None:
                fake.answer(self, "POST")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.shutdown()
        self.server.server_close()

    def answer(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        self.requests.append(HaRequest(method, handler.path, dict(handler.headers), body))
        status, reply = self.route(handler, method, body)
        data = json.dumps(reply).encode() if not isinstance(reply, str) else reply.encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json" if status == 200 else "text/plain")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def route(self, handler: BaseHTTPRequestHandler, method: str, body: bytes) -> tuple[int, Any]:
        if handler.headers.get("Authorization") != f"Bearer {self.token}":
            return 401, "401: Unauthorized"
        parts = handler.path.split("/")
        if handler.path.startswith("/api/states/") and len(parts) == 4:
            if method != "GET":
                return 405, "405: Method Not Allowed"
            state = self.states.get(parts[3])
            return (200, state) if state else (404, "Entity not found.")
        if handler.path.startswith("/api/services/") and len(parts) == 5:
            if method != "POST":
                return 405, "405: Method Not Allowed"
            if handler.headers.get("Content-Type") != "application/json":
                return 400, "Data should be valid JSON."
            try:
                data = json.loads(body)
            except ValueError:
                return 400, "Data should be valid JSON."
            if not isinstance(data, dict):
                return 400, "Data should be a JSON object."
            return 200, self.service(parts[3], parts[4], data)
        return 404, "404: Not Found"

    def service(self, domain: str, service: str, data: dict[str, Any]) -> list[dict[str, Any]]:
        entity = data.get("entity_id", "")
        state = self.states.get(entity)
        if state is None:
            return []
        before = json.dumps(state, sort_keys=True)
        attributes = state.setdefault("attributes", {})
        if service == "turn_on":
            state["state"] = "on"
            if "brightness_pct" in data:
                attributes["brightness"] = round(data["brightness_pct"] * 255 / 100)
        elif service == "turn_off":
            state["state"] = "off"
        elif service == "set_temperature":
            attributes["temperature"] = data["temperature"]
        # Home Assistant lists the states that changed during the call.
        return [state] if json.dumps(state, sort_keys=True) != before else []


def ha_entity(entity_id: str, state: str, **attributes: Any) -> dict[str, Any]:
    return {
        "entity_id": entity_id,
        "state": state,
        "attributes": attributes,
        "last_changed": "2026-01-01T00:00:00+00:00",
        "last_updated": "2026-01-01T00:00:00+00:00",
        "context": {"id": "01", "parent_id": None, "user_id": None},
    }
