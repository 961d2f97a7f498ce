"""parse_list_command: the phrasings of a list command, and everything that is not one.

The parser is pure (no state): each case is the words as they reach it (normalized, the
wake word gone) and the command they must become, or None.
"""

from __future__ import annotations

import pytest

from mavend.lists import (
    SHOPPING,
    TODO,
    ListCommand,
    ListSplit,
    parse_list_command,
    split_list_command,
)
from mavend.router.grammar import normalize


def parsed(said: str, utterance: str = "") -> ListCommand | None:
    return parse_list_command(normalize(said), utterance=utterance)


@pytest.mark.parametrize(
    ("said", "name", "items"),
    [
        ("add eggs and milk to the shopping list", SHOPPING, ("eggs", "milk")),
        ("put bread on my list", "", ("bread",)),
        ("shopping list add apples", SHOPPING, ("apples",)),
        ("Can you add oat milk to my shopping list, please?", SHOPPING, ("oat milk",)),
        ("add call the plumber to my to-do list", TODO, ("call the plumber",)),
        ("stick batteries on the hardware store list", "hardware store", ("batteries",)),
        ("um could you uh put some eggs on the grocery list", SHOPPING, ("eggs",)),
        ("add a loaf of bread to the groceries list", SHOPPING, ("loaf of bread",)),
        ("add two pints of milk to the list", "", ("two pints of milk",)),
        ("pop tea bags on our list thanks", "", ("tea bags",)),
        ("write down bin bags on the shopping list", SHOPPING, ("bin bags",)),
        ("jot down sun cream on my packing list", "packing", ("sun cream",)),
        ("add go to the gym to my todo list", TODO, ("go to the gym",)),
        ("put pay the gas bill on the to do list", TODO, ("pay the gas bill",)),
        ("to my to do list add book the dentist", TODO, ("book the dentist",)),
        ("on the shopping list put yoghurt", SHOPPING, ("yoghurt",)),
        ("add mac and cheese and milk to the list", "", ("mac and cheese", "milk")),
        ("add salt and vinegar crisps to the list", "", ("salt and vinegar crisps",)),
        ("add salt and pepper to the shopping list", SHOPPING, ("salt", "pepper")),
        ("add fish and chips to my list", "", ("fish and chips",)),
        ("put milk back on the list", "", ("milk",)),
        ("add eggs milk and bread to my list", "", ("eggs", "milk", "bread")),
        ("add sandpaper to my tasks", TODO, ("sandpaper",)),
        ("Add cat food to the shopping list.", SHOPPING, ("cat food",)),
        ("could you please throw a bag of ice on the party list", "party", ("bag of ice",)),
        ("I want to add WD-40 to the hardware store list", "hardware store", ("wd 40",)),
        ("so um add er toilet roll to our list thanks", "", ("toilet roll",)),
        ("add screws to my hardware list", "hardware", ("screws",)),
    ],
)
def test_adds(said: str, name: str, items: tuple[str, ...]) -> None:
    assert parsed(said) == ListCommand("add", name, items)


def test_a_comma_in_the_raw_words_splits_items_the_normalized_text_runs_together() -> None:
    raw = "Hey Mava, add eggs, milk and bread to the list."
    said = "add eggs milk and bread to the list"
    assert parse_list_command(said, utterance=raw) == ListCommand(
        "add", "", ("eggs", "milk", "bread")
    )
    raw = "add oat milk, mac and cheese, and salt and pepper to my shopping list"
    assert parse_list_command(normalize(raw), utterance=raw) == ListCommand(
        "add", SHOPPING, ("oat milk", "mac and cheese", "salt", "pepper")
    )


@pytest.mark.parametrize(
    ("said", "items"),
    [
        ("add lemons limes and ginger to the list", ("lemons", "limes", "ginger")),
        ("add crackers cheese and grapes to the list", ("crackers", "cheese", "grapes")),
        ("add tea bags and oat milk to the list", ("tea bags", "oat milk")),
        ("add six eggs two tins of tomatoes and basil to the list",
         ("six eggs", "two tins of tomatoes", "basil")),
        ("add brussels sprouts and parsnips to the list", ("brussels sprouts", "parsnips")),
        ("add kitchen roll to the list", ("kitchen roll",)),
        ("add sports socks to the list", ("sports socks",)),
    ],
)
def test_a_list_said_without_commas_breaks_after_plural_nouns(
    said: str, items: tuple[str, ...]
) -> None:
    assert parsed(said) == ListCommand("add", "", items)


