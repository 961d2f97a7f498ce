"""A stateful Home Assistant stand-in for tests and benches (HA itself cannot be installed).

Loads a home fixture (areas, devices, entities with state + attributes in HA's shapes),
keeps state per entity and applies services as Home Assistant documents them. Sources:
- REST API: home-assistant/core homeassistant/components/api/__init__.py
  (APIDomainServicesView: 200 with the changed states; `?return_response` gives
  {"changed_states", "service_response"}; vol.Invalid / ServiceNotFound -> 400;
  APITemplateView renders a template to text), developers.home-assistant.io/docs/api/rest.
- Services and fields: homeassistant/components/<domain>/services.yaml (cover: position
  0-100 required for set_cover_position; todo: add_item/remove_item/update_item with
  `item`, `rename`, `status` needs_action|completed; get_items with `status`).
- States: vacuum/const.py VacuumActivity (cleaning, docked, idle, paused, returning, error),
  lock LockState (locked, unlocked, open, jammed, locking, unlocking), cover (open,
  closed, opening, closing), valve (open, closed, opening, closing).
- Feature bits: CoverEntityFeature OPEN=1 CLOSE=2 SET_POSITION=4 STOP=8; LockEntityFeature
  OPEN=1; FanEntityFeature SET_SPEED=1 OSCILLATE=2 PRESET_MODE=8; ValveEntityFeature
  OPEN=1 CLOSE=2 SET_POSITION=4 STOP=8; MediaPlayerEntityFeature PAUSE=1 VOLUME_SET=4
  VOLUME_MUTE=8 PREVIOUS_TRACK=16 NEXT_TRACK=32 PLAY=16384; VacuumEntityFeature
  STOP=8 RETURN_HOME=16 START=8192; TodoListEntityFeature CREATE=1 DELETE=2 UPDATE=4.

Deliberate differences: moving states are instant (open_cover ends `open`); an unknown
entity is a 400 with a message (Home Assistant 2024+ logs a warning and answers 200 []),
so a client's mistake is visible. Faults per entity (fixture `standin.fault` or
`StandIn.faults`): {"stops_at": 50} (a cover/valve that stops half-way), {"jams": true}
(a lock that jams). Not covered: WebSocket API, events, tilt, climate ranges, humidifiers.
"""

from __future__ import annotations

import copy
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jinja2
import jinja2.sandbox

NOW = "2026-01-01T00:00:00+00:00"


class ServiceError(Exception):
    """A 400 from Home Assistant, with its message."""


def _feature(state: dict[str, Any], bit: int) -> bool:
    return bool(int(state["attributes"].get("supported_features", 0)) & bit)


def _need(state: dict[str, Any], bit: int, service: str) -> None:
    if not _feature(state, bit):
        raise ServiceError(f"Entity {state['entity_id']} does not support action {service}")


def _number(data: dict[str, Any], key: str, low: float, high: float) -> float:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ServiceError(f"expected float for dictionary value @ data['{key}']")
    if not low <= value <= high:
        raise ServiceError(
            f"value must be at most {high} for dictionary value @ data['{key}']"
            if value > high
            else f"value must be at least {low} for dictionary value @ data['{key}']"
        )
    return value


