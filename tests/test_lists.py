"""Lists end to end below the router: parse_list_command -> ListHandler -> a real SQLite file.

Every test asserts the tables afterwards (the rows of `lists` and `list_items`, their done
flags), not only the reply. The clear's yes/no goes through the real session table; one
test sends the "yes" through the real Assistant from another session.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

import pytest

from mavend.handlers.common import HandlerContext, Outcome, Reply, TurnContext
from mavend.handlers.confirm import confirm_key, pending_op
from mavend.lists import (
    DEFAULT_LIST,
    ListBook,
    ListInputError,
    parse_list_command,
)
from mavend.lists.book import MAX_ITEMS_PER_LIST
from mavend.lists.handler import ListHandler
from mavend.lists.items import MAX_ITEM_CHARS, MAX_ITEMS_PER_ADD
from mavend.router.grammar import normalize
from mavend.state.store import Store
from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant

LOCAL = TurnContext(session="local")


class Lists:
    """A real state file and the list handler on it; says things and reads the tables."""

    def __init__(self, tmp_path: Path):
        self.settings = kit_settings(tmp_path)
        self.store = Store.open(self.settings)
        self.clock = MovableClock(datetime(2026, 12, 2, 9, 30, tzinfo=TZ))
        self.ctx = HandlerContext(self.settings, self.store, TZ, self.clock)
        self.handler = ListHandler(self.ctx)
        self.path = self.settings.storage.database_path()

    def say(self, said: str, context: TurnContext | None = LOCAL) -> Reply:
        command = parse_list_command(normalize(said), utterance=said)
        assert command is not None, f"{said!r} is not read as a list command"
        return self.handler.command(command, context)

    def rows(self, name: str) -> list[tuple[str, bool]]:
        """(text, done) of the list's items in the order added, read from the file itself."""
        with sqlite3.connect(self.path) as conn:
            rows = conn.execute(
                "SELECT i.text, i.done FROM list_items i JOIN lists l ON l.id = i.list_id"
                " WHERE l.name = ? ORDER BY i.id",
                (name,),
            ).fetchall()
        return [(text, bool(done)) for text, done in rows]

    def names(self) -> list[str]:
        with sqlite3.connect(self.path) as conn:
            return [r[0] for r in conn.execute("SELECT name FROM lists ORDER BY id")]

    def open_items(self, name: str) -> list[str]:
        return [text for text, done in self.rows(name) if not done]


@pytest.fixture
def lists(tmp_path: Path) -> Lists:
    return Lists(tmp_path)


# adding -------------------------------------------------------------------
def test_a_first_add_makes_the_list_and_keeps_each_item_once(lists: Lists) -> None:
    reply = lists.say("add eggs and milk to the shopping list")
    assert reply.outcome == Outcome.DONE
    assert lists.names() == ["shopping"]
    assert lists.rows("shopping") == [("eggs", False), ("milk", False)]
    assert reply.data["list"] == "shopping" and len(reply.data["added"]) == 2
    again = lists.say("can you put milk on my shopping list please")
    assert "already" in again.text.lower() and "milk" in again.text
    assert again.data["added"] == [] and again.data["already"] == reply.data["added"][1:]
    assert lists.rows("shopping") == [("eggs", False), ("milk", False)]


def test_items_are_tidied_and_quantities_stay(lists: Lists) -> None:
    lists.say("add some eggs, a loaf of bread and two pints of milk to the grocery list")
    assert lists.open_items("shopping") == ["eggs", "loaf of bread", "two pints of milk"]
    lists.say("add Eggs to the list")  # case and plural do not make a new item
    assert lists.open_items("shopping") == ["eggs", "loaf of bread", "two pints of milk"]


def test_compounds_stay_one_item_and_salt_and_pepper_is_two(lists: Lists) -> None:
    lists.say("add mac and cheese and salt and pepper to the shopping list")
    lists.say("stick salt and vinegar crisps on the shopping list")
    assert lists.open_items("shopping") == [
        "mac and cheese",
        "salt",
        "pepper",
        "salt and vinegar crisps",
    ]


