"""A list asked about the way people ask: "do we need bananas", "my christmas list".

Found by hand: "do i need bananas" (bananas on the shopping list) got a model's "No, you
don't need bananas."; "what's on my christmas list" (the list is "christmas presents")
got "You don't have a christmas list." Judged by the reply's facts against the rows.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mavend.lists.parse import parse_list_command
from tests.state_kit import kit_settings, make_assistant


@pytest.mark.parametrize(("said", "items"), [
    ("do we need bananas", ("bananas",)),
    ("do i still need milk and eggs", ("milk", "eggs")),
    ("do we need any bread from the shops", ("bread",)),
])
def test_do_we_need_asks_the_shopping_list(said: str, items: tuple[str, ...]) -> None:
    found = parse_list_command(said)
    assert found is not None and (found.action, found.list_name, found.items) == (
        "read", "shopping", items)


@pytest.mark.parametrize("said", ["do i need an umbrella", "do i need a coat today",
                                  "do i need to call the plumber", "do we need anything"])
def test_what_to_wear_or_do_is_no_shopping_question(said: str) -> None:
    assert parse_list_command(said) is None


def test_the_answer_is_what_the_list_holds(tmp_path: Path) -> None:
    helper = make_assistant(kit_settings(tmp_path))
    helper.handle_text("add bananas to the shopping list")
    assert helper.handle_text("do i need bananas").reply.text == (
        "Yes, bananas are on your shopping list.")
    no = helper.handle_text("do we need apples").reply.text
    assert no.startswith("No") and "apples" in no, no


def test_a_list_said_short_is_the_one_whose_name_holds_it(tmp_path: Path) -> None:
    helper = make_assistant(kit_settings(tmp_path))
    helper.handle_text("start a new list called christmas presents")
    helper.handle_text("add a scarf for mum and socks for dad to the christmas presents list")
    read = helper.handle_text("what's on my christmas list").reply.text
    assert read == "Your christmas presents list has 2 items: scarf for mum and socks for dad."
    helper.handle_text("start a new list called christmas food")
    # two lists hold "christmas": said short, it names neither
    assert "You don't have a christmas list" in helper.handle_text(
        "what's on my christmas list").reply.text
