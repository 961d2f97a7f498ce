"""Home acts as configuration: the devices table, templates checked at load, the grammar,
and hostile slot values refused before anything reaches a real broker."""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path

import pytest

from mavend import paths
from mavend.config import ActSlot, ActSpec, ActsSettings, Settings, parse_settings
from mavend.errors import ConfigError
from mavend.handlers import Outcome
from mavend.home import templates
from mavend.router.decision import Intent
from mavend.router.grammar import CommandGrammar
from tests.home_kit import Listener, running_broker
from tests.state_kit import kit_router, make_assistant, real_clock

ROOT = Path(__file__).resolve().parent.parent


def example_home() -> str:
    """config.example.toml's example home, uncommented, as a user would."""
    text = (ROOT / "config.example.toml").read_text()
    block = text[text.index("# --- An example home") : text.index("# --- end of the example home")]
    # Commented-out TOML (a table header or a key) comes back; the prose stays out.
    code = re.compile(r"# (\[|[a-z_.]+ = )")
    return "\n".join(line[2:] for line in block.splitlines() if code.match(line))


def test_the_example_home_parses_and_generates_the_device_acts() -> None:
    settings = parse_settings(example_home(), "example home")
    names = [a.name for a in settings.acts.allow]
    assert names == [
        "heating_set",
        "heating_mqtt",
        "device_on",
        "device_off",
        "device_state",
        "light_set",
        "lights_on",
        "lights_off",
        "device_which",
        "device_up",
        "device_down",
    ]
    device_on = settings.acts.get("device_on")
    assert device_on is not None and device_on.kind == "device"
    # Names and aliases, each kind said both ways (a shared alias that ends in a kind is
    # one: "the desk lamps"), what each is called inside its room ("the ceiling" in the
    # kitchen), a ceiling light's "big light", and "everything".
    assert device_on.slots["device"].values == (
        "bedside lamp", "big light", "big lights", "ceiling", "desk lamp", "desk lamps",
        "everything", "kettle", "kitchen ceiling", "kitchen spots", "lamp", "lamps", "light",
        "lights", "main light", "main lights", "overhead light", "overhead lights", "plug",
        "plugs", "socket", "sockets", "spots", "study lamp", "top light", "top lights",
    )  # fmt: skip
    assert device_on.slots["room"].values == ("bedroom", "kitchen", "study")
    assert device_on.slots["room"].optional
    assert [(f.name, f.aliases, f.rooms) for f in settings.floors] == [
        ("ground floor", ("downstairs",), ("kitchen", "study"))]
    assert {"downstairs", "on the ground floor"} <= set(device_on.slots["scope"].values)
    assert settings.acts.get("light_set").slots["brightness"] == ActSlot(type="int", min=0, max=100)


def test_a_new_lamp_is_one_entry_and_routes_at_stage_0() -> None:
    settings = parse_settings(
        '[[devices]]\nname = "reading lamp"\naliases = ["lamp"]\nroom = "study"\n'
        'mqtt = "zigbee2mqtt/reading_lamp"\n'
    )
    router = kit_router(settings, real_clock())
    decision = router.route("turn on the lamp in the study")
    assert (decision.stage, decision.intent, decision.slots.fn) == (0, Intent.ACT, "device_on")
    assert decision.slots.args == {"device": "lamp", "room": "study"}
    assert decision.clarify is None


