"""Home requests said the way people say them, judged by the end state of the Home
Assistant stand-in (tests/ha_home/standin.py; Home Assistant itself cannot run here).

Each was found by a set of requests written for this session (not the benchmark's): a
restart ("can you can you"), a misheard "turn of", "don't ... turn it off", a plug called
by what it powers, the lock and the cover both called "garage door", a state question
about a room's two lights, two devices for one verb, the room said after "off", a room's
thermostat named by the room, "halfway"; then (session 26) a plug called by what it
powers inside its room, "way too dark", a room said to be cold, "bump ... up to", "did
i lock ...", a room's player unnamed. The phrasings here are this file's own.
"""

from __future__ import annotations

import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tests.ha_home.house import StandInHome, entity, serving
from tests.ha_home.standin import StandIn

LIGHT = {"supported_color_modes": ["brightness"], "brightness": None, "color_mode": None}
HOME = {
    "name": "terrace",
    "areas": [],
    "devices": [],
    "entities": [
        entity("light.bedroom_lamp", "Bedroom lamp", "off", **LIGHT),
        entity("light.office_lamp", "Office lamp", "on", **LIGHT),
        entity("fan.office_fan", "Office fan", "on", percentage=100, supported_features=49),
        entity("switch.garden_heater_plug", "Garden heater plug", "off"),
        entity("lock.garage_door_lock", "Garage door lock", "locked", supported_features=0),
        entity("cover.garage_door", "Garage door", "closed", device_class="garage",
               supported_features=3),
        entity("light.nursery_ceiling", "Nursery ceiling light", "on", **LIGHT),
        entity("light.nursery_lamp", "Nursery lamp", "off", **LIGHT),
        entity("climate.bedroom_radiator", "Bedroom radiator", "heat",
               hvac_modes=["off", "heat"], temperature=20, current_temperature=18.5,
               min_temp=7, max_temp=30, supported_features=385),
        entity("cover.kitchen_blinds", "Kitchen blinds", "open", device_class="blind",
               current_position=100, supported_features=15),
        entity("vacuum.hall_robot", "Hall robot", "cleaning", battery_level=80,
               supported_features=8220),
        entity("media_player.kitchen_radio", "Kitchen radio", "playing", device_class="speaker",
               media_title="Slow Tide", media_artist="The Pier", volume_level=0.3,
               supported_features=21437),
        entity("sensor.garden_humidity", "Garden humidity", "61", device_class="humidity",
               unit_of_measurement="%", state_class="measurement"),
        entity("valve.garden_water_valve", "Garden water valve", "closed", device_class="water",
               supported_features=3),
    ],
}
TABLE = """
[[devices]]
name = "bedroom lamp"
room = "bedroom"
homeassistant = "light.bedroom_lamp"

[[devices]]
name = "office lamp"
room = "office"
homeassistant = "light.office_lamp"

[[devices]]
name = "office fan"
room = "office"
type = "fan"
homeassistant = "fan.office_fan"

[[devices]]
name = "garden heater plug"
room = "garden"
type = "plug"
homeassistant = "switch.garden_heater_plug"

[[devices]]
name = "garage door lock"
room = "garage"
type = "lock"
homeassistant = "lock.garage_door_lock"

[[devices]]
name = "garage garage door"
aliases = ["garage door"]
room = "garage"
type = "cover"
device_class = "garage"
supports = ["open", "close", "state"]
homeassistant = "cover.garage_door"

[[devices]]
name = "nursery ceiling light"
room = "nursery"
homeassistant = "light.nursery_ceiling"

[[devices]]
name = "nursery lamp"
room = "nursery"
homeassistant = "light.nursery_lamp"

[[devices]]
name = "bedroom radiator"
room = "bedroom"
type = "climate"
homeassistant = "climate.bedroom_radiator"

[[devices]]
name = "kitchen blinds"
room = "kitchen"
type = "cover"
device_class = "blind"
homeassistant = "cover.kitchen_blinds"

[[devices]]
name = "hall robot"
room = "hall"
type = "vacuum"
homeassistant = "vacuum.hall_robot"

[[devices]]
name = "kitchen radio"
room = "kitchen"
type = "media_player"
device_class = "speaker"
homeassistant = "media_player.kitchen_radio"

[[devices]]
name = "garden hygrometer"
room = "garden"
type = "sensor"
device_class = "humidity"
homeassistant = "sensor.garden_humidity"

[[devices]]
name = "garden water valve"
room = "garden"
type = "valve"
device_class = "water"
homeassistant = "valve.garden_water_valve"
"""