def test_a_new_quantity_replaces_the_old_one_instead_of_a_duplicate(lists: Lists) -> None:
    lists.say("add milk to the shopping list")
    reply = lists.say("add two pints of milk to the shopping list")
    assert lists.rows("shopping") == [("two pints of milk", False)]
    assert "two pints of milk" in reply.text


def test_named_lists_are_kept_apart(lists: Lists) -> None:
    lists.say("add call the plumber to my to do list")
    lists.say("stick batteries on the hardware store list")
    lists.say("put bread on the shopping list")
    lists.say("add book the dentist to my tasks")
    assert lists.names() == ["to-do", "hardware store", "shopping"]
    assert lists.open_items("to-do") == ["call the plumber", "book the dentist"]
    assert lists.open_items("hardware store") == ["batteries"]
    assert lists.open_items("shopping") == ["bread"]


def test_an_unnamed_list_is_the_only_one_else_the_default(lists: Lists) -> None:
    lists.say("add tent pegs to the packing list")
    lists.say("add a torch to my list")  # one list exists: that one
    assert lists.open_items("packing") == ["tent pegs", "torch"]
    lists.say("add call the bank to the to do list")
    lists.say("put eggs on my list")  # two lists: the default (shopping)
    assert DEFAULT_LIST == "shopping"
    assert lists.open_items("shopping") == ["eggs"]
    assert lists.open_items("packing") == ["tent pegs", "torch"]


# taking off, ticking --------------------------------------------------------
def test_a_removed_item_never_comes_back(lists: Lists) -> None:
    lists.say("add eggs, milk and bread to the shopping list")
    reply = lists.say("take milk off the list")
    assert reply.data["list"] == "shopping" and len(reply.data["ids"]) == 1
    assert lists.rows("shopping") == [("eggs", False), ("bread", False)]
    read = lists.say("what's on my shopping list")
    assert "milk" not in read.text
    assert read.text == "Your shopping list has 2 items: eggs and bread."


def test_ticked_items_are_read_back_apart(lists: Lists) -> None:
    lists.say("add eggs, milk, bread and butter to the shopping list")
    lists.say("cross butter off my shopping list")
    assert lists.rows("shopping") == [
        ("eggs", False),
        ("milk", False),
        ("bread", False),
        ("butter", True),
    ]
    with sqlite3.connect(lists.path) as conn:
        done_at = conn.execute("SELECT done_at FROM list_items WHERE text = 'butter'").fetchone()
    assert done_at == ("2026-12-02T09:30:00+01:00",)  # the handler's clock, the user's zone
    reply = lists.say("whats on the list")
    assert reply.text == "Your shopping list has 3 items: eggs, milk and bread. Ticked off: butter."
    assert reply.outcome == Outcome.DONE
    lists.say("untick butter")
    assert lists.rows("shopping")[3] == ("butter", False)


def test_adding_a_ticked_item_puts_it_back_without_a_duplicate(lists: Lists) -> None:
    lists.say("add eggs to the shopping list")
    lists.say("tick off eggs")
    reply = lists.say("add eggs to the shopping list")
    assert lists.rows("shopping") == [("eggs", False)]
    assert "back" in reply.text


def test_ticking_finds_a_task_on_the_only_list_that_has_it(lists: Lists) -> None:
    lists.say("add eggs to the shopping list")
    lists.say("add call the plumber to my to do list")
    reply = lists.say("mark call the plumber as done")
    assert reply.data["list"] == "to-do"
    assert lists.rows("to-do") == [("call the plumber", True)]
    assert lists.rows("shopping") == [("eggs", False)]


def test_milk_is_not_oat_milk(lists: Lists) -> None:
    lists.say("add milk and oat milk to the shopping list")
    lists.say("take milk off the shopping list")
    assert lists.rows("shopping") == [("oat milk", False)]
    reply = lists.say("tick off milk")
    assert "Not on your shopping list: milk" in reply.text
    assert lists.rows("shopping") == [("oat milk", False)]


