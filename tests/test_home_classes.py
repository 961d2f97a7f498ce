"""Every device class of mavend/home/classes.py by text, judged by the end state of the
Home Assistant stand-in (tests/ha_home/standin.py: services applied as Home Assistant's
documentation says) and the facts in the reply. The home and its [[devices]] table are
written here by hand, as an owner would, not imported; the phrasings are this file's own.

Faults: a service Home Assistant refuses (400), an entity it does not have, a cover
that stops half-way, a lock that jams, a position of 140 %, and an unlock that is only
done after a spoken yes from the session that asked."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from mavend.config import Settings, parse_settings
from mavend.handlers import Outcome
from tests.ha_home.standin import StandIn
from tests.state_kit import make_assistant

PLAYER_ALL = 1 | 4 | 8 | 16 | 32 | 128 | 256 | 4096 | 16384


def entity(eid: str, name: str, state: str, **attributes: Any) -> dict[str, Any]:
    return {
        "entity_id": eid,
        "device_id": None,
        "area_id": None,
        "state": state,
        "attributes": {"friendly_name": name, **attributes},
    }


HOME = {
    "name": "cottage",
    "areas": [],
    "devices": [],
    "entities": [
        entity("cover.study_shutters", "Study shutters", "open", device_class="shutter",
               current_position=100, supported_features=15),
        entity("cover.driveway_gate", "Driveway gate", "closed", device_class="gate",
               supported_features=3),
        entity("cover.den_curtains", "Den curtains", "open", device_class="curtain",
               current_position=100, supported_features=15),
        entity("lock.side_door", "Side door", "locked", supported_features=0),
        entity("fan.loft_fan", "Loft fan", "off", percentage=0, percentage_step=25,
               oscillating=False, preset_modes=["Auto", "Sleep"], preset_mode=None,
               supported_features=59),
        entity("fan.study_fan", "Study fan", "off", percentage=0, supported_features=49),
        entity("climate.loft_heat_pump", "Loft heat pump", "heat",
               hvac_modes=["off", "heat", "cool"], temperature=19, current_temperature=17.5,
               min_temp=7, max_temp=30, supported_features=385),
        entity("media_player.den_tv", "Den TV", "playing", volume_level=0.2,
               is_volume_muted=False, media_title="Evening News", supported_features=PLAYER_ALL),
        entity("vacuum.upstairs_robot", "Upstairs robot", "docked",
               supported_features=8192 | 8 | 4 | 16),
        entity("valve.garden_tap", "Garden tap", "closed", device_class="water",
               supported_features=3),
        entity("sensor.loft_temperature", "Loft temperature", "16.4",
               device_class="temperature", unit_of_measurement="°C"),
        entity("sensor.den_humidity", "Den humidity", "55", device_class="humidity",
               unit_of_measurement="%"),
        entity("binary_sensor.back_window", "Back window", "on", device_class="window"),
        entity("light.den_lamp", "Den lamp", "off", supported_color_modes=["color_temp", "rgb"],
               brightness=None, color_mode=None),
        {**entity("todo.chores", "Chores", "2", supported_features=7),
         "standin": {"items": [{"summary": "water the ferns", "uid": "1", "status": "needs_action"},
                               {"summary": "Descale kettle", "uid": "2",
                                "status": "needs_action"}]}},
        {**entity("scene.reading_time", "Reading time", "2026-01-01T00:00:00+00:00"),
         "standin": {"entities": {"light.den_lamp": {"state": "on",
                                                     "attributes": {"brightness": 120}}}}},
    ],
}  # fmt: skip

TABLE = """
[[devices]]
name = "study shutters"
room = "study"
type = "cover"
device_class = "shutter"
homeassistant = "cover.study_shutters"

[[devices]]
name = "driveway gate"
type = "cover"
device_class = "gate"
supports = ["open", "close", "state"]
homeassistant = "cover.driveway_gate"

[[devices]]
name = "den curtains"
room = "den"
type = "cover"
device_class = "curtain"
supports = ["open", "close", "set", "stop", "state"]
homeassistant = "cover.den_curtains"

[[devices]]
name = "side door"
type = "lock"
homeassistant = "lock.side_door"