class Home(StandInHome):
    def __init__(self, tmp_path: Path, standin: StandIn):
        super().__init__(tmp_path, standin, TABLE)  # TABLE as the test may have changed it


@pytest.fixture
def home(tmp_path: Path):
    with serving(HOME, lambda served: Home(tmp_path, served)) as house:
        yield house


def test_fillers_and_a_restart_are_heard_through(home: Home) -> None:
    home.say("uh can you can you turn the uh bedroom lamp on")
    assert home.changed() == {"light.bedroom_lamp"} and home.state("light.bedroom_lamp") == "on"


def test_turn_of_is_turn_off(home: Home) -> None:
    home.say("turn of the office lamp")
    assert home.changed() == {"light.office_lamp"} and home.state("light.office_lamp") == "off"


def test_what_is_said_after_a_negated_command_is_done(home: Home) -> None:
    home.say("don't turn the office lamp off")
    assert home.changed() == set()
    home.say("no don't turn the office lamp on turn it off")
    assert home.changed() == {"light.office_lamp"} and home.state("light.office_lamp") == "off"


def test_a_plug_answers_to_what_it_powers(home: Home) -> None:
    home.say("turn on the garden heater")
    assert home.changed() == {"switch.garden_heater_plug"}
    assert home.state("switch.garden_heater_plug") == "on"


def test_unlock_the_garage_door_unlocks_the_lock_not_the_cover(home: Home) -> None:
    asked = home.say("unlock the garage door")
    assert "unlock the garage door" in asked.text.lower() and home.changed() == set()
    home.say("yes")
    assert home.changed() == {"lock.garage_door_lock"}
    assert home.state("lock.garage_door_lock") == "unlocked"


def test_a_rooms_two_lights_are_both_read_not_asked_about(home: Home) -> None:
    reply = home.say("did i leave the nursery light on")
    assert reply.text == "The nursery ceiling light is on and the nursery lamp is off."
    assert home.changed() == set()


def test_two_devices_for_one_verb(home: Home) -> None:
    home.say("turn off the office lamp and the office fan")
    assert home.changed() == {"light.office_lamp", "fan.office_fan"}
    assert (home.state("light.office_lamp"), home.state("fan.office_fan")) == ("off", "off")


def test_the_room_said_after_off(home: Home) -> None:
    home.say("turn everything off in the office")
    assert home.changed() == {"light.office_lamp", "fan.office_fan"}


@pytest.mark.parametrize("said", ["set the bedroom to 19 degrees",
                                  "put the heating in the bedroom up to 19 degrees"])
def test_a_room_named_for_its_thermostat(home: Home, said: str) -> None:
    home.say(said)
    assert home.changed() == {"climate.bedroom_radiator"}
    assert home.standin.states["climate.bedroom_radiator"]["attributes"]["temperature"] == 19


def test_halfway_is_half(home: Home) -> None:
    home.say("lower the kitchen blinds halfway")
    assert home.standin.states["cover.kitchen_blinds"]["attributes"]["current_position"] == 50
    assert home.changed() == {"cover.kitchen_blinds"}


def test_a_refusal_is_short_when_spoken(home: Home) -> None:
    """Read aloud, the whole list of what can be done took 15 s to hear; shown, it stays."""
    reply = home.assistant.handler.acts.refuse()
    assert reply.spoken == "I can't do that: it isn't on my list of allowed actions."
    assert "control the home's" in reply.text and reply.outcome == "refused"


def test_a_plug_named_inside_its_room(home: Home) -> None:
    home.say("switch the heater in the garden on")
    assert home.changed() == {"switch.garden_heater_plug"}


def test_way_too_dark_lights_the_room(home: Home) -> None:
    home.say("it's way too dark in the nursery")  # its ceiling light was on already
    assert home.changed() <= {"light.nursery_lamp", "light.nursery_ceiling"}
    assert (home.state("light.nursery_lamp"), home.state("light.nursery_ceiling")) == ("on", "on")