def test_a_core_match_and_a_misheard_spelling_find_the_item(lists: Lists) -> None:
    lists.say("add two pints of milk, broccoli and call the plumber to the shopping list")
    lists.say("remove milk from the shopping list")  # the quantity does not hide it
    lists.say("tick off brocoli")  # one letter misheard
    assert lists.rows("shopping") == [("broccoli", True), ("call the plumber", False)]


def test_fuzzy_never_bridges_two_different_things(lists: Lists) -> None:
    lists.say("add peas and rice to the shopping list")
    for said in ("tick off pears", "take ice off the list", "remove oat peas from the list"):
        reply = lists.say(said)
        assert "Nothing was changed" in reply.text
    assert lists.rows("shopping") == [("peas", False), ("rice", False)]


def test_two_candidates_ask_which_and_change_nothing(lists: Lists) -> None:
    lists.say("add a bag of carrots and a tin of carrots to the shopping list")
    assert lists.open_items("shopping") == ["bag of carrots", "tin of carrots"]
    reply = lists.say("tick off carrots")
    assert reply.outcome == Outcome.ASKED
    assert reply.text == "Which one: bag of carrots or tin of carrots? Nothing was changed."
    assert lists.rows("shopping") == [("bag of carrots", False), ("tin of carrots", False)]


def test_two_fuzzy_candidates_ask_which_and_change_nothing(lists: Lists) -> None:
    lists.say("add call jenny and call jenna to my to do list")
    assert lists.open_items("to-do") == ["call jenny", "call jenna"]
    reply = lists.say("mark call jenni as done")
    assert reply.outcome == Outcome.ASKED
    assert "call jenny or call jenna" in reply.text
    assert lists.rows("to-do") == [("call jenny", False), ("call jenna", False)]


def test_an_item_not_on_the_list_changes_nothing(lists: Lists) -> None:
    lists.say("add eggs and milk to the shopping list")
    for said in ("remove cheese from the shopping list", "tick off cheese"):
        reply = lists.say(said)
        assert reply.text == "Not on your shopping list: cheese. Nothing was changed."
        assert reply.error_class == "not_found"
    assert lists.rows("shopping") == [("eggs", False), ("milk", False)]


def test_taking_off_several_at_once(lists: Lists) -> None:
    lists.say("add eggs, milk, bread and jam to the shopping list")
    reply = lists.say("remove eggs and jam from the shopping list")
    assert lists.open_items("shopping") == ["milk", "bread"]
    assert len(reply.data["ids"]) == 2


# reading --------------------------------------------------------------------
def test_reading_an_empty_and_a_missing_list(lists: Lists) -> None:
    lists.say("make a new list called hardware store")
    assert lists.names() == ["hardware store"]
    assert lists.say("read me the hardware store list").text == (
        "Your hardware store list is empty."
    )
    reply = lists.say("what's on my packing list")
    assert reply.text == "You don't have a packing list. Your lists: hardware store."
    assert lists.names() == ["hardware store"]  # reading does not make a list
    clear = lists.say("clear the packing list")
    assert clear.text.startswith("You don't have a packing list.")


def test_a_long_list_is_spoken_as_the_count_and_the_first_few(lists: Lists) -> None:
    lists.say("add eggs, milk, bread, butter, jam, tea and rice to the shopping list")
    reply = lists.say("what do i need to buy")
    assert reply.text == (
        "Your shopping list has 7 items: eggs, milk, bread, butter, jam, tea and rice."
    )
    assert reply.spoken == (
        "Your shopping list has 7 items. The first 4: eggs, milk, bread and butter."
    )