[[devices]]
name = "loft fan"
room = "loft"
type = "fan"
supports = ["on", "off", "set", "oscillate", "preset", "state"]
presets = ["Auto", "Sleep"]
homeassistant = "fan.loft_fan"

[[devices]]
name = "study fan"
room = "study"
type = "fan"
homeassistant = "fan.study_fan"

[[devices]]
name = "heat pump"
room = "loft"
type = "climate"
homeassistant = "climate.loft_heat_pump"

[[devices]]
name = "den tv"
aliases = ["telly"]
room = "den"
type = "media_player"
homeassistant = "media_player.den_tv"

[[devices]]
name = "upstairs robot"
type = "vacuum"
homeassistant = "vacuum.upstairs_robot"

[[devices]]
name = "garden tap"
type = "valve"
homeassistant = "valve.garden_tap"

[[devices]]
name = "loft thermometer"
room = "loft"
type = "sensor"
device_class = "temperature"
homeassistant = "sensor.loft_temperature"

[[devices]]
name = "den hygrometer"
room = "den"
type = "sensor"
device_class = "humidity"
homeassistant = "sensor.den_humidity"

[[devices]]
name = "back window"
type = "binary_sensor"
device_class = "window"
homeassistant = "binary_sensor.back_window"

[[devices]]
name = "den lamp"
room = "den"
type = "light"
dimmable = true
colour = true
homeassistant = "light.den_lamp"

[[devices]]
name = "reading time"
type = "scene"
homeassistant = "scene.reading_time"

[[devices]]
name = "chores list"
aliases = ["jobs list"]
type = "todo"
homeassistant = "todo.chores"