def test_a_room_said_to_be_cold_is_warmed_a_step(home: Home) -> None:
    home.say("it's absolutely freezing in the bedroom")  # from 20, a step of 1
    assert home.standin.states["climate.bedroom_radiator"]["attributes"]["temperature"] == 21
    home.say("bump the bedroom heating up to 23")
    assert home.standin.states["climate.bedroom_radiator"]["attributes"]["temperature"] == 23
    assert home.changed() == {"climate.bedroom_radiator"}


def test_im_cold_warms_the_room_and_today_is_now(home: Home) -> None:
    """ "i'm cold" was kept as a note; "i'm cold today" set the act for 09:00 ("OK, I'll
    i'm cold at 09:00 today")."""
    home.say("i'm freezing in the bedroom")  # from 20, a step of 1
    assert home.standin.states["climate.bedroom_radiator"]["attributes"]["temperature"] == 21
    home.say("i'm so cold in the bedroom today")
    assert home.standin.states["climate.bedroom_radiator"]["attributes"]["temperature"] == 22
    home.say("i'm too hot in the bedroom")
    assert home.standin.states["climate.bedroom_radiator"]["attributes"]["temperature"] == 21
    assert home.changed() == {"climate.bedroom_radiator"}
    with closing(sqlite3.connect(home.assistant.store.path)) as conn:
        assert conn.execute("SELECT count(*) FROM reminders").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM notes").fetchone()[0] == 0


@pytest.mark.parametrize("said", ["did i lock the garage door", "is the garage door locked"])
def test_did_i_lock_asks_the_lock_not_the_door(home: Home, said: str) -> None:
    reply = home.say(said)
    assert reply.text == "The garage door lock is locked." and home.changed() == set()


def test_what_is_playing_in_a_room_asks_its_player(home: Home) -> None:
    reply = home.say("what's playing in the kitchen")
    assert "Slow Tide" in reply.text and home.changed() == set()


def test_a_command_said_after_why_runs_in_the_room_the_why_named(home: Home) -> None:
    home.say("it's chilly out in the garden could you switch the heater on")
    assert home.changed() == {"switch.garden_heater_plug"}
    assert home.state("switch.garden_heater_plug") == "on"


@pytest.mark.parametrize("said", ["why did you turn off the office lamp",
                                  "i told him not to turn off the office lamp",
                                  "what happens if i turn off the office lamp"])
def test_a_why_that_asks_or_reports_runs_nothing(home: Home, said: str) -> None:
    home.say(said)
    assert home.changed() == set()


def test_a_temperature_said_with_a_point_is_no_date(home: Home) -> None:
    """"on 19.5" was read as 19 May: a reminder to "put the bedroom radiator" then."""
    home.say("put the bedroom radiator on 19.5")
    assert home.standin.states["climate.bedroom_radiator"]["attributes"]["temperature"] == 19.5
    assert home.assistant.ctx.reminders.active() == []


def test_where_is_a_device_reads_its_state(home: Home) -> None:
    assert "playing" in home.say("where's the kitchen radio at the moment").text
    assert home.changed() == set()


@pytest.mark.parametrize(("said", "expected"), [
    ("pause the music", {"state": "paused"}),
    ("silence the speaker", {"is_volume_muted": True}),
])
def test_this_boxs_media_words_reach_the_home_player_that_plays(
    home: Home, said: str, expected: dict[str, Any]
) -> None:
    """"pause the music" ran this box's player (playerctl) while the kitchen radio played
    on; a home player that is playing is the one meant."""
    reply = home.say(said)
    state = home.standin.states["media_player.kitchen_radio"]
    held = {"state": state["state"], **state["attributes"]}
    assert {k: held[k] for k in expected} == expected, reply.text
    assert home.changed() == {"media_player.kitchen_radio"}
    with sqlite3.connect(home.assistant.store.path) as db:
        ran = [name for (name,) in db.execute("SELECT name FROM act_runs ORDER BY id")]
    assert ran == ["device_pause" if "state" in expected else "device_mute"]  # not playerctl