@pytest.mark.parametrize(
    ("sentence", "fn", "args"),
    [
        ("switch off the kitchen lights", "lights_off", {"room": "kitchen"}),
        ("turn on the lights in the bedroom", "lights_on", {"room": "bedroom"}),
        ("turn on the lights", "lights_on", {}),
        ("it's dark in here", "lights_on", {}),
        ("it's getting dark in the study", "lights_on", {"room": "study"}),
        ("could you turn the desk lamp off please", "device_off", {"device": "desk lamp"}),
        ("set the study lamp to 40 percent", "light_set",
         {"device": "study lamp", "brightness": "40"}),
        ("dim the kitchen ceiling to twenty percent", "light_set",
         {"device": "kitchen ceiling", "brightness": "20"}),
        ("is the kettle on", "device_state", {"device": "kettle"}),
        ("did i leave the kettle on", "device_state", {"device": "kettle"}),
        ("set the heating to 21 degrees", "heating_set", {"temperature": "21"}),
        # what routed before the home grammar still does
        ("set the volume to 30", "volume_set", {"level": "30"}),
        ("play the music", "media_play", {}),
        ("lock the screen", "lock_screen", {}),
    ],
)  # fmt: skip
def test_home_sentences_route_at_stage_0(sentence: str, fn: str, args: dict[str, str]) -> None:
    decision = kit_router(home_with_default_acts(), real_clock()).route(sentence)
    assert (decision.stage, decision.slots.fn, decision.slots.args) == (0, fn, args)


def home_with_default_acts() -> Settings:
    """The example home plus the default allowlist (media, volume, lock screen)."""
    home = parse_settings(example_home())
    acts = ActsSettings(allow=Settings().acts.allow + home.acts.allow)
    return Settings(**{**vars(home), "acts": acts})


def test_without_devices_the_home_grammar_changes_nothing() -> None:
    grammar = CommandGrammar.from_dir(paths.grammars_dir(), Settings().acts)
    assert not [n for n in grammar.intent_names if n.split(".")[1] in ("lights_on", "device_on")]
    assert grammar.match("turn on the lights") is None


BAD_CONFIGS = [
    (
        '[[acts.allow]]\nname = "x"\nkind = "mqtt"\ntopic = "a/b"\n'
        "payload = '{\"state\": {s}}'\nslots.s = { values = [\"ON\"] }\n",
        "acts.allow[0].payload", 5, "not valid JSON",
    ),
    ('[[acts.allow]]\nname = "x"\nkind = "mqtt"\ntopic = "a/#"\n', "acts.allow[0]", 1, "wildcard"),
    ('[[acts.allow]]\nname = "x"\nkind = "mqtt"\ntopic = "a/{room}"\n', "acts.allow[0]", 1,
     "does not define"),
    ('[[acts.allow]]\nname = "x"\nkind = "mqtt"\ntopic = "a/{r}"\n'
     'slots.r = { values = ["a/b"] }\n', "acts.allow[0]", 1, "cannot go into a topic"),
    ('[[acts.allow]]\nname = "x"\nkind = "homeassistant"\nservice = "light"\n'
     'entity_id = "light.a"\n', "acts.allow[0]", 1, "light.turn_on"),
    ('[[acts.allow]]\nname = "x"\nkind = "homeassistant"\nservice = "light.turn_on"\n'
     'entity_id = "{e}"\nslots.e = { values = ["a"] }\n', "acts.allow[0]", 1, "entity id"),
    ('[[acts.allow]]\nname = "x"\nargv = ["true"]\ntopic = "a"\n', "acts.allow[0]", 1,
     "keys of kind 'mqtt'"),
    ('[[devices]]\nname = "lamp"\nmqtt = "z/lamp"\nhomeassistant = "light.lamp"\n',
     "devices[0]", 1, "exactly one"),
    ('[[devices]]\nname = "lamp"\nmqtt = "z/+"\n', "devices[0]", 1, "wildcard"),
    ('[[devices]]\nname = "Lamp!"\nmqtt = "z/lamp"\n', "devices[0].name", 2, "pattern"),
    ('[[devices]]\nname = "kettle"\ntype = "plug"\ndimmable = true\nmqtt = "z/k"\n',
     "devices[0]", 1, "dimmable"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "key", "line", "message"), BAD_CONFIGS)
def test_bad_home_config_names_the_key_and_line(text: str, key: str, line: int, message: str):
    with pytest.raises(ConfigError) as info:
        parse_settings(text, "c.toml")
    assert f"c.toml:{line}: `{key}`" in str(info.value)
    assert message in str(info.value)