[[devices]]
name = "old gate"
type = "cover"
homeassistant = "cover.old_gate"
"""


@pytest.fixture
def standin():
    with StandIn(copy.deepcopy(HOME)) as served:
        yield served


def settings_for(tmp_path: Path, standin: StandIn) -> Settings:
    token = tmp_path / "ha-token"
    token.write_text(standin.token + "\n")
    text = (
        f'[homeassistant]\nurl = "{standin.url}"\ntoken_file = "{token}"\ntimeout_s = 5.0\n'
        f'[storage]\ndata_dir = "{tmp_path / "data"}"\n' + TABLE
    )
    return parse_settings(text)


class Home:
    def __init__(self, settings: Settings, standin: StandIn):
        self.assistant = make_assistant(settings)
        self.standin = standin

    def say(self, text: str, session: str = "test"):
        return self.assistant.handle_text(text, session=session).reply

    def state(self, eid: str) -> str:
        return self.standin.states[eid]["state"]

    def attr(self, eid: str, name: str) -> Any:
        return self.standin.states[eid]["attributes"].get(name)


@pytest.fixture
def home(tmp_path: Path, standin: StandIn):
    house = Home(settings_for(tmp_path, standin), standin)
    yield house
    house.assistant.store.close()


def test_a_home_whose_devices_name_no_room_still_runs_them(
    tmp_path: Path, standin: StandIn
) -> None:
    # No {room} values: the grammar raised at every match and every request said
    # "Sorry, something went wrong." Judged by the state the stand-in is left in.
    token = tmp_path / "ha-token"
    token.write_text(standin.token + "\n")
    settings = parse_settings(
        f'[homeassistant]\nurl = "{standin.url}"\ntoken_file = "{token}"\n'
        f'[storage]\ndata_dir = "{tmp_path / "data"}"\n'
        '[[devices]]\nname = "driveway gate"\ntype = "cover"\n'
        'supports = ["open", "close", "state"]\nhomeassistant = "cover.driveway_gate"\n'
        '[[devices]]\nname = "side door"\ntype = "lock"\nhomeassistant = "lock.side_door"\n'
    )
    standin.states["lock.side_door"]["state"] = "unlocked"
    house = Home(settings, standin)
    try:
        assert house.say("open the driveway gate").text == "The driveway gate is open."
        assert house.say("lock the side door").text == "The side door is locked."
        assert (house.state("cover.driveway_gate"), house.state("lock.side_door")) == (
            "open", "locked")
    finally:
        house.assistant.store.close()


def test_covers_open_close_and_go_to_a_position(home: Home) -> None:
    reply = home.say("lower the study shutters to 40 percent")
    assert home.attr("cover.study_shutters", "current_position") == 40
    assert reply.text == "The study shutters are open at 40 percent."
    reply = home.say("shut the shutters in the study")
    assert home.state("cover.study_shutters") == "closed"
    assert reply.text == "The study shutters are closed."
    # A gate with no position (supports) is never sent a position.
    home.say("open the driveway gate")
    assert home.state("cover.driveway_gate") == "open"
    calls = len(home.standin.calls)
    reply = home.say("set the driveway gate to 50 percent")
    assert reply.outcome == Outcome.REFUSED and "can't be set to a percentage" in reply.text
    assert len(home.standin.calls) == calls


def test_a_cover_that_stops_half_way_is_said_as_it_is(home: Home) -> None:
    home.standin.faults["cover.den_curtains"] = {"stops_at": 50}
    reply = home.say("close the den curtains")
    assert home.attr("cover.den_curtains", "current_position") == 50
    assert reply.outcome == Outcome.FAILED
    assert reply.text == "I sent it, but the den curtains are open at 50 percent."


def test_a_lock_locks_and_unlocks_only_after_a_yes(home: Home) -> None:
    home.standin.states["lock.side_door"]["state"] = "unlocked"
    assert home.say("lock the side door").text == "The side door is locked."
    assert home.state("lock.side_door") == "locked"
    asked = home.say("unlock the side door")
    assert asked.outcome == Outcome.CONFIRM and home.state("lock.side_door") == "locked"
    assert asked.text.startswith("Do you want me to unlock the side door?")
    # Another room's "yes" does not open the door; the asking session's does.
    home.say("yes", session="satellite:garden")
    assert home.state("lock.side_door") == "locked"
    home.say("yes")
    assert home.state("lock.side_door") == "unlocked"


def test_a_jammed_lock_is_said_not_claimed(home: Home) -> None:
    home.standin.states["lock.side_door"]["state"] = "unlocked"
    home.standin.faults["lock.side_door"] = {"jams": True}
    reply = home.say("lock the side door")
    assert home.state("lock.side_door") == "jammed"
    assert reply.outcome == Outcome.FAILED
    assert reply.text == "I sent it, but the side door is jammed."


def test_a_fan_speed_oscillation_and_off(home: Home) -> None:
    reply = home.say("set the loft fan to 50 percent")
    assert home.state("fan.loft_fan") == "on" and home.attr("fan.loft_fan", "percentage") == 50
    assert reply.text == "The loft fan is on at 50 percent."
    home.say("make the loft fan oscillate")
    assert home.attr("fan.loft_fan", "oscillating") is True
    assert home.say("stop the loft fan").text == "The loft fan is off."
    assert home.state("fan.loft_fan") == "off"


def test_a_fan_by_its_kind_asks_which_unless_the_room_says(home: Home) -> None:
    asked = home.say("turn on the fan")
    assert asked.outcome == Outcome.ASKED
    assert asked.text == "Which fan: the one in the loft or the study?"
    assert home.state("fan.loft_fan") == home.state("fan.study_fan") == "off"
    home.say("turn on the study fan")
    assert (home.state("fan.study_fan"), home.state("fan.loft_fan")) == ("on", "off")


def test_a_thermostat_target_mode_and_reading(home: Home) -> None:
    reply = home.say("set the heat pump to 21 degrees")
    assert home.attr("climate.loft_heat_pump", "temperature") == 21
    assert reply.text == "The heat pump is on heat, set to 21 degrees and it's 17.5 degrees now."
    home.say("switch the heat pump to cool")
    assert home.state("climate.loft_heat_pump") == "cool"
    # The room's thermometer is read, not the weather and not a guess.
    warm = home.say("how warm is it in the loft")
    assert warm.text == "The temperature in the loft is 16.4 degrees."
    humid = home.say("what's the humidity in the den")
    assert humid.text == "The humidity in the den is 55 percent."
    # the room asked about directly ("how humid is the gym" was a question about notes)
    assert home.say("how humid is the den").text == humid.text
    assert home.say("how warm is the loft").text == warm.text


def test_home_assistant_refusing_a_temperature_changes_nothing(home: Home) -> None:
    reply = home.say("set the heat pump to 34 degrees")  # its max_temp is 30
    assert reply.outcome == Outcome.FAILED
    assert reply.text == (
        "Home Assistant refused the request (400), so nothing was done: Provided temperature "
        "34 is not valid. Accepted range is 7 to 30."
    )
    assert home.attr("climate.loft_heat_pump", "temperature") == 19


def test_a_position_of_140_percent_is_never_sent(home: Home) -> None:
    reply = home.say("set the study shutters to 140 percent")
    assert home.standin.calls == []
    assert home.attr("cover.study_shutters", "current_position") == 100
    assert reply.outcome in (Outcome.ASKED, Outcome.REFUSED), reply


def test_a_media_player_pause_volume_and_mute(home: Home) -> None:
    assert home.say("pause the den tv").text.startswith("The den tv is paused")
    assert home.state("media_player.den_tv") == "paused"
    home.say("set the volume on the telly to 30 percent")
    assert home.attr("media_player.den_tv", "volume_level") == 0.3
    reply = home.say("mute the den tv")
    assert home.attr("media_player.den_tv", "is_volume_muted") is True
    assert reply.text.endswith(", muted.")


def test_a_vacuum_starts_and_goes_home(home: Home) -> None:
    assert home.say("start the upstairs robot").text == "The upstairs robot is cleaning."
    assert home.state("vacuum.upstairs_robot") == "cleaning"
    home.say("send the upstairs robot back to its dock")
    assert home.state("vacuum.upstairs_robot") == "returning"


def test_a_valve_turned_on_opens_and_shut_off_closes(home: Home) -> None:
    assert home.say("turn on the garden tap").text == "The garden tap is open."
    assert home.state("valve.garden_tap") == "open"
    home.say("shut off the garden tap")
    assert home.state("valve.garden_tap") == "closed"


def test_a_window_sensor_is_read(home: Home) -> None:
    assert home.say("is the back window closed").text == "The back window is open."


def test_a_scene_and_a_colour(home: Home) -> None:
    home.say("activate reading time")
    assert home.state("light.den_lamp") == "on"
    reply = home.say("make the den lamp red")
    assert home.attr("light.den_lamp", "rgb_color") == [255, 0, 0]
    assert reply.text == "The den lamp is red now."  # it said "on, at 100 percent"
    assert home.say("make it warm white").text == "The den lamp is warm white now."
    assert home.attr("light.den_lamp", "color_temp_kelvin") < 3500


def test_everything_in_a_room_is_only_what_can_do_it(home: Home) -> None:
    home.standin.states["light.den_lamp"]["state"] = "on"
    reply = home.say("turn off everything in the den")
    # The lamp and the TV go off; the curtains (nothing to switch off) stay open.
    assert home.state("light.den_lamp") == "off"
    assert home.state("media_player.den_tv") == "off"
    assert home.state("cover.den_curtains") == "open"
    assert reply.text == "The den tv and the den lamp are off."  # in the table's order


def test_every_one_of_a_kind_is_acted_on_and_counted(home: Home) -> None:
    for fan in ("fan.loft_fan", "fan.study_fan"):
        home.standin.states[fan]["state"] = "on"
    reply = home.say("turn off all the fans")
    assert home.state("fan.loft_fan") == home.state("fan.study_fan") == "off"
    assert reply.text == "The loft fan and the study fan are off."
    home.say("close the windows")  # what covers a window; the window sensor can't close
    assert home.state("cover.den_curtains") == home.state("cover.study_shutters") == "closed"
    closed = home.say("close all the curtains")
    # The old gate is a cover too, but no curtain: it is never sent anything.
    assert home.state("cover.den_curtains") == "closed"
    assert all(call[2].get("entity_id") != "cover.old_gate" for call in home.standin.calls)
    assert closed.text == "The den curtains are closed."


def test_a_device_home_assistant_does_not_have_is_one_sentence(home: Home) -> None:
    reply = home.say("open the old gate")
    assert reply.outcome == Outcome.FAILED
    assert reply.text.startswith("Home Assistant refused the request (400), so nothing was done")
    assert "cover.old_gate is missing" in reply.text
    assert home.standin.states.get("cover.old_gate") is None


def test_something_not_in_the_home_is_said_so(home: Home) -> None:
    reply = home.say("open the skylight")
    assert reply.outcome in (Outcome.REFUSED, Outcome.ASKED)
    assert home.standin.calls == []


def items(home: Home, eid: str = "todo.chores") -> list[tuple[str, str]]:
    return [(i["summary"], i["status"]) for i in home.standin.todo_items(eid)]


def test_a_home_assistant_to_do_list_takes_the_list_verbs(home: Home) -> None:
    added = home.say("add mop the hall and oil the hinges to the chores list")
    assert added.text == "Added mop the hall and oil the hinges to the chores list."
    assert ("mop the hall", "needs_action") in items(home)
    assert ("oil the hinges", "needs_action") in items(home)
    ticked = home.say("tick off descale kettle on the jobs list")  # an alias, any case
    assert ticked.text == "Ticked off Descale kettle on the chores list."
    assert ("Descale kettle", "completed") in items(home)
    taken = home.say("take water the ferns off the chores list")
    assert ("water the ferns", "needs_action") not in items(home)
    assert taken.text == "Took water the ferns off the chores list."
    read = home.say("what's on the chores list")
    assert read.text == "The chores list has 2 items: mop the hall and oil the hinges."
    # Nothing near is taken for what was said: "fern" is not "water the ferns".
    before = items(home)
    missing = home.say("take fern off the chores list")
    assert missing.text == "Not on the chores list: fern. Nothing was changed."
    assert items(home) == before


def test_a_list_not_in_home_assistant_stays_mavends_own(home: Home) -> None:
    reply = home.say("add nails to the hardware list")
    assert reply.text == "Added nails to your hardware list."
    assert home.standin.calls == []


def test_a_refused_to_do_call_is_one_sentence(home: Home) -> None:
    home.standin.states["todo.chores"]["attributes"]["supported_features"] = 0  # no adding
    reply = home.say("add sweep the porch to the chores list")
    assert reply.outcome == Outcome.FAILED
    assert reply.text == (
        "Home Assistant refused the request (400), so nothing was done: Entity todo.chores "
        "does not support action add_item."
    )
    assert ("sweep the porch", "needs_action") not in items(home)


def test_which_of_a_kind_are_in_a_state_is_read_from_each(home: Home) -> None:
    home.standin.states["fan.loft_fan"]["state"] = "on"
    assert home.say("which fans are on").text == "The loft fan is on."
    home.standin.states["fan.study_fan"]["state"] = "on"
    assert home.say("are any of the fans on").text == "The loft fan and the study fan are on."
    assert home.say("is any door unlocked").text == "No: the side door is locked."
    assert home.standin.calls == []  # read with GET /api/states/<id>: no service called


def test_many_of_a_kind_are_counted_a_few_named() -> None:
    from mavend.home.devices import resolve

    table = "".join(
        f'[[devices]]\nname = "kitchen blind {n}"\nroom = "kitchen"\ntype = "cover"\n'
        f'device_class = "blind"\nhomeassistant = "cover.b{n}"\n'
        for n in range(5)
    )
    devices = parse_settings(table).devices
    many = resolve(devices, "device_close", {"device": "blinds", "room": "kitchen"}, "")
    assert len(many.devices) == 5 and many.group == "all 5 blinds in the kitchen"
    few = resolve(devices[:3], "device_close", {"device": "blinds"}, "kitchen")
    assert len(few.devices) == 3 and few.group == ""  # named one by one in the reply


# One spoken request per class, in one recording: (what is said, what must be left
# behind: an entity's state, or a reply's words for a read).
SPOKEN = [
    ("open the driveway gate", ("cover.driveway_gate", "open")),
    ("lock the side door", ("lock.side_door", "locked")),
    ("turn on the study fan", ("fan.study_fan", "on")),
    ("switch the heat pump to cool", ("climate.loft_heat_pump", "cool")),
    ("pause the tv", ("media_player.den_tv", "paused")),
    ("start the upstairs robot", ("vacuum.upstairs_robot", "cleaning")),
    ("turn on the garden tap", ("valve.garden_tap", "open")),
    ("what's the temperature in the loft", "16.4 degrees"),
    ("is the back window open", "The back window is open."),
    ("activate reading time", ("light.den_lamp", "on")),
    ("what's on my chores list", "water the ferns"),
]
# Whisper tiny.en hears espeak-ng's voice imperfectly (issue 25), and which words it
# gets wrong moves with the grammar's hotwords: 6 to 8 of the 11 came through word for
# word when this was written, 4 after the grammar grew. So what is counted is what a
# household would: the requests whose state or answer came about, however they were
# heard ("garden tab" snapped to the tap counts; "study fam" does not). Each request
# heard word for word must leave its state; one heard wrong must change nothing else.
DONE_AT_LEAST = 5


def _normal(text: str) -> str:
    return " ".join(text.lower().replace("?", "").replace(".", "").replace(",", "").split())


def test_every_class_spoken_not_typed(
    tmp_path: Path, standin: StandIn, private_dirs: Path
) -> None:
    """Speech, not text (espeak-ng, wake word, endpointing, Whisper: `mavend listen
    --audio-file`), one request per class, then the router, the class and Home
    Assistant's service: judged by the state the stand-in is left in."""
    import json as json_
    import os
    import subprocess
    import sys

    from tests.audio_fixtures import command_clip, concat, write_wav
    from tests.conftest import require_model

    for name in ("openwakeword", "silero-vad", "whisper-tiny.en"):
        require_model(name)
    clip = write_wav(
        tmp_path / "home.wav",
        concat(*(command_clip(said, voice="en-us", speed=170) for said, _ in SPOKEN)),
    )
    for eid, start in (
        ("lock.side_door", "unlocked"), ("media_player.den_tv", "playing"),
        ("climate.loft_heat_pump", "heat"), ("fan.study_fan", "off"),
    ):  # fmt: skip
        standin.states[eid]["state"] = start
    before = copy.deepcopy(standin.states)
    token = tmp_path / "ha-token"
    token.write_text(standin.token + "\n")
    config = tmp_path / "config.toml"
    config.write_text(
        f'[homeassistant]\nurl = "{standin.url}"\ntoken_file = "{token}"\n'
        "[router]\nllm_enabled = false\n" + TABLE
    )
    mavend = Path(sys.executable).parent / "mavend"
    heard = subprocess.run(
        [str(mavend), "--config", str(config), "listen", "--json", "--audio-file", str(clip)],
        capture_output=True, text=True, timeout=300, env=os.environ.copy(),
    )  # fmt: skip
    assert heard.returncode == 0, heard.stderr
    turns: list[tuple[str, str]] = []  # (transcript, reply)
    transcript = ""
    for line in heard.stdout.splitlines():
        event = json_.loads(line) if line.startswith("{") else {}
        if event.get("event") == "transcript":
            transcript = _normal(event["text"].removeprefix("Hey Jarvis, "))
        elif event.get("event") == "reply":
            turns.append((transcript, event["text"]))
    wanted = {_normal(said): want for said, want in SPOKEN}
    right = [(t, r) for t, r in turns if t in wanted]
    replies = " ".join(reply for _, reply in turns)
    done = [said for said, want in SPOKEN if (
        want in replies if isinstance(want, str)
        else standin.states[want[0]] != before[want[0]]
        and standin.states[want[0]]["state"] == want[1]
    )]  # fmt: skip
    assert len(done) >= DONE_AT_LEAST, (done, turns)
    for transcript, reply in right:
        want = wanted[transcript]
        if isinstance(want, tuple):
            assert standin.states[want[0]]["state"] == want[1], (transcript, reply)
        else:
            assert want in reply, (transcript, reply)
    # Whatever was misheard changed nothing but what was asked, and only as asked: a
    # misheard request either does nothing or, snapped to the grammar ("the garden tab"),
    # exactly what was said (router/snap.py).
    meant = {want[0]: want[1] for _, want in SPOKEN if isinstance(want, tuple)}
    changed = {e for e in standin.states if standin.states[e] != before.get(e)}
    if "light.den_lamp" in changed:  # the scene's last-activated time moves with its lamp
        meant["scene.reading_time"] = standin.states["scene.reading_time"]["state"]
    assert changed <= set(meant), (changed, turns)
    for entity in changed:
        assert standin.states[entity]["state"] == meant[entity], (entity, turns)