def test_pausing_the_music_everywhere_pauses_only_players(home: Home) -> None:
    """"pause the music everywhere" paused all 18 devices that pause, a vacuum too."""
    home.say("pause the music everywhere")
    assert home.changed() == {"media_player.kitchen_radio"}
    assert home.state("vacuum.hall_robot") == "cleaning"


def test_the_big_light_is_the_rooms_ceiling_light(home: Home) -> None:
    home.say("turn the big light off in the nursery")
    assert home.changed() == {"light.nursery_ceiling"}
    assert home.state("light.nursery_ceiling") == "off"


# session 27: found by hand ----------------------------------------------------------------
def test_a_filler_between_two_articles_is_heard_through(home: Home) -> None:
    # "the uh the": the filler went, leaving two spaces, and the restart was not seen
    home.say("uh turn the uh the office lamp off")
    assert home.changed() == {"light.office_lamp"} and home.state("light.office_lamp") == "off"


def test_two_rooms_lights_for_one_verb(home: Home) -> None:
    home.say("turn on the nursery light and the bedroom light")
    lit = {"light.nursery_lamp", "light.bedroom_lamp", "light.nursery_ceiling"}
    assert home.changed() <= lit and all(home.state(e) == "on" for e in lit)


@pytest.mark.parametrize(("said", "target"), [
    ("turn the heating down a degree in the bedroom", 19),
    ("turn the bedroom radiator up two degrees", 22),
    ("make it 2 degrees cooler in the bedroom", 18),
    ("make it one degree warmer in the bedroom", 21),
])
def test_a_step_said_in_degrees_is_that_many(home: Home, said: str, target: int) -> None:
    # it stepped by the thermostat's own step, or (the last two) moved a reminder "to 2"
    home.say(said)
    radiator = home.standin.states["climate.bedroom_radiator"]
    assert home.changed() == {"climate.bedroom_radiator"}
    assert radiator["attributes"]["temperature"] == target


def test_the_sun_in_my_eyes_closes_the_rooms_blinds(home: Home) -> None:
    home.say("the sun is in my eyes in the kitchen")
    assert home.changed() == {"cover.kitchen_blinds"}
    assert home.state("cover.kitchen_blinds") == "closed"


def test_a_stuffy_room_gets_its_fan(home: Home) -> None:
    home.say("turn off the office fan")
    home.say("it's really stuffy in the office")
    assert home.state("fan.office_fan") == "on"


def test_a_new_command_is_no_answer_to_which_one(home: Home) -> None:
    asked = home.say("turn on the lamp")
    assert asked.text.startswith("Which lamp"), asked.text
    home.say("the sun is in my eyes in the kitchen")  # names no lamp: a request of its own
    assert home.changed() == {"cover.kitchen_blinds"}


@pytest.mark.parametrize("said", ["how humid is it outside", "tell me the humidity",
                                  "how damp is it out in the garden"])
def test_with_no_weather_source_the_garden_sensor_answers(home: Home, said: str) -> None:
    # it said "I don't have a weather source" (or, the last, "I don't know")
    reply = home.say(said)
    assert "61" in reply.text and home.changed() == set(), reply.text


def test_no_sensor_for_it_outside_is_still_no_source(home: Home) -> None:
    reply = home.say("what's the temperature outside")
    assert "weather source" in reply.text and home.changed() == set()


# Session 29: the whole home asked at once, a keyboard's missing apostrophes, the heating
# turned up (it was read as "open the heating" and asked which heating to open).
def test_did_i_leave_anything_on_reads_every_switchable_thing(home: Home) -> None:
    reply = home.say("did i leave anything on")
    assert home.changed() == set()
    for name in ("office lamp", "office fan", "nursery ceiling light"):
        assert name in reply.text, reply.text
    assert "bedroom lamp" not in reply.text and "blinds" not in reply.text
    assert home.say("is anything on in the bedroom").text == "Nothing in the bedroom is on."


def test_is_anything_open_asks_the_ways_in_not_the_blinds(home: Home) -> None:
    assert home.say("is anything open").text == "Nothing is open."  # the kitchen blinds are
    home.standin.states["cover.garage_door"]["state"] = "open"
    assert "garage" in home.say("is there anything still open").text


