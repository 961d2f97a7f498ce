"""`mavend home import` against the stateful Home Assistant stand-in (tests/ha_home/standin.py)
serving the benchmark homes and homes made here: the table, what is skipped, names made
unique, refusals and faults in one sentence with nothing written, and a 5,000-entity home."""

from __future__ import annotations

import contextlib
import json
import threading
import time
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mavend.cli import main
from mavend.config import load_settings, parse_settings
from tests.ha_home.standin import StandIn
from tests.home_kit import free_port

HOMES = Path(__file__).parent / "data" / "homes"


def write_config(folder: Path, url: str, token: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "token").write_text(token + "\n")
    config = folder / "config.toml"
    config.write_text(
        f'[homeassistant]\nurl = "{url}"\ntoken_file = "{folder / "token"}"\ntimeout_s = 5.0\n'
        f'[storage]\ndata_dir = "{folder / "data"}"\n'
    )
    return config


def run_import(
    capsys: pytest.CaptureFixture[str], config: Path, *extra: str
) -> tuple[int, str, str]:
    code = main(["--config", str(config), "home", "import", *extra])
    out, err = capsys.readouterr()
    return code, out, err


def devices_of(table: str) -> dict[str, dict[str, Any]]:
    return {d["homeassistant"]: d for d in tomllib.loads(table).get("devices", [])}


def entity(entity_id: str, name: str, area: str | None, **attributes: Any) -> dict[str, Any]:
    return {
        "entity_id": entity_id,
        "device_id": None,
        "area_id": area,
        "aliases": [],
        "options": {"conversation": {"should_expose": True}},
        "state": "off",
        "attributes": {"friendly_name": name, **attributes},
    }


def exposed(fixture_entity: dict[str, Any]) -> bool:
    return bool(fixture_entity.get("options", {}).get("conversation", {}).get("should_expose"))


def home_of(entities: list[dict[str, Any]], areas: dict[str, str]) -> dict[str, Any]:
    return {
        "name": "made_here",
        "areas": [{"area_id": a, "name": n, "aliases": []} for a, n in areas.items()],
        "devices": [],
        "entities": entities,
    }


