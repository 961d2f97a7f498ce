"""Writes tests/data/homes/<home>.json (HA fixture style) and <home>.requests.jsonl.

Deterministic: `python -m tests.ha_home.make_homes`. Names, rooms and phrasings are this
project's own invention. Request format: tests/data/homes/README.md.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "data" / "homes"

# kind -> (domain, name suffix, aliases, state, attributes, standin)
KINDS: dict[str, tuple[str, str, list[str], str, dict[str, Any]]] = {
    "ceiling": (
        "light",
        "ceiling light",
        ["big light"],
        "off",
        {"supported_color_modes": ["brightness"], "color_mode": None, "brightness": None},
    ),
    "lamp": (
        "light",
        "lamp",
        [],
        "off",
        {
            "supported_color_modes": ["color_temp", "rgb"],
            "min_color_temp_kelvin": 2000,
            "max_color_temp_kelvin": 6500,
            "brightness": None,
            "color_mode": None,
        },
    ),
    "strip": ("light", "led strip", [], "off", {"supported_color_modes": ["onoff"]}),
    "plug": ("switch", "heater plug", [], "off", {"device_class": "outlet"}),
    "blind": (
        "cover",
        "blinds",
        ["shades"],
        "open",
        {"device_class": "blind", "current_position": 100, "supported_features": 15},
    ),
    "curtain": (
        "cover",
        "curtains",
        [],
        "closed",
        {"device_class": "curtain", "current_position": 0, "supported_features": 15},
    ),
    "garage": (
        "cover",
        "garage door",
        [],
        "closed",
        {"device_class": "garage", "supported_features": 11},
    ),
    "lock": ("lock", "door lock", [], "locked", {"supported_features": 0}),
    "fan": (
        "fan",
        "fan",
        [],
        "off",
        {
            "percentage": 0,
            "percentage_step": 25,
            "oscillating": False,
            "preset_modes": ["auto", "sleep"],
            "preset_mode": None,
            "supported_features": 59,
        },
    ),
    "thermostat": (
        "climate",
        "thermostat",
        ["heating"],
        "heat",
        {
            "hvac_modes": ["off", "heat", "cool", "auto"],
            "current_temperature": 19.5,
            "temperature": 20,
            "min_temp": 7,
            "max_temp": 30,
            "target_temp_step": 0.5,
            "supported_features": 385,
        },
    ),
    "speaker": (
        "media_player",
        "speaker",
        [],
        "paused",
        {
            "volume_level": 0.4,
            "is_volume_muted": False,
            "media_title": "Harbour Lights",
            "media_artist": "The Low Tides",
            "device_class": "speaker",
            "supported_features": 21437 | 16384,
        },
    ),
    "vacuum": (
        "vacuum",
        "robot vacuum",
        ["hoover"],
        "docked",
        {"battery_level": 90, "supported_features": 8192 | 8 | 4 | 16},
    ),
    "valve": (
        "valve",
        "water valve",
        [],
        "closed",
        {"device_class": "water", "supported_features": 3},
    ),
    "humidity": (
        "sensor",
        "humidity",
        [],
        "48",
        {"device_class": "humidity", "unit_of_measurement": "%", "state_class": "measurement"},
    ),
    "contact": ("binary_sensor", "window", [], "off", {"device_class": "window"}),
    "todo": ("todo", "shopping list", ["groceries"], "2", {"supported_features": 7}),
}
PLAYLIST = ["Harbour Lights", "Paper Moon Parade", "Slow Kettle", "Northbound"]
HOMES: dict[str, list[tuple[str, list[str]]]] = {
    "flat_small": [
        ("Living Room", ["ceiling", "lamp", "blind", "thermostat", "speaker", "humidity"]),
        ("Kitchen", ["ceiling", "strip", "plug", "valve"]),
        ("Bedroom", ["lamp", "curtain", "fan", "contact"]),
        ("Hallway", ["lock", "vacuum", "todo"]),
    ],
}
MID_ROOMS = [
    "Living Room",
    "Kitchen",
    "Bedroom",
    "Office",
    "Bathroom",
    "Kids Room",
    "Hallway",
    "Garage",
    "Garden",
]
BIG_ROOMS = [
    *MID_ROOMS,
    "Dining Room",
    "Guest Room",
    "Laundry",
    "Attic",
    "Basement",
    "Porch",
    "Studio",
    "Nursery",
    "Pantry",
    "Gym",
    "Library",
]
ROOM_KINDS = {
    "Garage": ["ceiling", "garage", "plug", "lock", "contact"],
    "Garden": ["strip", "valve", "humidity", "plug"],
    "Hallway": ["ceiling", "lock", "vacuum", "todo", "contact"],
    "Kitchen": ["ceiling", "strip", "plug", "blind", "valve", "speaker", "todo"],
}
DEFAULT_KINDS = [
    "ceiling",
    "lamp",
    "blind",
    "curtain",
    "fan",
    "thermostat",
    "speaker",
    "humidity",
    "contact",
]


def slug(text: str) -> str:
    return text.lower().replace(" ", "_").replace("'", "")


def build(name: str, rooms: list[tuple[str, list[str]]]) -> dict[str, Any]:
    home: dict[str, Any] = {"name": name, "areas": [], "devices": [], "entities": []}
    todos = 0
    for room, kinds in rooms:
        area = slug(room)
        home["areas"].append({"area_id": area, "name": room, "aliases": []})
        for kind in kinds:
            domain, suffix, aliases, state, attrs = KINDS[kind]
            friendly = f"{room} {suffix}"
            if kind == "todo":
                todos += 1
                friendly = "Shopping List" if todos == 1 else f"{room} To-do"
            eid = f"{domain}.{slug(friendly).replace('-', '')}"
            device = f"dev_{slug(friendly)}"
            home["devices"].append(
                {
                    "id": device,
                    "name": friendly,
                    "area_id": area,
                    "manufacturer": "Acme",
                    "model": kind,
                }
            )
            entity: dict[str, Any] = {
                "entity_id": eid,
                "device_id": device,
                "area_id": None,
                "aliases": list(aliases),
                "options": {"conversation": {"should_expose": True}},
                "state": state,
                "attributes": {"friendly_name": friendly, **attrs},
            }
            if domain == "media_player":
                entity["standin"] = {"playlist": PLAYLIST}
            if domain == "todo":
                entity["standin"] = {
                    "items": [
                        {"summary": "bread", "uid": "1", "status": "needs_action"},
                        {"summary": "coffee beans", "uid": "2", "status": "needs_action"},
                    ]
                }
            home["entities"].append(entity)
    lights = [e["entity_id"] for e in home["entities"] if e["entity_id"].startswith("light.")]
    home["entities"].append(
        {
            "entity_id": "scene.movie_night",
            "area_id": rooms[0][0].lower().replace(" ", "_"),
            "aliases": [],
            "state": "unknown",
            "attributes": {"friendly_name": "Movie Night"},
            "standin": {
                "entities": {
                    lights[0]: {"state": "off", "attributes": {"brightness": None}},
                    lights[1]: {"state": "on", "attributes": {"brightness": 51}},
                }
            },
        }
    )
    home["entities"].append(
        {
            "entity_id": "script.good_night",
            "area_id": None,
            "aliases": [],
            "state": "off",
            "attributes": {"friendly_name": "Good Night", "last_triggered": None},
            "standin": {"sequence": [{"action": "light.turn_off", "entity_id": lights}]},
        }
    )
    return home


def spoken(entity: dict[str, Any]) -> str:
    return entity["attributes"]["friendly_name"].lower().replace("-", "")


def requests(home: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    areas = {a["area_id"]: a["name"].lower() for a in home["areas"]}
    dev_area = {d["id"]: d["area_id"] for d in home["devices"]}

    def add(
        cls: str,
        kind: str,
        text: str,
        expect: dict[str, Any] | None = None,
        setup: dict[str, Any] | None = None,
        reply: list[list[str]] | None = None,
        confirm: str | None = None,
    ) -> None:
        rows.append(
            {
                "id": f"{home['name']}-{len(rows) + 1:03d}",
                "class": cls,
                "kind": kind,
                "text": text,
                "setup": setup or {},
                "expect": expect or {},
                "reply_has": reply or [],
                "confirm": confirm,
            }
        )

    for e in home["entities"]:
        eid, n = e["entity_id"], spoken(e)
        dom = eid.split(".")[0]
        room = areas.get(dev_area.get(e.get("device_id"), ""), "")
        a = e["attributes"]
        if dom in ("light", "switch"):
            add(dom, "command", f"turn on the {n}", {eid: {"state": "on"}})
            add(
                dom,
                "command",
                f"um could you switch the {n} off",
                {eid: {"state": "off"}},
                {eid: {"state": "on"}},
            )
            add(dom, "negated", f"don't turn on the {n}", {}, None)
            add(dom, "question", f"is the {n} on", {}, {eid: {"state": "on"}}, [["on"]])
            if a.get("supported_color_modes", ["onoff"]) != ["onoff"] and dom == "light":
                add(
                    dom,
                    "command",
                    f"set the {n} to 40 percent",
                    {eid: {"state": "on", "attributes": {"brightness": 102}}},
                )
            if "rgb" in a.get("supported_color_modes", []):
                add(
                    dom,
                    "command",
                    f"make the {n} red",
                    {eid: {"state": "on", "attributes": {"rgb_color": [255, 0, 0]}}},
                )
        elif dom == "cover":
            pos = "current_position" in a
            opened = {"state": "open", **({"attributes": {"current_position": 100}} if pos else {})}
            closed = {"state": "closed", **({"attributes": {"current_position": 0}} if pos else {})}
            add("cover", "command", f"open the {n}", {eid: opened}, {eid: closed})
            add("cover", "command", f"can you close the {n} please", {eid: closed}, {eid: opened})
            add(
                "cover",
                "question",
                f"is the {n} open",
                {},
                {eid: closed},
                [["closed", "not open", "shut"]],
            )
            add("cover", "negated", f"leave the {n} alone don't open it", {}, {eid: closed})
            if a["supported_features"] & 4:
                add(
                    "cover",
                    "command",
                    f"set the {n} to 30 percent",
                    {eid: {"state": "open", "attributes": {"current_position": 30}}},
                )
        elif dom == "lock":
            add(
                "lock",
                "command",
                f"lock the {n}",
                {eid: {"state": "locked"}},
                {eid: {"state": "unlocked"}},
            )
            add("lock", "command", f"unlock the {n}", {eid: {"state": "unlocked"}}, confirm="yes")
            add("lock", "question", f"is the {n} locked", {}, None, [["locked"]])
            add("lock", "negated", f"don't unlock the {n}", {})
        elif dom == "fan":
            add("fan", "command", f"turn on the {room} fan", {eid: {"state": "on"}})
            add(
                "fan",
                "command",
                f"set the {n} to 50 percent",
                {eid: {"state": "on", "attributes": {"percentage": 50}}},
            )
            add(
                "fan",
                "command",
                f"make the {n} oscillate",
                {eid: {"attributes": {"oscillating": True}}},
                {eid: {"state": "on"}},
            )
            add(
                "fan",
                "command",
                f"the {n} off",
                {eid: {"state": "off"}},
                {eid: {"state": "on", "attributes": {"percentage": 75}}},
            )
        elif dom == "climate":
            add(
                "climate",
                "command",
                f"set the {n} to 21 degrees",
                {eid: {"attributes": {"temperature": 21}}},
            )
            add("climate", "command", f"switch the {n} to cool", {eid: {"state": "cool"}})
            add(
                "climate",
                "question",
                f"what's the temperature in the {room}",
                {},
                None,
                [["19.5", "19 point 5", "nineteen and a half"]],
            )
            add("climate", "question", f"what is the {n} set to", {}, None, [["20"]])
            add("climate", "command", f"turn the {n} off", {eid: {"state": "off"}})
        elif dom == "media_player":
            playing = {eid: {"state": "playing"}}
            add("media_player", "command", f"pause the {n}", {eid: {"state": "paused"}}, playing)
            add("media_player", "command", f"play music on the {n}", playing)
            add(
                "media_player",
                "command",
                f"skip this song on the {n}",
                {eid: {"attributes": {"media_title": PLAYLIST[1]}}},
                playing,
            )
            add(
                "media_player",
                "command",
                f"set the {n} volume to 30 percent",
                {eid: {"attributes": {"volume_level": 0.3}}},
            )
            add(
                "media_player",
                "command",
                f"mute the {n}",
                {eid: {"attributes": {"is_volume_muted": True}}},
            )
        elif dom == "vacuum":
            add("vacuum", "command", f"start the {n}", {eid: {"state": "cleaning"}})
            add(
                "vacuum",
                "command",
                f"send the {n} back to its dock",
                {eid: {"state": {"one_of": ["returning", "docked"]}}},
                {eid: {"state": "cleaning"}},
            )
            add(
                "vacuum",
                "command",
                f"stop the {n}",
                {eid: {"state": {"one_of": ["idle", "paused"]}}},
                {eid: {"state": "cleaning"}},
            )
        elif dom == "valve":
            add("valve", "command", f"open the {n}", {eid: {"state": "open"}})
            add(
                "valve",
                "command",
                f"shut off the {n}",
                {eid: {"state": "closed"}},
                {eid: {"state": "open"}},
            )
        elif dom == "sensor":
            add("sensor", "question", f"what's the humidity in the {room}", {}, None, [["48"]])
        elif dom == "binary_sensor":
            add(
                "binary_sensor",
                "question",
                f"is the {n} open",
                {},
                {eid: {"state": "on"}},
                [["open"]],
            )
            add("binary_sensor", "question", f"is the {n} closed", {}, None, [["closed", "shut"]])
        elif dom == "todo":
            add(
                "todo",
                "command",
                f"add oat milk to the {n}",
                {eid: {"items_include": ["oat milk"]}},
            )
            add("todo", "command", f"take bread off the {n}", {eid: {"items_exclude": ["bread"]}})
            add("todo", "question", f"what's on the {n}", {}, None, [["bread"], ["coffee beans"]])
        elif dom == "scene":
            targets = e["standin"]["entities"]
            add("scene", "command", f"activate {n}", dict(targets.items()))
        elif dom == "script":
            lights = e["standin"]["sequence"][0]["entity_id"]
            add(
                "script",
                "command",
                f"run the {n} script",
                {x: {"state": "off"} for x in lights},
                {x: {"state": "on"} for x in lights},
            )
    # area-wide, two in one breath, absent devices
    by_room: dict[str, list[str]] = {}
    for e in home["entities"]:
        room = areas.get(dev_area.get(e.get("device_id"), ""), "")
        by_room.setdefault(room, []).append(e["entity_id"])
    for room, ids in by_room.items():
        lights = [x for x in ids if x.startswith("light.")]
        if len(lights) >= 2:
            add(
                "light",
                "area",
                f"turn off all the lights in the {room}",
                {x: {"state": "off"} for x in lights},
                {x: {"state": "on"} for x in lights},
            )
        covers = [x for x in ids if x.startswith("cover.") and "garage" not in x]
        if covers:
            add(
                "cover",
                "area",
                f"close everything on the windows in the {room}",
                {x: {"state": "closed"} for x in covers},
            )
    lights = [e for e in home["entities"] if e["entity_id"].startswith("light.")]
    for _ in range(max(3, len(lights) // 2)):
        one, two = rng.sample(lights, 2)
        add(
            "light",
            "two",
            f"turn on the {spoken(one)} and turn off the {spoken(two)}",
            {one["entity_id"]: {"state": "on"}, two["entity_id"]: {"state": "off"}},
            {two["entity_id"]: {"state": "on"}},
        )
    for thing in [
        "open the skylight",
        "turn on the sauna",
        "lock the shed door",
        "start the lawn mower",
        "set the aquarium heater to 25 degrees",
        "close the attic hatch",
        "turn the pool pump on",
    ]:
        add("absent", "absent", thing, {})
    return rows


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    mid = [(r, ROOM_KINDS.get(r, DEFAULT_KINDS[:6])) for r in MID_ROOMS]
    big = [(r, ROOM_KINDS.get(r, DEFAULT_KINDS)) for r in BIG_ROOMS]
    for name, rooms in [
        ("flat_small", HOMES["flat_small"]),
        ("house_mid", mid),
        ("villa_big", big),
    ]:
        home = build(name, rooms)
        (OUT / f"{name}.json").write_text(json.dumps(home, indent=1) + "\n")
        rows = requests(home, random.Random(name))
        (OUT / f"{name}.requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        print(name, len(home["entities"]), "entities", len(rows), "requests")


if __name__ == "__main__":
    main()