def test_is_everything_locked_and_lock_up(home: Home) -> None:
    assert home.say("is everything locked").text == "Yes, everything is locked."
    home.standin.states["lock.garage_door_lock"]["state"] = "unlocked"
    assert home.say("did we lock up").text == "No: the garage door lock is unlocked."
    home.say("lock up for the night")
    assert home.state("lock.garage_door_lock") == "locked"
    assert home.changed() == set()  # locked again, as it was


def test_turn_the_heating_up_warms_the_only_thermostat(home: Home) -> None:
    home.say("turn the heating up")
    assert home.changed() == {"climate.bedroom_radiator"}
    assert home.standin.states["climate.bedroom_radiator"]["attributes"]["temperature"] > 20


def test_a_question_typed_without_its_apostrophe(home: Home) -> None:
    reply = home.say("whats the temperature in the bedroom")
    assert "18.5" in reply.text and home.changed() == set()


def test_music_played_in_a_room_plays_its_player(home: Home) -> None:
    home.standin.states["media_player.kitchen_radio"]["state"] = "paused"
    home.say("put some music on in the kitchen")
    assert home.state("media_player.kitchen_radio") == "playing"


def test_leave_it_on_turns_it_on(home: Home) -> None:
    home.say("leave the bedroom lamp on")
    assert home.changed() == {"light.bedroom_lamp"} and home.state("light.bedroom_lamp") == "on"


def test_the_lights_of_two_rooms_said_once(home: Home) -> None:
    home.say("turn off the lights in the office and the nursery")
    assert home.changed() == {"light.office_lamp", "light.nursery_ceiling"}
    assert home.state("light.office_lamp") == home.state("light.nursery_ceiling") == "off"


def test_water_the_garden_opens_its_valve(home: Home) -> None:
    home.say("water the garden")
    assert home.changed() == {"valve.garden_water_valve"}
    assert home.state("valve.garden_water_valve") == "open"
    home.say("stop watering the garden")
    assert home.state("valve.garden_water_valve") == "closed"


def test_a_rooms_music_turned_down_and_stopped(home: Home) -> None:
    # A player with VOLUME_SET and no VOLUME_STEP still steps (Home Assistant does it).
    home.say("turn the music down in the kitchen")
    volume = home.standin.states["media_player.kitchen_radio"]["attributes"]["volume_level"]
    assert volume == pytest.approx(0.2)
    home.say("stop the music everywhere")
    assert home.state("media_player.kitchen_radio") == "paused"
    assert home.changed() == {"media_player.kitchen_radio"}


def test_a_room_set_to_a_number_is_its_heating(home: Home) -> None:
    home.say("set the bedroom to 21")
    assert home.standin.states["climate.bedroom_radiator"]["attributes"]["temperature"] == 21
    home.say("make the bedroom a bit warmer")
    assert home.standin.states["climate.bedroom_radiator"]["attributes"]["temperature"] > 21
    assert home.changed() == {"climate.bedroom_radiator"}


def test_a_thermostat_set_to_a_number_is_set_in_degrees(home: Home) -> None:
    """ "set every thermostat to 19" was a light's level (light_set, then device_set)."""
    home.say("set every thermostat to 19")
    assert home.standin.states["climate.bedroom_radiator"]["attributes"]["temperature"] == 19
    assert home.changed() == {"climate.bedroom_radiator"}


def test_the_room_said_after_a_question(home: Home) -> None:
    """ "what's the thermostat set to in the bedroom", the room last, said "I don't know"."""
    reply = home.say("what's the radiator set to in the bedroom")
    assert "20 degrees" in reply.text and "18.5" in reply.text
    assert home.say("are the blinds open in the kitchen").text == "The kitchen blinds are open."
    assert home.changed() == set()