@dataclass
class StandIn:
    """The home's state and the services that change it; `serve()` for HTTP."""

    home: dict[str, Any]
    token: str = "standin-token"
    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra: dict[str, dict[str, Any]] = field(default_factory=dict)
    faults: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    _areas: dict[str, str | None] | None = None

    def __post_init__(self) -> None:
        self.reset()

    @classmethod
    def load(cls, path: Path, token: str = "standin-token") -> StandIn:
        return cls(json.loads(Path(path).read_text()), token)

    def reset(self) -> None:
        self.states, self.extra, self.calls = {}, {}, []
        self.faults = {}
        for entity in self.home["entities"]:
            eid = entity["entity_id"]
            self.states[eid] = {
                "entity_id": eid,
                "state": entity["state"],
                "attributes": copy.deepcopy(entity.get("attributes", {})),
                "last_changed": NOW,
                "last_updated": NOW,
                "context": {"id": "0", "parent_id": None, "user_id": None},
            }
            standin = copy.deepcopy(entity.get("standin", {}))
            self.extra[eid] = standin
            if "fault" in standin:
                self.faults[eid] = standin["fault"]

    # areas ---------------------------------------------------------------------------
    def area_of(self, entity_id: str) -> str | None:
        """The entity's own area, else its device's (as HA's area_id/area_entities do)."""
        if self._areas is None:  # built once: a home of 5,000 entities stays fast
            devices = {d["id"]: d.get("area_id") for d in self.home.get("devices", [])}
            self._areas = {
                e["entity_id"]: e.get("area_id") or devices.get(e.get("device_id"))
                for e in self.home["entities"]
            }
        return self._areas.get(entity_id)

    def render(self, template: str) -> str:
        areas = {a["area_id"]: a for a in self.home.get("areas", [])}

        def area_id(value: str) -> str | None:
            if value in areas:
                return value
            for a in areas.values():
                if a["name"].lower() == str(value).lower():
                    return a["area_id"]
            return self.area_of(value)

        def area_name(value: str) -> str | None:
            found = area_id(value)
            return areas[found]["name"] if found in areas else None

        def area_entities(value: str) -> list[str]:
            found = area_id(value)
            return [e for e in self.states if self.area_of(e) == found] if found else []

        floors = {f["floor_id"]: f for f in self.home.get("floors", [])}

        def floor_id(value: str) -> str | None:
            if value in floors:
                return value
            return next((f for f, v in floors.items() if v["name"].lower() == str(value).lower()),
                        None)

        def floor_name(value: str) -> str | None:
            found = floor_id(value)
            return floors[found]["name"] if found else None

        def floor_areas(value: str) -> list[str]:
            found = floor_id(value)
            return [a for a, v in areas.items() if found and v.get("floor_id") == found]

        env = jinja2.sandbox.ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined)
        if "floors" in self.home:  # Home Assistant 2024.4 on; before it, no floors()
            env.globals.update(floors=lambda: list(floors), floor_name=floor_name,
                               floor_areas=floor_areas)
        env.globals.update(
            areas=lambda: list(areas),
            area_id=area_id,
            area_name=area_name,
            area_entities=area_entities,
            states=lambda eid: self.states.get(eid, {}).get("state", "unknown"),
        )
        env.filters["tojson"] = json.dumps
        env.filters["area_name"] = area_name
        env.filters["area_entities"] = area_entities
        try:
            return env.from_string(template).render()
        except jinja2.TemplateError as exc:
            raise ServiceError(f"Error rendering template: {exc}") from exc

    # services ------------------------------------------------------------------------
    def call(
        self, domain: str, service: str, data: dict[str, Any], return_response: bool = False
    ) -> Any:
        self.calls.append((domain, service, copy.deepcopy(data)))
        ids = data.get("entity_id", [])
        ids = [ids] if isinstance(ids, str) else list(ids)
        if not ids:
            raise ServiceError("Action requires an entity_id")
        wants_response = domain == "todo" and service == "get_items"
        if wants_response and not return_response:
            raise ServiceError(
                "Service call requires responses but caller did not ask for responses"
            )
        for eid in ids:
            if eid not in self.states:
                raise ServiceError(f"Referenced entity {eid} is missing or not currently available")
            if eid.split(".")[0] != domain and domain != "homeassistant":
                raise ServiceError(f"Entity {eid} is not a {domain} entity")
        before = {eid: json.dumps(s, sort_keys=True) for eid, s in self.states.items()}
        response: dict[str, Any] = {}
        fields = {k: v for k, v in data.items() if k != "entity_id"}
        for eid in ids:
            handler = getattr(self, f"_{eid.split('.')[0]}", None)
            if handler is None:
                raise ServiceError(f"Action {domain}.{service} not found")
            out = handler(self.states[eid], service, fields)
            if out is not None:
                response[eid] = out
        changed = [
            s for eid, s in self.states.items() if json.dumps(s, sort_keys=True) != before[eid]
        ]
        if return_response:
            return {"changed_states": changed, "service_response": response}
        return changed

    def _unknown(self, state: dict[str, Any], service: str) -> ServiceError:
        return ServiceError(f"Action {state['entity_id'].split('.')[0]}.{service} not found")

    def _onoff(self, state: dict[str, Any], service: str) -> bool:
        if service == "turn_on":
            return True
        if service == "turn_off":
            return False
        if service == "toggle":
            return state["state"] != "on"
        raise self._unknown(state, service)

    def _light(self, state: dict[str, Any], service: str, data: dict[str, Any]) -> None:
        on = self._onoff(state, service)
        attrs = state["attributes"]
        if on and service == "turn_on":
            if "brightness_pct" in data:
                pct = _number(data, "brightness_pct", 0, 100)
                attrs["brightness"] = round(pct * 255 / 100)
                on = pct > 0
            if "brightness" in data:
                attrs["brightness"] = int(_number(data, "brightness", 0, 255))
                on = attrs["brightness"] > 0
            if "brightness_step_pct" in data or "brightness_step" in data:
                # HA: a step from the current brightness (or off = 0), clamped to 0-255.
                step = (
                    _number(data, "brightness_step_pct", -100, 100) * 255 / 100
                    if "brightness_step_pct" in data
                    else _number(data, "brightness_step", -255, 255)
                )
                now = attrs.get("brightness") or 0 if state["state"] == "on" else 0
                attrs["brightness"] = max(0, min(255, round(now + step)))
                on = attrs["brightness"] > 0
            modes = attrs.get("supported_color_modes", ["onoff"])
            if "color_temp_kelvin" in data:
                if "color_temp" not in modes:
                    raise ServiceError(f"Entity {state['entity_id']} does not support color_temp")
                attrs["color_temp_kelvin"] = int(_number(data, "color_temp_kelvin", 1000, 20000))
                attrs["color_mode"] = "color_temp"
            if "rgb_color" in data:
                rgb = data["rgb_color"]
                if not (
                    isinstance(rgb, list) and len(rgb) == 3 and all(0 <= int(c) <= 255 for c in rgb)
                ):
                    raise ServiceError("invalid rgb_color")
                if not set(modes) & {"rgb", "hs", "xy", "rgbw", "rgbww"}:
                    raise ServiceError(f"Entity {state['entity_id']} does not support rgb_color")
                attrs["rgb_color"] = [int(c) for c in rgb]
                attrs["color_mode"] = "rgb"
            if on and attrs.get("brightness") is None and modes != ["onoff"]:
                attrs["brightness"] = self.extra[state["entity_id"]].get("last_brightness", 255)
        if not on and attrs.get("brightness") is not None:
            self.extra[state["entity_id"]]["last_brightness"] = attrs["brightness"] or 255
            attrs["brightness"] = None
        state["state"] = "on" if on else "off"

    def _switch(self, state: dict[str, Any], service: str, data: dict[str, Any]) -> None:
        state["state"] = "on" if self._onoff(state, service) else "off"

    _input_boolean = _switch

    def _positioned(
        self, state: dict[str, Any], service: str, data: dict[str, Any], kind: str
    ) -> None:
        attrs, fault = state["attributes"], self.faults.get(state["entity_id"], {})
        target: float
        if service in (f"open_{kind}", "toggle") and not (
            service == "toggle" and state["state"] in ("open", "opening")
        ):
            _need(state, 1, service)
            target = 100
        elif service in (f"close_{kind}", "toggle"):
            _need(state, 2, service)
            target = 0
        elif service == f"set_{kind}_position":
            _need(state, 4, service)
            if "position" not in data:
                raise ServiceError("required key not provided @ data['position']")
            target = _number(data, "position", 0, 100)
        elif service == f"stop_{kind}":
            _need(state, 8, service)
            if state["state"] in ("opening", "closing"):
                state["state"] = "open"
            return
        else:
            raise self._unknown(state, service)
        if "stops_at" in fault:
            target = fault["stops_at"] if target != fault["stops_at"] else target
        if _feature(state, 4) or "current_position" in attrs:
            attrs["current_position"] = int(target)
        state["state"] = "closed" if target == 0 else "open"

    def _cover(self, state: dict[str, Any], service: str, data: dict[str, Any]) -> None:
        self._positioned(state, service, data, "cover")

    def _valve(self, state: dict[str, Any], service: str, data: dict[str, Any]) -> None:
        self._positioned(state, service, data, "valve")

    def _lock(self, state: dict[str, Any], service: str, data: dict[str, Any]) -> None:
        if service not in ("lock", "unlock", "open"):
            raise self._unknown(state, service)
        if service == "open":
            _need(state, 1, service)
        if self.faults.get(state["entity_id"], {}).get("jams"):
            state["state"] = "jammed"
            return
        state["state"] = {"lock": "locked", "unlock": "unlocked", "open": "open"}[service]

    def _fan(self, state: dict[str, Any], service: str, data: dict[str, Any]) -> None:
        attrs, extra = state["attributes"], self.extra[state["entity_id"]]
        if service in ("turn_on", "turn_off", "toggle"):
            on = self._onoff(state, service)
            if on and "percentage" in data:
                _need(state, 1, "set_percentage")
                attrs["percentage"] = int(_number(data, "percentage", 0, 100))
                on = attrs["percentage"] > 0
            if on and "preset_mode" in data:
                self._preset(state, data)
            if on and _feature(state, 1) and not attrs.get("percentage"):
                attrs["percentage"] = extra.get("last_percentage", 100)
            if not on and _feature(state, 1):
                if attrs.get("percentage"):
                    extra["last_percentage"] = attrs["percentage"]
                attrs["percentage"] = 0
            state["state"] = "on" if on else "off"
        elif service == "set_percentage":
            _need(state, 1, service)
            attrs["percentage"] = int(_number(data, "percentage", 0, 100))
            attrs["preset_mode"] = None  # a speed set ends the preset (demo/fan.py)
            state["state"] = "on" if attrs["percentage"] else "off"
        elif service in ("increase_speed", "decrease_speed"):
            _need(state, 1, service)
            step = data.get("percentage_step", attrs.get("percentage_step", 25))
            sign = 1 if service == "increase_speed" else -1
            attrs["percentage"] = max(0, min(100, int(attrs.get("percentage") or 0) + sign * step))
            attrs["preset_mode"] = None
            state["state"] = "on" if attrs["percentage"] else "off"
        elif service == "oscillate":
            _need(state, 2, service)
            if not isinstance(data.get("oscillating"), bool):
                raise ServiceError("required key not provided @ data['oscillating']")
            attrs["oscillating"] = data["oscillating"]
        elif service == "set_preset_mode":
            self._preset(state, data)
            state["state"] = "on"
        else:
            raise self._unknown(state, service)

    def _preset(self, state: dict[str, Any], data: dict[str, Any]) -> None:
        _need(state, 8, "set_preset_mode")
        if data.get("preset_mode") not in state["attributes"].get("preset_modes", []):
            raise ServiceError(f"Preset mode {data.get('preset_mode')} is not valid")
        state["attributes"]["preset_mode"] = data["preset_mode"]

    def _climate(self, state: dict[str, Any], service: str, data: dict[str, Any]) -> None:
        attrs = state["attributes"]
        if service == "set_temperature":
            if "hvac_mode" in data:
                self._climate(state, "set_hvac_mode", {"hvac_mode": data["hvac_mode"]})
            low, high = attrs.get("min_temp", 7), attrs.get("max_temp", 35)
            value = data.get("temperature")
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ServiceError("expected float for dictionary value @ data['temperature']")
            if not low <= value <= high:
                raise ServiceError(
                    f"Provided temperature {value} is not valid. Accepted range is {low} to {high}"
                )
            attrs["temperature"] = value
        elif service == "set_hvac_mode":
            if data.get("hvac_mode") not in attrs.get("hvac_modes", []):
                raise ServiceError(f"HVAC mode {data.get('hvac_mode')} is not valid")
            state["state"] = data["hvac_mode"]
        elif service == "turn_off":
            state["state"] = "off"
        elif service == "turn_on":
            modes = [m for m in attrs.get("hvac_modes", []) if m != "off"]
            state["state"] = self.extra[state["entity_id"]].get("last_mode", modes[0])
        else:
            raise self._unknown(state, service)
        if state["state"] != "off":
            self.extra[state["entity_id"]]["last_mode"] = state["state"]

    def _media_player(self, state: dict[str, Any], service: str, data: dict[str, Any]) -> None:
        attrs, extra = state["attributes"], self.extra[state["entity_id"]]
        playlist = extra.get("playlist", [])
        if service == "media_play":
            _need(state, 16384, service)
            state["state"] = "playing"
        elif service == "media_pause":
            _need(state, 1, service)
            state["state"] = "paused"
        elif service == "media_play_pause":
            state["state"] = "paused" if state["state"] == "playing" else "playing"
        elif service == "media_stop":
            _need(state, 4096, service)
            state["state"] = "idle"
        elif service in ("media_next_track", "media_previous_track"):
            _need(state, 32 if service == "media_next_track" else 16, service)
            if playlist:
                index = (
                    playlist.index(attrs.get("media_title", playlist[0]))
                    if attrs.get("media_title") in playlist
                    else 0
                )
                index = (index + (1 if service == "media_next_track" else -1)) % len(playlist)
                attrs["media_title"] = playlist[index]
        elif service == "volume_set":
            _need(state, 4, service)
            attrs["volume_level"] = round(float(_number(data, "volume_level", 0, 1)), 2)
        elif service in ("volume_up", "volume_down"):
            step = 0.1 if service == "volume_up" else -0.1
            attrs["volume_level"] = round(
                max(0.0, min(1.0, attrs.get("volume_level", 0.5) + step)), 2
            )
        elif service == "volume_mute":
            _need(state, 8, service)
            if not isinstance(data.get("is_volume_muted"), bool):
                raise ServiceError("required key not provided @ data['is_volume_muted']")
            attrs["is_volume_muted"] = data["is_volume_muted"]
        elif service in ("turn_on", "turn_off"):
            state["state"] = "idle" if service == "turn_on" else "off"
        else:
            raise self._unknown(state, service)

    def _vacuum(self, state: dict[str, Any], service: str, data: dict[str, Any]) -> None:
        bits = {"start": 8192, "stop": 8, "pause": 4, "return_to_base": 16}
        if service not in bits:
            raise self._unknown(state, service)
        _need(state, bits[service], service)
        state["state"] = {
            "start": "cleaning",
            "stop": "idle",
            "pause": "paused",
            "return_to_base": "returning",
        }[service]

    def _scene(self, state: dict[str, Any], service: str, data: dict[str, Any]) -> None:
        if service != "turn_on":
            raise self._unknown(state, service)
        state["state"] = NOW.replace("2026-01-01", "2026-01-02")
        for eid, target in self.extra[state["entity_id"]].get("entities", {}).items():
            self.states[eid]["state"] = target["state"]
            self.states[eid]["attributes"].update(target.get("attributes", {}))

    def _script(self, state: dict[str, Any], service: str, data: dict[str, Any]) -> None:
        if service not in ("turn_on", "toggle"):
            raise self._unknown(state, service)
        state["attributes"]["last_triggered"] = NOW.replace("2026-01-01", "2026-01-02")
        for step in self.extra[state["entity_id"]].get("sequence", []):
            domain, _, name = step["action"].partition(".")
            self.call(domain, name, {**step.get("data", {}), "entity_id": step["entity_id"]})

    def _todo(self, state: dict[str, Any], service: str, data: dict[str, Any]) -> Any:
        items: list[dict[str, Any]] = self.extra[state["entity_id"]].setdefault("items", [])

        def find(key: str) -> dict[str, Any]:
            for item in items:
                if key in (item["uid"], item["summary"]):
                    return item
            raise ServiceError(f"Unable to find To-do item: {key}")

        if service == "get_items":
            wanted = data.get("status", ["needs_action"])
            wanted = [wanted] if isinstance(wanted, str) else wanted
            return {"items": [dict(i) for i in items if i["status"] in wanted]}
        if "item" not in data and service != "remove_completed_items":
            raise ServiceError("required key not provided @ data['item']")
        if service == "add_item":
            _need(state, 1, service)
            uid = str(max([int(i["uid"]) for i in items] + [0]) + 1)
            items.append({"summary": str(data["item"]), "uid": uid, "status": "needs_action"})
        elif service == "remove_item":
            _need(state, 2, service)
            keys = data["item"] if isinstance(data["item"], list) else [data["item"]]
            for key in keys:
                items.remove(find(key))
        elif service == "update_item":
            _need(state, 4, service)
            item = find(data["item"])
            if data.get("status") not in (None, "needs_action", "completed"):
                raise ServiceError("value must be one of ['completed', 'needs_action']")
            item["summary"] = data.get("rename", item["summary"])
            item["status"] = data.get("status", item["status"])
        elif service == "remove_completed_items":
            items[:] = [i for i in items if i["status"] != "completed"]
        else:
            raise self._unknown(state, service)
        state["state"] = str(sum(i["status"] == "needs_action" for i in items))
        return None

    def todo_items(self, entity_id: str) -> list[dict[str, Any]]:
        return self.extra[entity_id].get("items", [])

    # HTTP ------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> StandIn:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                standin._answer(self, "GET")

            def do_POST(self) -> None:
                standin._answer(self, "POST")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.shutdown()
        self.server.server_close()

    def _answer(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        status, reply = self._route(handler, method, body)
        text = reply if isinstance(reply, str) else json.dumps(reply)
        data = text.encode()
        handler.send_response(status)
        handler.send_header(
            "Content-Type", "text/plain" if isinstance(reply, str) else "application/json"
        )
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _route(self, handler: BaseHTTPRequestHandler, method: str, body: bytes) -> tuple[int, Any]:
        if handler.headers.get("Authorization") != f"Bearer {self.token}":
            return 401, "401: Unauthorized"
        split = urlsplit(handler.path)
        parts = split.path.split("/")
        with self.lock:
            if split.path == "/api/":
                return 200, {"message": "API running."}
            if split.path == "/api/config" and "config" in self.home:
                return 200, self.home["config"]  # the instance's settings, as given
            if split.path == "/api/states":
                return (
                    (200, list(self.states.values()))
                    if method == "GET"
                    else (405, "405: Method Not Allowed")
                )
            if split.path.startswith("/api/states/") and len(parts) == 4:
                if method != "GET":
                    return 405, "405: Method Not Allowed"
                state = self.states.get(parts[3])
                return (200, state) if state else (404, {"message": "Entity not found."})
            if method != "POST" and split.path.startswith(("/api/services/", "/api/template")):
                return 405, "405: Method Not Allowed"
            try:
                data = json.loads(body) if body else {}
            except ValueError:
                return 400, {"message": "Data should be valid JSON."}
            if not isinstance(data, dict):
                return 400, {"message": "Data should be a JSON object."}
            try:
                if split.path == "/api/template":
                    return 200, self.render(str(data.get("template", "")))
                if split.path.startswith("/api/services/") and len(parts) == 5:
                    wants = "return_response" in parse_qs(split.query, keep_blank_values=True)
                    return 200, self.call(parts[3], parts[4], data, wants)
            except ServiceError as exc:
                return 400, {"message": str(exc)}
        return 404, "404: Not Found"