@pytest.mark.parametrize(
    ("said", "items"),
    [
        # Each was two items, the first two run together ("milk eggs").
        ("add milk eggs and bread to the list", ("milk", "eggs", "bread")),
        ("add coffee tea and sugar to the list", ("coffee", "tea", "sugar")),
        ("add orange juice milk and butter to the list", ("orange juice", "milk", "butter")),
        ("add cream cheese bagels and coffee to the list", ("cream cheese", "bagels", "coffee")),
        ("add two pints of milk bread and jam to the list",
         ("two pints of milk", "bread", "jam")),
        # One thing of two items' words stays one; a word not known breaks nothing.
        ("add milk chocolate and crisps to the list", ("milk chocolate", "crisps")),
        ("add rice milk and cereal to the list", ("rice milk", "cereal")),
        ("add chicken soup and garlic bread to the list", ("chicken soup", "garlic bread")),
        ("add washing up liquid and sponges to the list", ("washing up liquid", "sponges")),
    ],
)
def test_a_list_said_without_commas_breaks_between_everyday_items(
    said: str, items: tuple[str, ...]
) -> None:
    assert parsed(said) == ListCommand("add", "", items)


@pytest.mark.parametrize(
    ("said", "command"),
    [
        ("we're out of bin bags so stick them on the shopping list",
         ListCommand("add", SHOPPING, ("bin bags",))),
        ("there's no coffee left put it on the list", ListCommand("add", "", ("coffee",))),
        ("we've run out of rice and lentils put them on my list",
         ListCommand("add", "", ("rice", "lentils"))),
        ("actually we don't need the batteries any more take them off the list",
         ListCommand("remove", "", ("batteries",))),
        ("i don't need bread after all remove it from the shopping list",
         ListCommand("remove", SHOPPING, ("bread",))),
        ("we don't need bread", None),
        ("actually don't put bread on the list", None),
    ],
)
def test_the_item_named_before_the_command(said: str, command: ListCommand | None) -> None:
    assert parsed(said) == command


def test_to_do_items_split_only_between_two_phrases() -> None:
    assert parsed("add call mum and dad to my to do list") == ListCommand(
        "add", TODO, ("call mum and dad",)
    )
    assert parsed("add pack the car and water the plants to the to-do list") == ListCommand(
        "add", TODO, ("pack the car", "water the plants")
    )


@pytest.mark.parametrize(
    "said", ["add to the list", "add it to my shopping list", "put that on the list"]
)
def test_an_add_without_an_item_is_still_a_list_command_with_no_items(said: str) -> None:
    command = parsed(said)
    assert command is not None and command.action == "add" and command.items == ()


@pytest.mark.parametrize(
    ("said", "action", "name", "items"),
    [
        ("take milk off the list", "remove", "", ("milk",)),
        ("remove eggs from the shopping list", "remove", SHOPPING, ("eggs",)),
        ("delete bread from my list", "remove", "", ("bread",)),
        ("get rid of the batteries from the hardware store list", "remove", "hardware store",
         ("batteries",)),
        ("shopping list remove apples", "remove", SHOPPING, ("apples",)),
        ("take off eggs from the list", "remove", "", ("eggs",)),
        ("tick off eggs", "tick", "", ("eggs",)),
        ("cross milk off my shopping list", "tick", SHOPPING, ("milk",)),
        ("mark call the plumber as done", "tick", "", ("call the plumber",)),
        ("check off bread", "tick", "", ("bread",)),
        ("tick the eggs off", "tick", "", ("eggs",)),
        ("cross out the bin bags on the shopping list", "tick", SHOPPING, ("bin bags",)),
        ("mark milk as bought", "tick", "", ("milk",)),
        ("to do list tick off book the dentist", "tick", TODO, ("book the dentist",)),
        ("untick eggs", "untick", "", ("eggs",)),
        ("uncheck milk on the shopping list", "untick", SHOPPING, ("milk",)),
        ("mark the plumber as not done", "untick", "", ("plumber",)),
    ],
)
def test_removes_and_ticks(said: str, action: str, name: str, items: tuple[str, ...]) -> None:
    assert parsed(said) == ListCommand(action, name, items)