def test_duplicate_devices_and_generated_names_are_refused() -> None:
    twice = '[[devices]]\nname = "lamp"\nmqtt = "z/a"\n[[devices]]\nname = "lamp"\nmqtt = "z/b"\n'
    with pytest.raises(ConfigError, match="device names must be unique"):
        parse_settings(twice)
    clash = '[[acts.allow]]\nname = "device_on"\nargv = ["true"]\n' + twice.split("[[devices]]")[0]
    with pytest.raises(ConfigError, match="generated from"):
        parse_settings(clash + '[[devices]]\nname = "lamp"\nmqtt = "z/a"\n')


def test_json_payloads_are_built_not_concatenated() -> None:
    quote = 'say "hi"}, "state": "ON'
    rendered = templates.render_payload({"text": "{t}", "n": "{n}", "list": ["{t}"]},
                                        {"t": quote, "n": "7"}, frozenset({"n"}))  # fmt: skip
    assert json.loads(rendered) == {"text": quote, "n": 7, "list": [quote]}
    parsed = templates.render_payload('{"v": "{t}"}', {"t": 'a\\"b'}, frozenset())
    assert json.loads(parsed) == {"v": 'a\\"b'}
    assert templates.render_payload("{t}", {"t": "ON"}, frozenset()) == "ON"


# fuzz: hostile values against a real broker ----------------------------------------
FUZZ_ACT = ActSpec(
    name="say_to",
    kind="mqtt",
    topic="home/{room}/say",
    payload={"text": "{text}"},
    slots={
        "room": ActSlot(type="pattern", pattern=r"(?s).{1,5000}"),
        "text": ActSlot(type="pattern", pattern=r"(?s).{1,5000}"),
    },
)
HOSTILE = ["#", "+", "a/b", "kitchen/#", "+/+", "\x00", "a\x00b", "tab\there", "\x1b[2J",
           "line\nbreak", "\x7f", "x" * 4000, "\ud800"]  # fmt: skip


def _fuzz_values(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = 'abc /#+"\\{}\x00\x01\n\t\u00e9\u2603\x7f'
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(count)]


def test_hostile_slot_values_never_reach_the_broker(tmp_path: Path) -> None:
    with running_broker(tmp_path / "broker") as broker, Listener(broker.port) as listener:
        text = f'[mqtt]\nhost = "127.0.0.1"\nport = {broker.port}\nconfirm_timeout_s = 0.2\n'
        settings = parse_settings(text + f'[storage]\ndata_dir = "{tmp_path / "data"}"\n')
        settings = Settings(**{**vars(settings), "acts": ActsSettings(allow=(FUZZ_ACT,))})
        assistant = make_assistant(settings)
        acts = assistant.handler.acts
        expected: list[tuple[str, str]] = []
        for room in HOSTILE:  # each refused before anything is sent
            reply = acts.request(FUZZ_ACT, {"room": room, "text": "hello"})
            assert reply.outcome == Outcome.REFUSED, (room, reply)
            reply = acts.request(FUZZ_ACT, {"room": "kitchen", "text": room})
            if room not in ("#", "+", "a/b", "kitchen/#", "+/+"):  # fine in a JSON string
                assert reply.outcome == Outcome.REFUSED, (room, reply)
            else:
                expected.append(
                    ("home/kitchen/say", json.dumps({"text": room}, separators=(",", ":")))
                )
        for value in _fuzz_values(15, 300):
            reply = acts.request(FUZZ_ACT, {"room": value, "text": value})
            clean = value.strip() and not re.search(r"[#+/\x00-\x1f\x7f]", value.strip())
            assert (reply.outcome == Outcome.DONE) == bool(clean), (value, reply)
            if clean:
                topic = f"home/{value.strip()}/say"
                expected.append((topic, json.dumps({"text": value.strip()}, ensure_ascii=False,
                                                   separators=(",", ":"))))  # fmt: skip
        assistant.store.close()
        deadline = time.monotonic() + 5
        while len(listener.seen) < len(expected) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
    assert listener.seen == expected
    for _, payload in listener.seen:
        json.loads(payload)  # every payload that went out is valid JSON