def test_the_answer_to_which_fan_runs_it_on_that_one(home: Home) -> None:
    assert home.say("turn on the fan").outcome == Outcome.ASKED
    assert home.say("the study one").text == "The study fan is on at 100 percent."
    assert (home.state("fan.study_fan"), home.state("fan.loft_fan")) == ("on", "off")
    home.say("turn on the loft fan")
    assert home.say("turn off the fan").outcome == Outcome.ASKED  # both are on: which?
    assert home.say("in the study").text == "The study fan is off."
    assert (home.state("fan.study_fan"), home.state("fan.loft_fan")) == ("off", "on")
    # With one of them on, "turn off the fan" is that one: the other is off already.
    assert home.say("turn off the fan").text == "The loft fan is off."
    assert (home.state("fan.study_fan"), home.state("fan.loft_fan")) == ("off", "off")
    # An answer from another session does not take the question; another turn drops it.
    home.say("turn on the fan")
    home.say("the loft one", session="satellite:garden")
    assert home.state("fan.loft_fan") == "off"
    home.say("what time is it")
    home.say("the loft one")
    assert home.state("fan.loft_fan") == "off"


@pytest.mark.parametrize(
    ("text", "eid", "want"),
    [
        ("set every fan in the house to 50 percent", "fan.study_fan", ("on", "percentage", 50)),
        ("could you get the upstairs robot going", "vacuum.upstairs_robot", ("cleaning",)),
        ("turn the den lamp up to 60 percent", "light.den_lamp", ("on", "brightness", 153)),
        ("reading time please", "light.den_lamp", ("on",)),
    ],
)
def test_more_ways_to_say_it(home: Home, text: str, eid: str, want: tuple) -> None:
    home.say(text)
    assert home.state(eid) == want[0]
    if len(want) > 1:
        assert home.attr(eid, want[1]) == want[2]