@pytest.mark.parametrize(
    ("said", "name"),
    [
        ("what's on my shopping list", SHOPPING),
        ("read me my to do list", TODO),
        ("what do i need to buy", SHOPPING),
        ("whats on the list", ""),
        ("what's left on my to-do list", TODO),
        ("what is on the hardware store list right now", "hardware store"),
        ("tell me what's on the grocery list", SHOPPING),
        ("read out my packing list", "packing"),
        ("what do we need from the shops", SHOPPING),
        ("is there anything on my shopping list", SHOPPING),
        ("how many items are on my shopping list", SHOPPING),
        ("what's on my to do list for today", TODO),
        ("uh what's on the um shopping list again", SHOPPING),
        ("okay so what do we need to get from the supermarket", SHOPPING),
        ("my shopping list", SHOPPING),
        ("the list", ""),
        # the ways people ask to see or hear one
        ("bring up my grocery list", SHOPPING),
        ("um can i see the packing list", "packing"),
        ("let me hear the to do list", TODO),
        ("display our shopping list please", SHOPPING),
        ("could i hear what's on the hardware store list", "hardware store"),
        ("have a look at the to do list", TODO),
    ],
)
def test_reads(said: str, name: str) -> None:
    command = parsed(said)
    assert command == ListCommand("read", name)
    assert command.is_question


def test_is_x_on_the_list_asks_about_that_item() -> None:
    assert parsed("is milk on my shopping list") == ListCommand("read", SHOPPING, ("milk",))
    # "did i add eggs to the list" asks whether they are on it (it was left to the notes,
    # which know nothing of lists: "I have nothing stored about that")
    assert parsed("did i add eggs to the list") == ListCommand("read", "", ("eggs",))
    assert parsed("have we put milk on the shopping list") == ListCommand(
        "read", SHOPPING, ("milk",))


@pytest.mark.parametrize(
    "said", ["what lists do i have", "which lists have i got", "show me my lists", "my lists"]
)
def test_which_lists(said: str) -> None:
    command = parsed(said)
    assert command == ListCommand("lists") and command.is_question


@pytest.mark.parametrize(
    ("said", "name"),
    [
        ("clear the shopping list", SHOPPING),
        ("empty my to-do list", TODO),
        ("delete everything on my list", ""),
        ("take everything off the list", ""),
        ("remove all the items from the hardware store list", "hardware store"),
        ("wipe the packing list", "packing"),
        ("clear out my grocery list", SHOPPING),
    ],
)
def test_clears(said: str, name: str) -> None:
    command = parsed(said)
    assert command == ListCommand("clear", name)
    assert not command.is_question


@pytest.mark.parametrize(
    ("said", "name"),
    [
        ("make a new list called hardware store", "hardware store"),
        ("start a packing list", "packing"),
        ("create a list for the party", "party"),
        ("set up a new camping list", "camping"),
        ("make a list", ""),
    ],
)
def test_creates(said: str, name: str) -> None:
    assert parsed(said) == ListCommand("create", name)


@pytest.mark.parametrize(
    ("said", "split"),
    [
        (
            "put crumpets on the shopping list and then set a timer for twenty minutes",
            ListSplit(ListCommand("add", SHOPPING, ("crumpets",)), "set a timer for twenty minutes",
                      list_first=True),
        ),
        (
            "lock the screen and tick off phone the bank",
            ListSplit(ListCommand("tick", "", ("phone the bank",)), "lock the screen",
                      list_first=False),
        ),
        (
            "add jam and honey to my list and what's the time",
            ListSplit(ListCommand("add", "", ("jam", "honey")), "what's the time", list_first=True),
        ),
        ("add jam to the list and honey", None),  # more items, not a second request
        ("add jam and honey to the list", None),  # one list command: parse_list_command's
        ("remind me at six and add jam to the list", None),  # may be one reminder
        ("remind me to put jam on the list and call dad", None),
        ("turn the volume up and lock the screen", None),
    ],
)
def test_a_list_command_joined_to_another_request(said: str, split: ListSplit | None) -> None:
    assert split_list_command(normalize(said)) == split


