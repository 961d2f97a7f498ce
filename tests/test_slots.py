from __future__ import annotations

import pytest

from mavend.router.slots import extract_fact, first_number, parse_number


@pytest.mark.parametrize(
    ("text", "key", "value"),
    [
        ("i drank two glasses of water", "water", "two glasses"),
        ("I had a coffee", "coffee", "1"),
        ("i just ate 3 slices of pizza", "pizza", "3 slices"),
        ("I slept six hours", "sleep", "six hours"),
        ("my weight is 80 kilos", "weight", "80 kilos"),
        ("I really like jazz", "likes", "jazz"),
        ("call me dad", "name", "dad"),
        ("i watered the plants", "watered", "the plants"),
        ("what a lovely day", "", ""),
    ],
)
def test_facts_get_a_key_and_a_value(text: str, key: str, value: str) -> None:
    assert extract_fact(text) == (key, value)


@pytest.mark.parametrize(
    ("text", "number"),
    [("40", 40), ("forty five", 45), ("a hundred", 100), ("twenty", 20), ("lots", None)],
)
def test_parse_number(text: str, number: int | None) -> None:
    assert parse_number(text) == number


def test_first_number_in_a_sentence() -> None:
    assert first_number("set the volume to thirty five percent please") == 35
    assert first_number("volume 7") == 7
    assert first_number("louder please") is None