def test_music_in_a_room_and_half_speed(home: Home) -> None:
    home.say("pause the music in the den")
    assert home.state("media_player.den_tv") == "paused"
    home.say("put the loft fan on half speed")
    assert home.attr("fan.loft_fan", "percentage") == 50


def test_a_room_said_for_its_lock_and_an_alias_said_in_the_plural() -> None:
    from mavend.home.devices import resolve

    devices = parse_settings(
        '[[devices]]\nname = "garage door"\nroom = "garage"\ntype = "cover"\n'
        'device_class = "garage"\nhomeassistant = "cover.garage_door"\n'
        '[[devices]]\nname = "garage door lock"\nroom = "garage"\ntype = "lock"\n'
        'homeassistant = "lock.garage"\n'
        '[[devices]]\nname = "hall heater plug"\naliases = ["heater plug"]\nroom = "hall"\n'
        'type = "plug"\nhomeassistant = "switch.hall_heater"\n'
        '[[devices]]\nname = "loft heater plug"\naliases = ["heater plug"]\nroom = "loft"\n'
        'type = "plug"\nhomeassistant = "switch.loft_heater"\n'
    ).devices
    locked = resolve(devices, "device_lock", {"device": "garage"}, "")
    assert [d.name for d in locked.devices] == ["garage door lock"]  # not the garage door
    opened = resolve(devices, "device_open", {"device": "garage"}, "")
    assert [d.name for d in opened.devices] == ["garage door"]  # the door is "the garage"
    plugs = resolve(devices, "device_off", {"device": "heater plugs"}, "")
    assert [d.name for d in plugs.devices] == ["hall heater plug", "loft heater plug"]