@pytest.mark.parametrize(
    "said",
    [
        # reminders and timers
        "remind me to add milk to the list at 5",
        "remind me to buy eggs tomorrow",
        "set a reminder to check the shopping list at six",
        "set a timer for ten minutes",
        "add a reminder to my list",
        "mark it as done",
        # notes and memories
        "note that the shopping list is on the fridge",
        "make a note to add milk to the shopping list",
        "remember that the list is in the drawer",
        "take a note the plumber comes on monday",
        # facts the user logs
        "i bought milk",
        "i added eggs to the list",
        "i've put the list on the fridge",
        # negations
        "don't add milk to the list",
        "do not clear the shopping list",
        "never mind the shopping list",
        # questions that are not list commands
        "what did i put on my list yesterday",
        "when did i last clear the shopping list",
        "what's on tv tonight",
        "what's on my calendar today",
        "what do i need to do today",
        "should i add milk to the list",
        # acts and other rooms' lists
        "add this song to my playlist",
        "put the kettle on",
        "add oil to the car",
        "turn the volume up",
        "lock the screen",
        "check the weather",
        "delete the last note",
        "remove the reminder about the dentist",
        "add an appointment to my calendar",
        "play my workout playlist",
        "list my reminders",
        "what reminders do i have",
        # chat
        "tell me a joke",
        "what's the time",
        "hello",
        "",
    ],
)
def test_not_list_commands(said: str) -> None:
    assert parsed(said) is None


@pytest.mark.parametrize(
    ("said", "items"),
    [
        ("i'm out of toothpaste", ("toothpaste",)),
        ("we're running low on coffee", ("coffee",)),
        ("we've run out of milk and eggs", ("milk", "eggs")),
        ("i'm nearly out of shampoo", ("shampoo",)),
        ("we're out of breath", None),
        ("i'm out of the office tomorrow", None),
        ("we're out of milk so remind me to get some tomorrow", None),
    ],
)
def test_what_ran_out_goes_on_the_shopping_list(said: str, items: tuple[str, ...] | None) -> None:
    command = parse_list_command(said)
    assert (command.items if command else None) == items
    assert command is None or (command.action, command.list_name) == ("add", "shopping")


@pytest.mark.parametrize(
    ("word", "forms"),
    [("called", ("call", "cal", "calle")), ("tidied", ("tidy", "tidi", "tidie")),
     ("stopped", ("stopp", "stop", "stoppe")), ("baked", ("bak", "bake")), ("paid", ("pay",)),
     ("water", ())],
)
def test_a_past_verb_reads_as_the_task_would_say_it(word: str, forms: tuple[str, ...]) -> None:
    from mavend.language.verbs import present_forms

    assert present_forms(word) == forms


@pytest.mark.parametrize(
    ("said", "items"),
    [
        ("we need eggs", ("eggs",)),  # it was kept as a note, "we need eggs"
        ("we need more milk and bread", ("milk", "bread")),
        ("so we still need toilet roll", ("toilet roll",)),
        ("we need a plumber", None),  # no thing a shop sells: left to the router
        ("we need to talk", None),
        ("i need coffee", None),  # the speaker's need, not the household's
        ("we need a holiday", None),
    ],
)
def test_what_the_household_needs_goes_on_the_shopping_list(
    said: str, items: tuple[str, ...] | None
) -> None:
    found = parse_list_command(said)
    assert (found.items if found else None) == items
    if found:
        assert found == ListCommand("add", SHOPPING, items)


@pytest.mark.parametrize(
    ("said", "command"),
    [  # each was kept as a note, "add milk to the list but not eggs"
        ("add milk to the list but not eggs", ListCommand("add", "", ("milk",))),
        ("add milk and bread to the shopping list but not butter",
         ListCommand("add", SHOPPING, ("milk", "bread"))),
        ("remind me to buy milk but not eggs", None),  # no list command at all
    ],
)
def test_but_not_leaves_the_other_off(said: str, command: ListCommand | None) -> None:
    assert parse_list_command(said) == command
