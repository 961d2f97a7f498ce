"""The LLM router's prompt with a home of 10 to 200 devices (issue 23): the fixed prompt
does not grow with the devices (their names are retrieved for each request instead), and
the retrieved names are the ones the words can mean."""

from __future__ import annotations

from mavend.config import parse_settings
from mavend.router import prompt

ROOMS = ["kitchen", "hall", "study", "loft", "den", "porch", "cellar", "attic"]
KINDS = [("lamp", "light"), ("blinds", "cover"), ("fan", "fan"), ("speaker", "media_player"),
         ("heater plug", "plug")]  # fmt: skip


def home(devices: int):
    lines = []
    for n in range(devices):
        room = ROOMS[n % len(ROOMS)]
        kind, type_ = KINDS[(n // len(ROOMS)) % len(KINDS)]
        number = n // (len(ROOMS) * len(KINDS))
        name = f"{room} {kind}" + (f" {number + 1}" if number else "")
        lines += [
            "[[devices]]",
            f'name = "{name}"',
            f'room = "{room}"',
            f'type = "{type_}"',
            f'homeassistant = "{type_ if type_ != "plug" else "switch"}.e{n}"',
        ]
    return parse_settings("\n".join(lines) + "\n")


def test_the_fixed_prompt_does_not_grow_with_the_devices() -> None:
    # 40 devices hold every kind in every room once; 200 hold each five times.
    small, big = home(40), home(200)
    text_small, text_big = prompt.system_text(small.acts), prompt.system_text(big.acts)
    assert "kitchen lamp" not in text_big and "cellar speaker 3" not in text_big
    assert text_big == text_small
    # The home's device and room args are described once, not in each of ~20 functions.
    assert text_big.count("one of the device names given with the request") == 1


def test_the_names_a_request_can_mean_go_with_it() -> None:
    settings = home(200)
    content = prompt.user_content("close the blinds in the study", "", settings.acts)
    listed = content.splitlines()[0]
    assert listed.startswith("(device names: study blinds")
    assert len(listed.split(", ")) <= prompt.RETRIEVED_VALUES
    assert content.endswith("close the blinds in the study")
    absent = prompt.user_content("open the skylight", "", settings.acts)
    assert absent.splitlines()[0] == (
        "(device names: none of the home's devices matches these words)"
    )
    misheard = prompt.user_content("turn on the cellar speker", "", settings.acts)
    assert "cellar speaker" in misheard.splitlines()[0]


def test_without_devices_the_request_goes_alone() -> None:
    settings = parse_settings("")
    assert prompt.user_content("turn the volume down", "", settings.acts) == "turn the volume down"


def test_a_models_device_must_be_one_the_words_name() -> None:
    """The 0.5B model routed "kill the music in the gym" to device_stop on the gym lamp
    (bench/home_llm_latency.py): the device a model picks is taken only when said."""
    from datetime import datetime

    from mavend.router.decision import Intent
    from mavend.router.slots import SlotExtractor, SlotHints

    settings = home(200)
    slots = SlotExtractor(settings.acts)
    now = datetime(2026, 12, 3, 12, 0)

    def extract(text: str, device: str):
        hints = SlotHints(fn="device_stop", fn_from_model=True, args={"device": device})
        return slots.extract(Intent.ACT, text, now, hints)

    wrong = extract("kill the music in the den", "den lamp")
    assert "device" not in wrong.slots.args and wrong.question.startswith("To stop")
    right = extract("stop the den speaker", "den speaker")
    assert right.slots.args == {"device": "den speaker"} and right.question == ""
    misheard = extract("stop the den speker", "den speaker")
    assert misheard.slots.args == {"device": "den speaker"}


def test_a_longer_name_may_be_said_short() -> None:
    """ "the den heater" for the den heater plug, as a model may name it; never a word of
    a two-word name alone ("the den" is not the den lamp)."""
    from datetime import datetime

    from mavend.router.decision import Intent
    from mavend.router.slots import SlotExtractor, SlotHints

    slots = SlotExtractor(home(200).acts)
    now = datetime(2026, 12, 3, 12, 0)

    def extract(text: str, device: str) -> dict[str, str]:
        hints = SlotHints(fn="device_on", fn_from_model=True, args={"device": device})
        return slots.extract(Intent.ACT, text, now, hints).slots.args

    assert extract("it's cold in the den put the den heater on", "den heater plug") == {
        "device": "den heater plug"
    }
    assert extract("it's dark in the den", "den lamp") == {}