@pytest.mark.parametrize(
    ("text", "target"),
    [("set the heat pump to 19.5", 19.5), ("set the heat pump to twenty and a half degrees", 20.5)],
)
def test_a_half_degree_is_sent_as_one(home: Home, text: str, target: float) -> None:
    home.say(text)
    assert home.attr("climate.loft_heat_pump", "temperature") == target
    sent = home.standin.calls[-1][2]
    assert sent == {"entity_id": "climate.loft_heat_pump", "temperature": target}


def test_a_rooms_lights_to_a_level(home: Home) -> None:
    reply = home.say("dim the lights in the den to 40 percent")
    assert home.attr("light.den_lamp", "brightness") == 102
    assert reply.text == "The den lamp is at 40 percent."
    home.say("turn off the lights")  # the only room with lights: no question
    assert home.state("light.den_lamp") == "off"


def test_a_step_up_or_down_without_a_level(home: Home) -> None:
    home.say("set the den lamp to 50 percent")
    home.say("brighten the den lamp")  # brightness_step_pct 20, as Home Assistant steps it
    assert home.attr("light.den_lamp", "brightness") == 179
    home.say("dim the den lamp a bit")
    assert home.attr("light.den_lamp", "brightness") == 128
    home.say("set the study fan to medium")
    assert home.attr("fan.study_fan", "percentage") == 66
    home.say("turn the volume up on the den tv")
    assert home.attr("media_player.den_tv", "volume_level") == 0.3