def test_which_lists_and_is_it_on_the_list(lists: Lists) -> None:
    assert lists.say("what lists do i have").text == "You don't have any lists yet."
    lists.say("add eggs to the shopping list")
    lists.say("start a packing list")
    assert lists.say("what lists do i have").text == (
        "You have 2 lists: shopping (1 item) and packing (empty)."
    )
    assert lists.say("is eggs on my shopping list").text == (
        "Yes, eggs are on your shopping list."
    )
    assert lists.say("is milk on my shopping list").text == (
        "No, milk isn't on your shopping list."
    )


def test_whether_the_list_holds_a_thing_asked_the_ways_people_ask(lists: Lists) -> None:
    """ "do i have milk on my list" went to the facts ("I don't know"); each form reads
    the list, and changes nothing on it."""
    lists.say("add oat milk and tinned tomatoes to the shopping list")
    asked = {
        "do i have oat milk on my list": "Yes, oat milk is on your shopping list.",
        "have we already got tinned tomatoes on the shopping list":
            "Yes, tinned tomatoes are on your shopping list.",
        "have i got rice on the list": "No, rice isn't on your shopping list.",
        "is there any flour on the shopping list": "No, flour isn't on your shopping list.",
        "are crackers already on the list": "No, crackers aren't on your shopping list.",
        "do we still have oat milk on the shopping list":
            "Yes, oat milk is on your shopping list.",
    }
    for question, answer in asked.items():
        assert lists.say(question).text == answer, question
    assert lists.say("do we have anything on the list").text == (
        "Your shopping list has 2 items: oat milk and tinned tomatoes."
    )


def test_creating_a_list_that_exists_says_so(lists: Lists) -> None:
    lists.say("add sun cream to the packing list")
    reply = lists.say("start a packing list")
    assert reply.text == "You already have a packing list, with 1 item."
    assert lists.rows("packing") == [("sun cream", False)]
    assert lists.say("make a list").outcome == Outcome.ASKED


# clearing -------------------------------------------------------------------
def test_a_clear_asks_first_and_clears_only_the_items_asked_about(lists: Lists) -> None:
    lists.say("add eggs, milk and bread to the shopping list")
    lists.say("tick off bread")
    reply = lists.say("clear the shopping list")
    assert reply.outcome == Outcome.CONFIRM
    assert reply.text.startswith("Clear the shopping list (3 items)?")
    assert len(lists.rows("shopping")) == 3  # nothing cleared on the question
    lists.say("add butter to the shopping list")  # between the question and the yes
    pending = lists.ctx.session.pop(confirm_key("local"))
    assert pending is not None and pending_op(pending) == "lists.clear"
    done = lists.handler.confirmed(pending_op(pending), pending)
    assert done.outcome == Outcome.DONE
    assert lists.rows("shopping") == [("butter", False)]
    assert len(done.data["ids"]) == 3
    assert "butter" in done.text


def test_a_yes_from_another_session_does_not_clear(tmp_path: Path) -> None:
    """The question is asked in the kitchen; a "yes" said at the desk goes through the
    real Assistant and finds no question of its own."""
    assistant = make_assistant(kit_settings(tmp_path))
    handler = ListHandler(assistant.ctx)
    book = ListBook(assistant.ctx.store, TZ)
    handler.command(parse_list_command("add eggs and milk to the shopping list"), None)
    kitchen = TurnContext(session="satellite:kitchen")
    asked = handler.command(parse_list_command("clear the shopping list"), kitchen)
    assert asked.outcome == Outcome.CONFIRM
    turn = assistant.handle_text("yes", session="local")
    assert turn.decision is None or turn.decision.decided_by != "confirmation"
    assert [i.text for i in book.items("shopping") or []] == ["eggs", "milk"]
    # The kitchen's question is still waiting, for the kitchen.
    pending = assistant.ctx.session.pop(confirm_key("satellite:kitchen"))
    assert pending is not None
    handler.confirmed(pending_op(pending), pending)
    assert book.items("shopping") == []


def test_clearing_an_empty_list_does_not_ask(lists: Lists) -> None:
    lists.say("start a packing list")
    reply = lists.say("empty my packing list")
    assert reply.text == "Your packing list is already empty." and reply.outcome == Outcome.DONE
    assert lists.ctx.session.get(confirm_key("local")) is None