@pytest.mark.parametrize("home", ["flat_small", "house_mid", "villa_big"])
def test_a_home_imports_its_devices_as_a_valid_table(
    home: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = json.loads((HOMES / f"{home}.json").read_text())
    with StandIn.load(HOMES / f"{home}.json") as standin:
        config = write_config(tmp_path, standin.url, standin.token)
        code, out, err = run_import(capsys, config, "--dry-run")
        before = json.dumps(standin.states, sort_keys=True)
        assert standin.calls == [] and json.dumps(standin.states, sort_keys=True) == before
    assert code == 0, err
    devices = devices_of(out)
    # Every entity: each domain is a class (the sensors are humidity, the binary sensors
    # windows: kinds people ask about).
    wanted = {e["entity_id"] for e in fixture["entities"]}
    assert set(devices) == wanted
    assert "cannot control yet" not in err
    assert "Exposure to Assist is not visible through the REST API" in err
    # The printed table is a valid mavend config once it sits beside [homeassistant].
    settings = parse_settings(config.read_text() + out)
    assert len(settings.devices) == len(wanted)
    assert {d.homeassistant for d in settings.devices} == wanted
    assert {"device_on", "device_off", "lights_off"} <= {a.name for a in settings.acts.allow}
    assert not list(tmp_path.glob("*.toml.tmp")) and sorted(p.name for p in tmp_path.iterdir()) == [
        "config.toml",
        "token",
    ]


def test_flat_small_table_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with StandIn.load(HOMES / "flat_small.json") as standin:
        config = write_config(tmp_path, standin.url, standin.token)
        code, out, err = run_import(capsys, config, "--dry-run")
    assert code == 0
    devices = devices_of(out)
    assert devices["light.living_room_ceiling_light"] == {
        "name": "living room ceiling light",
        "aliases": ["ceiling light"],
        "room": "living room",
        "type": "light",
        "dimmable": True,  # supported_color_modes: ["brightness"]
        "homeassistant": "light.living_room_ceiling_light",
    }
    assert devices["light.kitchen_led_strip"]["dimmable"] is False  # ["onoff"]
    assert devices["light.living_room_lamp"]["dimmable"] is True  # color_temp, rgb
    assert devices["switch.kitchen_heater_plug"]["type"] == "plug"  # device_class outlet
    assert devices["light.living_room_lamp"]["colour"] is True  # rgb
    assert "colour" not in devices["light.living_room_ceiling_light"]
    # What each can do, from supported_features: a garage door has no position (11).
    assert devices["cover.living_room_blinds"]["device_class"] == "blind"
    blinds = ["open", "close", "set", "stop", "state"]
    assert devices["cover.living_room_blinds"]["supports"] == blinds
    fan = ["on", "off", "set", "preset", "up", "down", "oscillate", "state"]
    assert devices["fan.bedroom_fan"]["supports"] == fan
    assert devices["fan.bedroom_fan"]["presets"] == ["auto", "sleep"]
    vacuum = ["start", "stop", "pause", "dock", "state"]
    assert devices["vacuum.hallway_robot_vacuum"]["supports"] == vacuum
    assert devices["sensor.living_room_humidity"]["device_class"] == "humidity"
    assert devices["todo.shopping_list"]["supports"] == ["add", "remove", "tick", "untick", "read"]
    assert err.splitlines()[0] == "19 devices from 19 Home Assistant entities."


def test_output_writes_a_new_file_that_loads_and_never_the_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with StandIn.load(HOMES / "house_mid.json") as standin:
        config = write_config(tmp_path, standin.url, standin.token)
        original = config.read_text()
        code, out, err = run_import(capsys, config)  # neither flag: nothing written
        assert (code, out) == (0, "") and "Nothing was written" in err
        written = tmp_path / "devices.toml"
        code, out, err = run_import(capsys, config, "--output", str(written))
        assert code == 0 and f"Wrote 53 devices to {written}" in err
        again = run_import(capsys, config, "--output", str(written))
        assert again[0] == 2 and "exists" in again[2]
        assert run_import(capsys, config, "--output", str(written), "--force")[0] == 0
    assert config.read_text() == original
    merged = tmp_path / "merged.toml"
    merged.write_text(original + written.read_text())
    settings = load_settings(merged)
    assert len(settings.devices) == 53
    assert settings.devices[0].homeassistant.startswith("binary_sensor.")


def test_shared_and_unsayable_names_are_made_unique(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    areas = {"bedroom": "Bedroom", "study": "Study", "garage": "Garage", "kuche": "Küche"}
    home = home_of(
        [
            entity("light.lamp_1", "Lamp", "bedroom", supported_color_modes=["brightness"]),
            entity("light.lamp_2", "Lamp", "study", supported_color_modes=["onoff"]),
            entity("light.lamp_3", "Lamp", "study"),
            entity("light.garage", "Garage", "garage"),
            entity("light.decke", "Décke & Wand", "kuche", supported_features=1),
            entity("light.ceiling_lamp", "灯", None),
            entity("switch.wifi_plug", "'Wi-Fi' plug", "study", device_class="outlet"),
            entity("switch.x", "A" * 30 + " " + "B" * 30, None),
            entity("light.unnamed", "", None),
            entity("cover.a", "Blind", "study"),
            entity("lock.b", "Door", None),
            entity("lock.c", "Back door", None),
            entity("camera.d", "Porch cam", None),
            entity("camera.e", "Yard cam", None),
            entity("todo.f", "Chores", None),
        ],
        areas,
    )
    with StandIn(home) as standin:
        config = write_config(tmp_path, standin.url, standin.token)
        code, out, err = run_import(capsys, config, "--dry-run")
    assert code == 0, err
    devices = devices_of(out)
    names = {eid: d["name"] for eid, d in devices.items()}
    assert names == {
        "light.lamp_1": "bedroom lamp",
        "light.lamp_2": "study lamp",
        "light.lamp_3": "lamp 3",  # the same name in the same room: its entity id's words
        "light.garage": "garage light",  # a room's name cannot be a device's
        "light.decke": "decke and wand",
        "light.ceiling_lamp": "ceiling lamp",  # nothing sayable: the entity id's words
        "switch.wifi_plug": "wi fi plug",
        "switch.x": "a" * 30,
        "light.unnamed": "unnamed",
        "cover.a": "blind",
        "lock.b": "door",
        "lock.c": "back door",
        "todo.f": "chores",
    }
    assert devices["light.lamp_1"]["aliases"] == ["lamp"]
    assert "wifi plug" in devices["switch.wifi_plug"]["aliases"]
    assert devices["switch.wifi_plug"]["type"] == "plug"
    assert devices["light.decke"]["room"] == "kuche" and devices["light.decke"]["dimmable"] is True
    assert "room" not in devices["light.ceiling_lamp"]
    assert "2 entities of types mavend cannot control yet: 2 camera." in err
    assert "4 names were shared or clashed with a room and were made unique" in err
    settings = parse_settings(config.read_text() + out)
    assert len({d.name for d in settings.devices}) == len(devices) == 13


def test_exposed_only_keeps_what_the_exported_list_exposes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = json.loads((HOMES / "flat_small.json").read_text())
    fixture["entities"][0]["options"]["conversation"]["should_expose"] = False
    exported = {
        "id": 3,
        "type": "result",
        "success": True,
        "result": {
            "exposed_entities": {
                e["entity_id"]: {"conversation": exposed(e)} for e in fixture["entities"]
            }
        },
    }
    (tmp_path / "exposed.json").write_text(json.dumps(exported))
    hidden = fixture["entities"][0]["entity_id"]
    with StandIn(fixture) as standin:
        config = write_config(tmp_path, standin.url, standin.token)
        code, out, err = run_import(
            capsys, config, "--dry-run", "--exposed", str(tmp_path / "exposed.json")
        )
        assert code == 0 and hidden.startswith("light.") and hidden not in devices_of(out)
        assert (
            # The light hidden here, and the fixture's scene and script (never exposed).
            len(devices_of(out)) == 16 and "3 entities not exposed to Assist were left out." in err
        )
        (tmp_path / "bad.json").write_text("[1, 2]")
        code, out, err = run_import(
            capsys, config, "--dry-run", "--exposed", str(tmp_path / "bad.json")
        )
        assert code == 3 and out == "" and "homeassistant/expose_entity/list" in err


def test_no_areas_imports_without_rooms(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with StandIn.load(HOMES / "flat_small.json") as standin:
        config = write_config(tmp_path, standin.url, standin.token)
        code, out, _ = run_import(capsys, config, "--dry-run", "--no-areas")
    devices = devices_of(out)
    assert code == 0 and all("room" not in d for d in devices.values())
    parse_settings(config.read_text() + out)


def test_a_refused_token_is_one_sentence_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with StandIn.load(HOMES / "flat_small.json") as standin:
        config = write_config(tmp_path, standin.url, "expired")
        code, out, err = run_import(capsys, config, "--output", str(tmp_path / "devices.toml"))
    assert code == 1 and out == ""
    assert err.strip() == (
        f"mavend: Home Assistant at {standin.url} refused the token in {tmp_path / 'token'} "
        "(401); it may have expired: put a new long-lived access token there. "
        "Nothing was written."
    )
    assert not (tmp_path / "devices.toml").exists()


@contextlib.contextmanager
def broken_home_assistant(status: int, delay_s: float = 0.0) -> Iterator[str]:
    """A server that answers every request with `status` after `delay_s`."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            time.sleep(delay_s)
            body = b"500: Internal Server Error"
            with contextlib.suppress(OSError):
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_server_error_a_timeout_and_no_server_are_one_sentence_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "devices.toml"
    with broken_home_assistant(500) as url:
        config = write_config(tmp_path / "a", url, "t")
        code, out, err = run_import(capsys, config, "--output", str(output))
    assert code == 1 and out == ""
    assert err.strip() == (
        f"mavend: Home Assistant at {url} answered 500 to GET /api/states "
        "(500: Internal Server Error); nothing was written."
    )
    with broken_home_assistant(200, delay_s=2.0) as url:
        config = write_config(tmp_path / "b", url, "t")
        code, out, err = run_import(capsys, config, "--output", str(output), "--timeout", "0.3")
    assert code == 1 and err.strip() == (
        f"mavend: Home Assistant at {url} did not answer GET /api/states within 0.3 s "
        "(--timeout to wait longer); nothing was written."
    )
    url = f"http://127.0.0.1:{free_port()}"
    code, out, err = run_import(capsys, write_config(tmp_path / "c", url, "t"), "--dry-run")
    assert code == 1 and err.startswith(f"mavend: I couldn't reach Home Assistant at {url} (")
    assert len(err.strip().splitlines()) == 1 and not output.exists()
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "config.toml").write_text("")
    code, _, err = run_import(capsys, tmp_path / "d" / "config.toml", "--dry-run")
    assert code == 3 and "set [homeassistant] url and token_file" in err


def test_five_thousand_entities_import_fast_and_sane(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rooms = [f"Room {n}" for n in range(50)]
    domains = ["light", "light", "switch", "cover", "sensor", "binary_sensor", "lock", "fan"]
    entities = []
    for n in range(5000):
        domain = domains[n % len(domains)]
        # Names repeat: every room has its "Ceiling light 3" and "Sensor 3".
        name = f"{'Ceiling light' if domain == 'light' else domain.title()} {n // 400}"
        entities.append(
            entity(
                f"{domain}.e{n}",
                name,
                f"room_{n % 50}",
                supported_color_modes=["brightness"] if n % 3 else ["onoff"],
            )
        )
    home = home_of(entities, {f"room_{n}": rooms[n] for n in range(50)})
    with StandIn(home) as standin:
        config = write_config(tmp_path, standin.url, standin.token)
        started = time.monotonic()
        code, out, err = run_import(capsys, config, "--dry-run")
        seconds = time.monotonic() - started
    assert code == 0, err
    assert seconds < 20, f"{seconds:.1f} s for 5,000 entities"
    devices = devices_of(out)
    assert len(devices) == 5000 * 6 // 8  # sensors with no device_class are left out
    assert len({d["name"] for d in devices.values()}) == len(devices)
    assert all(len(d["name"]) <= 48 and d["room"].startswith("room ") for d in devices.values())
    lines = err.splitlines()
    assert lines[0] == "3750 devices from 5000 Home Assistant entities."
    assert lines[1] == (
        "1250 entities of types mavend cannot control yet: 625 binary_sensor (no device "
        "class), 625 sensor (no device class)."
    )
    assert len(err) < 2000  # a summary, not a listing
    settings = parse_settings(config.read_text() + out)
    assert len(settings.devices) == 3750


@pytest.mark.parametrize(("friendly", "said"), [
    ("Garage garage door", "garage door"),  # the area put before a name that holds it
    ("Kitchen Ceiling-Light #2", "kitchen ceiling light 2"),
    ("Café lamp", "cafe lamp"),
])
def test_a_friendly_name_is_said_once(friendly: str, said: str) -> None:
    """The reply said "The garage garage door is closed."."""
    from mavend.home.importer import spoken_name

    assert spoken_name(friendly) == said