def test_warmer_and_cooler_step_the_thermostats_own_target(home: Home) -> None:
    home.say("make it warmer in the loft")  # from 19, a step of 1 (no target_temp_step)
    assert home.attr("climate.loft_heat_pump", "temperature") == 20
    home.standin.states["climate.loft_heat_pump"]["attributes"]["target_temp_step"] = 0.5
    home.say("turn the heating down")
    assert home.attr("climate.loft_heat_pump", "temperature") == 19.5


def test_are_all_of_a_kind_in_a_state(home: Home) -> None:
    assert home.say("are all the fans off").text == "Yes, both fans are off."
    home.standin.states["fan.loft_fan"]["state"] = "on"
    assert home.say("is every fan off").text == "No: the loft fan is on."


def test_a_fans_preset_is_one_of_its_own(home: Home) -> None:
    reply = home.say("put the loft fan on sleep mode")
    assert home.attr("fan.loft_fan", "preset_mode") == "Sleep"  # its own spelling
    assert reply.text == "The loft fan is on in sleep mode.", reply.text  # was "is on."
    assert home.standin.calls[-1] == (
        "fan", "set_preset_mode", {"entity_id": "fan.loft_fan", "preset_mode": "Sleep"}
    )
    home.say("switch the heat pump to cool")  # a thermostat's mode stays an HVAC mode
    assert home.state("climate.loft_heat_pump") == "cool"
    refused = home.say("put the study fan on sleep mode")  # the study fan has no presets
    assert refused.outcome == Outcome.REFUSED
    assert home.attr("fan.study_fan", "preset_mode") is None


def test_two_commands_in_one_breath_both_run_in_order(home: Home) -> None:
    home.standin.states["lock.side_door"]["state"] = "unlocked"
    reply = home.say("lock the side door then start the upstairs robot")
    assert reply.text == "The side door is locked. The upstairs robot is cleaning."
    assert [c[1] for c in home.standin.calls] == ["lock", "start"]


@pytest.mark.parametrize(
    ("name", "kind", "verb"),
    [
        ("kitchen spots", "light", "are"),  # a plain plural, not the class's own word
        ("fairy lights", "light", "are"),
        ("office blinds", "cover", "are"),
        ("bedside lamp", "light", "is"),
        ("patio gas", "switch", "is"),  # -s, but one thing
        ("glass", "light", "is"),
        ("cactus", "plug", "is"),
    ],
)
def test_a_reply_agrees_with_the_device_name(name: str, kind: str, verb: str) -> None:
    from mavend.config.home import DeviceSpec
    from mavend.home.feedback import be

    device = DeviceSpec(name=name, type=kind, mqtt=f"zigbee2mqtt/{name.replace(' ', '_')}")
    assert be(device) == verb