def test_a_yes_to_another_rooms_op_changes_nothing(lists: Lists) -> None:
    lists.say("add eggs to the shopping list")
    reply = lists.handler.confirmed("lists.rename", {"op": "lists.rename", "list": "shopping"})
    assert reply.outcome == Outcome.REFUSED
    assert lists.rows("shopping") == [("eggs", False)]


# bad input ------------------------------------------------------------------
def test_an_item_over_the_limit_is_refused_and_nothing_is_written(lists: Lists) -> None:
    lists.say("add eggs to the shopping list")
    huge = "very " * 400 + "long thing"
    reply = lists.say(f"add milk and {huge} to the shopping list")
    assert reply.outcome == Outcome.REFUSED and reply.error_class == "bad_input"
    assert f"up to {MAX_ITEM_CHARS}" in reply.text and "Nothing was added" in reply.text
    assert lists.rows("shopping") == [("eggs", False)]  # not even the milk


def test_too_many_items_at_once_are_refused_whole(lists: Lists) -> None:
    many = " and ".join(f"thing{n}" for n in range(MAX_ITEMS_PER_ADD + 15))
    reply = lists.say(f"add {many} to the shopping list")
    assert reply.outcome == Outcome.REFUSED
    assert f"{MAX_ITEMS_PER_ADD + 15} items" in reply.text
    assert lists.names() == []  # nothing half-written, not even the list


def test_an_empty_item_asks_what(lists: Lists) -> None:
    for said in ("add to the list", "add it to my shopping list"):
        reply = lists.say(said)
        assert reply.outcome == Outcome.ASKED and "What should I add" in reply.text
    assert lists.names() == []


def test_control_characters_are_stripped_from_items(lists: Lists) -> None:
    book = ListBook(lists.store, TZ)
    result = book.add("shopping", ["oat\x00 milk\x1b", "\u200bbread\n"])
    assert [i.text for i in result.added] == ["oat milk", "bread"]
    assert lists.rows("shopping") == [("oat milk", False), ("bread", False)]


def test_the_book_itself_refuses_bad_items_and_writes_nothing(lists: Lists) -> None:
    book = ListBook(lists.store, TZ)
    for items in (["x" * 2000], [f"thing {n}" for n in range(MAX_ITEMS_PER_ADD + 1)], ["\x07"]):
        with pytest.raises(ListInputError):
            book.add("shopping", items)
    assert lists.names() == []


def test_a_full_list_refuses_the_whole_add(lists: Lists) -> None:
    book = ListBook(lists.store, TZ)
    for start in range(0, MAX_ITEMS_PER_LIST, MAX_ITEMS_PER_ADD):
        book.add("shopping", [f"thing {n}" for n in range(start, start + MAX_ITEMS_PER_ADD)])
    assert len(lists.rows("shopping")) == MAX_ITEMS_PER_LIST
    reply = lists.say("add eggs and milk to the shopping list")
    assert reply.outcome == Outcome.REFUSED and "full" in reply.text
    assert len(lists.rows("shopping")) == MAX_ITEMS_PER_LIST
    assert "eggs" not in lists.open_items("shopping")


def test_a_failing_write_leaves_no_half_add(lists: Lists) -> None:
    """A multi-item add is one transaction: a constraint failure on the third insert
    (a trigger the test adds to the real file) rolls back the first two."""
    with sqlite3.connect(lists.path) as conn:
        conn.execute(
            "CREATE TRIGGER no_bread BEFORE INSERT ON list_items WHEN NEW.text = 'bread'"
            " BEGIN SELECT RAISE(ABORT, 'bread refused'); END"
        )
    lists.say("add jam to the shopping list")
    with pytest.raises(Exception, match="bread refused"):
        lists.say("add eggs, milk and bread to the shopping list")
    assert lists.rows("shopping") == [("jam", False)]