def test_on_at_a_level(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ "turn on the bedroom lamp at 50 percent" said there was no bedroom lamp."""
    dimmable = TABLE.replace('name = "bedroom lamp"\n', 'name = "bedroom lamp"\ndimmable = true\n')
    monkeypatch.setattr(sys.modules[__name__], "TABLE", dimmable)
    with serving(HOME, lambda served: Home(tmp_path, served)) as house:
        house.say("turn on the bedroom lamp at 50 percent")
        lamp = house.standin.states["light.bedroom_lamp"]
        assert lamp["state"] == "on" and lamp["attributes"]["brightness"] in (127, 128)
        assert house.changed() == {"light.bedroom_lamp"}


@pytest.mark.parametrize("said", ["turn off all the lights", "switch off every light",
                                  "turn all the lights off", "all lights off please",
                                  "kill all the lights"])
def test_all_the_lights_with_no_room_are_every_rooms(home: Home, said: str) -> None:
    """It asked "Which room's lights?": the "all" was read and dropped."""
    home.say(said)
    lights = [e for e in home.standin.states if e.startswith("light.")]
    assert {e: home.state(e) for e in lights} == dict.fromkeys(lights, "off")


def test_all_the_lights_of_a_room_are_that_rooms(home: Home) -> None:
    home.say("turn off all the lights in the nursery")
    assert home.changed() == {"light.nursery_ceiling"}


def test_the_lights_with_no_room_and_no_all_still_asks_which_room(home: Home) -> None:
    reply = home.say("turn off the lights")
    assert reply.text.startswith("Which room's lights"), reply.text
    assert home.changed() == set()


def test_a_colour_for_lights_that_cannot_take_one_says_so(tmp_path: Path) -> None:
    """"turn the nursery lights red" where neither can (the bedroom lamp can): "There are
    no lights in the nursery that I know of." There are two; they cannot change colour."""
    coloured = TABLE.replace('name = "bedroom lamp"\n', 'name = "bedroom lamp"\ncolour = true\n')
    with serving(HOME, lambda served: StandInHome(tmp_path, served, coloured)) as home:
        reply = home.say("turn the nursery lights red")
        assert reply.text == "The nursery lights can't change colour."
        assert home.changed() == set()


@pytest.mark.parametrize("said", ["vacuum the house", "start hoovering",
                                  "hoover the floors please"])
def test_the_floors_cleaned_without_naming_the_robot(home: Home, said: str) -> None:
    """"vacuum the house" was refused: it isn't on my list of allowed actions."""
    home.standin.states["vacuum.hall_robot"]["state"] = "docked"
    home.say(said)
    assert home.state("vacuum.hall_robot") == "cleaning"


@pytest.fixture
def asked_home(tmp_path: Path):
    """The home, with a classifier scripted to call every turn a question about the
    user's own things, as the real one did for "is the back door locked"."""
    from mavend.router.decision import Intent
    from tests.scripted import Classified, ScriptedClassifier

    query = Classified(Intent.QUERY, 0.99, {Intent.QUERY: 0.99}, source="notes")
    asking = ScriptedClassifier({}, query)
    with serving(HOME, lambda served: StandInHome(tmp_path, served, TABLE,
                                                  classifier=asking)) as house:
        yield house


@pytest.mark.parametrize(("asked", "reply"), [
    ("is the back door locked", "I don't know of a back door in this home. I know the garage "
     "door lock and the garage garage door."),
    ("are the porch lights on", "I don't know of any porch lights in this home. I know the "
     "nursery ceiling light."),
])
def test_a_device_the_home_does_not_have_is_said_unknown(
    asked_home: StandInHome, asked: str, reply: str
) -> None:
    """It said "I don't know: I have nothing stored about that." as though it might be."""
    assert asked_home.say(asked).text == reply
    assert asked_home.changed() == set()


def test_a_question_with_no_home_word_is_not_about_a_device(asked_home: StandInHome) -> None:
    reply = asked_home.say("is the dog fed")
    assert reply.text == "I don't know: I have nothing stored about that."


def test_the_fan_down_in_the_office_the_room_said_last(home: Home) -> None:
    """ "turn the fan down in the office" fell to the classifier: "I don't have anything
    called the fan"."""
    reply = home.say("turn the fan down a bit in the office")
    assert reply.outcome.value == "done", reply.text
    assert home.standin.states["fan.office_fan"]["attributes"]["percentage"] < 100
    home.say("turn the fan up in the office")
    assert home.standin.states["fan.office_fan"]["attributes"]["percentage"] == 100
