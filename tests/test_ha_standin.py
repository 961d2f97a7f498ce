"""The Home Assistant stand-in (tests/ha_home/standin.py) behaves as HA documents."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.ha_home.standin import StandIn

HOME = Path(__file__).parent / "data" / "homes" / "flat_small.json"


def post(s: StandIn, path: str, body: dict[str, Any], token: str | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(
        s.url + path,
        json.dumps(body).encode(),
        {"Authorization": f"Bearer {token or s.token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            raw = r.read().decode()
            return r.status, json.loads(raw) if raw.startswith(("[", "{")) else raw
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_services_change_state_and_errors_are_400_or_401() -> None:
    with StandIn.load(HOME) as s:
        code, changed = post(
            s,
            "/api/services/cover/set_cover_position",
            {"entity_id": "cover.living_room_blinds", "position": 30},
        )
        assert code == 200 and changed[0]["attributes"]["current_position"] == 30
        assert (
            post(
                s,
                "/api/services/cover/set_cover_position",
                {"entity_id": "cover.living_room_blinds", "position": 140},
            )[0]
            == 400
        )
        assert s.states["cover.living_room_blinds"]["attributes"]["current_position"] == 30
        assert post(s, "/api/services/light/turn_on", {"entity_id": "light.nope"})[0] == 400
        assert (
            post(s, "/api/services/light/fly", {"entity_id": "light.kitchen_led_strip"})[0] == 400
        )
        assert post(s, "/api/services/light/turn_on", {"entity_id": "x"}, token="bad")[0] == 401
        post(
            s,
            "/api/services/light/turn_on",
            {"entity_id": "light.living_room_lamp", "brightness_pct": 40},
        )
        assert s.states["light.living_room_lamp"]["attributes"]["brightness"] == 102
        post(
            s,
            "/api/services/light/turn_on",
            {"entity_id": "light.living_room_lamp", "brightness_step_pct": -20},
        )  # 102 - 51 (20 % of 255), as Home Assistant steps it
        assert s.states["light.living_room_lamp"]["attributes"]["brightness"] == 51
        s.faults["lock.hallway_door_lock"] = {"jams": True}
        post(s, "/api/services/lock/unlock", {"entity_id": "lock.hallway_door_lock"})
        assert s.states["lock.hallway_door_lock"]["state"] == "jammed"
        post(s, "/api/services/todo/add_item", {"entity_id": "todo.shopping_list", "item": "tea"})
        code, got = post(
            s, "/api/services/todo/get_items?return_response", {"entity_id": "todo.shopping_list"}
        )
        summaries = [i["summary"] for i in got["service_response"]["todo.shopping_list"]["items"]]
        assert summaries == ["bread", "coffee beans", "tea"]
        code, text = post(
            s, "/api/template", {"template": "{{ area_name('light.kitchen_ceiling_light') }}"}
        )
        assert (code, text) == (200, "Kitchen")
