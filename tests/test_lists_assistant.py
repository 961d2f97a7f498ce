"""Lists through the real Assistant: stage 0 reads the command before the router, the turn
log records it as a note or a query, and the clear's yes counts only from the session asked.
End state read from the SQLite file itself."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant


def _items(path: Path) -> list[tuple[str, str, int]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(
            "SELECT l.name, i.text, i.done FROM list_items i JOIN lists l ON l.id = i.list_id"
            " ORDER BY i.id"
        ).fetchall()


def test_lists_through_the_assistant(tmp_path: Path) -> None:
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    db = settings.storage.database_path()
    turn = a.handle_text("Hey Jarvis, add eggs milk and bread to the shopping list.")
    assert turn.decision.decided_by == "list-command" and turn.decision.intent == "note"
    assert _items(db) == [
        ("shopping", "eggs", 0),
        ("shopping", "milk", 0),
        ("shopping", "bread", 0),
    ]
    assert a.handle_text("cross milk off my shopping list").reply.outcome == "done"
    read = a.handle_text("what's on my shopping list?")
    assert read.decision.intent == "query"
    assert read.reply.text == "Your shopping list has 2 items: eggs and bread. Ticked off: milk."
    assert a.handle_text("clear the shopping list").reply.outcome == "confirm"
    assert a.handle_text("yes", session="satellite:kitchen").decision.decided_by != "confirmation"
    assert len(_items(db)) == 3
    yes = a.handle_text("yes")
    assert yes.decision.decided_by == "confirmation"
    assert yes.reply.text == "Cleared your shopping list: 3 items taken off."
    assert _items(db) == []
    with sqlite3.connect(db) as conn:
        intents = [r[0] for r in conn.execute("SELECT intent FROM turns ORDER BY id")]
    assert intents[:3] == ["note", "note", "query"]


def test_reminders_and_notes_about_lists_are_not_list_commands(tmp_path: Path) -> None:
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    for said in (
        "remind me to add milk to the list at 5 pm",
        "note that the shopping list is on the fridge",
    ):
        turn = a.handle_text(said)
        assert turn.decision is not None and turn.decision.decided_by != "list-command"
    assert _items(settings.storage.database_path()) == []


def test_a_list_command_and_a_timer_in_one_breath(tmp_path: Path) -> None:
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    turn = a.handle_text("put crumpets on the shopping list and then set a timer for 20 minutes")
    assert _items(settings.storage.database_path()) == [("shopping", "crumpets", 0)]
    pending = a.ctx.reminders.pending()
    assert len(pending) == 1 and pending[0].kind == "timer"
    assert "crumpets" in turn.reply.text and turn.reply.outcome == "done"


def test_commas_said_in_a_typed_request_separate_items(tmp_path: Path) -> None:
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    a.handle_text("add coffee, sugar and tea bags to the shopping list")
    assert [t for _, t, _ in _items(settings.storage.database_path())] == [
        "coffee", "sugar", "tea bags",
    ]


def test_and_bread_after_an_add_goes_on_the_same_list(tmp_path: Path) -> None:
    clock = MovableClock(datetime(2026, 12, 2, 10, 0, tzinfo=TZ))
    settings = kit_settings(tmp_path)
    a = make_assistant(settings, clock=clock)
    db = settings.storage.database_path()
    a.handle_text("add eggs to the shopping list")
    assert a.handle_text("and bread").decision.decided_by == "list-command"
    a.handle_text("oh and oat milk too")
    a.handle_text("i need washing up liquid too")  # was the item "i need washing up liquid"
    assert a.handle_text("oh and i need to call mum too").decision.decided_by != "list-command"
    a.handle_text("add call the plumber to my to do list")
    a.handle_text("and book the dentist")
    assert _items(db) == [
        ("shopping", "eggs", 0), ("shopping", "bread", 0), ("shopping", "oat milk", 0),
        ("shopping", "washing up liquid", 0),
        ("to-do", "call the plumber", 0), ("to-do", "book the dentist", 0),
    ]
    # Not items: a request of its own, a question; and not after a read or the window.
    for said in ("and set a timer for 5 minutes", "and what time is it"):
        assert a.handle_text(said).decision.decided_by != "list-command", said
    a.handle_text("what's on my shopping list")
    assert a.handle_text("and jam").decision.decided_by != "list-command"
    a.handle_text("add jam to the shopping list")
    clock.at += timedelta(seconds=settings.conversation.continuation_s + 1)
    assert a.handle_text("and honey").decision.decided_by != "list-command"
    assert len(_items(db)) == 7


def test_a_new_list_takes_its_first_items_and_it_means_that_list(tmp_path: Path) -> None:
    """"start a shopping list" then "add apples bananas and pears to it" was a note
    reading "add apples bananas and pears to it"; "create a packing list with passport
    and charger" was a note too. End state: the items, on the lists meant."""
    clock = MovableClock(datetime(2026, 12, 2, 10, 0, tzinfo=TZ))
    settings = kit_settings(tmp_path)
    a = make_assistant(settings, clock=clock)
    db = settings.storage.database_path()
    assert a.handle_text("start a shopping list").reply.text.startswith("I've made a new")
    added = a.handle_text("add apples bananas and pears to it")
    assert added.decision.decided_by == "list-command", added.decision
    made = a.handle_text("create a packing list with passport and charger").reply
    assert made.text == (
        "I've made a new packing list. Added passport and charger to your packing list."
    )
    a.handle_text("put a toothbrush on it")
    assert _items(db) == [
        ("shopping", "apples", 0), ("shopping", "bananas", 0), ("shopping", "pears", 0),
        ("packing", "passport", 0), ("packing", "charger", 0), ("packing", "toothbrush", 0),
    ]
    # Without a list just made or added to, "it" is no list: nothing is added.
    clock.at += timedelta(seconds=settings.conversation.continuation_s + 1)
    assert a.handle_text("add cheese to it").decision.decided_by != "list-command"
    assert a.ctx.notes.recent() == [] and len(_items(db)) == 6


def test_the_list_in_focus_takes_its_items_without_being_named(tmp_path: Path) -> None:
    """"add passport and chargers" after "start a packing list" was a note; "remove the
    eggs" after the list was read out was refused as an act; "i've got the milk" a note.
    Not a thing on the list ("i've got a headache"), or a request of its own ("put the
    kettle on"), is no list turn. End state: the rows in the file."""
    clock = MovableClock(datetime(2026, 12, 2, 10, 0, tzinfo=TZ))
    settings = kit_settings(tmp_path)
    a = make_assistant(settings, clock=clock)
    db = settings.storage.database_path()
    a.handle_text("add milk, eggs and bread to the shopping list")
    a.handle_text("what's on my shopping list")
    assert a.handle_text("remove the eggs").reply.text == "Took eggs off your shopping list."
    assert a.handle_text("i've got the milk").decision.decided_by == "list-command"
    a.handle_text("start a packing list")
    a.handle_text("add passport and chargers")
    assert a.handle_text("i've got a headache").decision.decided_by != "list-command"
    a.handle_text("what's on the packing list")
    assert a.handle_text("put the kettle on").decision.decided_by != "list-command"
    assert _items(db) == [("shopping", "milk", 1), ("shopping", "bread", 0),
                          ("packing", "passport", 0), ("packing", "chargers", 0)]
    # After the window, "remove the bread" is no longer about the list
    clock.at += timedelta(seconds=settings.conversation.continuation_s + 1)
    assert a.handle_text("remove the bread").decision.decided_by != "list-command"
    assert ("shopping", "bread", 0) in _items(db)


def _lists(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT name FROM lists ORDER BY id")]


def test_delete_the_list_deletes_the_list(tmp_path: Path) -> None:
    """"delete the packing list" said "Your packing list is already empty." and the list
    stayed. An empty one goes at once; one with items after a yes; shopping is cleared."""
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    db = settings.storage.database_path()
    a.handle_text("start a packing list")
    assert a.handle_text("delete the packing list").reply.text == "Deleted your packing list."
    a.handle_text("create a party list with balloons and cake")
    a.handle_text("add eggs to the shopping list")
    asked = a.handle_text("delete the party list").reply
    assert asked.text.startswith("Delete the party list and its 2 items?")
    assert _lists(db) == ["party", "shopping"]
    a.handle_text("yes")
    assert _lists(db) == ["shopping"] and _items(db) == [("shopping", "eggs", 0)]
    assert a.handle_text("delete my shopping list").reply.text.startswith(
        "Clear the shopping list")


def test_something_run_out_of_goes_on_the_shopping_list(tmp_path: Path) -> None:
    """"i'm out of toothpaste" was kept as a note, "we're running low on coffee" refused as
    an act: neither reached the list."""
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    db = settings.storage.database_path()
    assert a.handle_text("i'm out of toothpaste").reply.text == \
        "Added toothpaste to your shopping list."
    a.handle_text("we're running low on coffee")
    a.handle_text("oh we've run out of bin bags and eggs again")
    # Nothing bought runs out here: no list turn, nothing added.
    for said in ("i'm out of breath", "we're running out of time", "i'm out of ideas"):
        assert a.handle_text(said).decision.decided_by != "list-command", said
    assert _items(db) == [("shopping", "toothpaste", 0), ("shopping", "coffee", 0),
                          ("shopping", "bin bags", 0), ("shopping", "eggs", 0)]


def test_a_task_said_done_is_ticked_on_the_to_do_list(tmp_path: Path) -> None:
    """"i've done call the plumber" was refused as an act; "i called the plumber", said
    later with no list in focus, ticks the task it names, and only that one."""
    settings = kit_settings(tmp_path)
    clock = MovableClock(datetime(2026, 12, 7, 10, 0, tzinfo=TZ))
    a = make_assistant(settings, clock=clock)
    db = settings.storage.database_path()
    a.handle_text("add fix the gate, call the plumber and tidy the garage to my to do list")
    clock.at += timedelta(minutes=30)  # the list is out of focus
    turn = a.handle_text("i called the plumber")
    assert turn.reply.text == "Ticked off call the plumber on your to-do list."
    clock.at += timedelta(minutes=30)
    assert a.handle_text("the gate is done").decision.decided_by == "list-command"
    clock.at += timedelta(minutes=30)
    assert a.handle_text("i fixed the car").decision.decided_by != "list-command"
    assert _items(db) == [("to-do", "fix the gate", 1), ("to-do", "call the plumber", 1),
                          ("to-do", "tidy the garage", 0)]


@pytest.mark.parametrize("said", ["make a to do list called packing",
                                  "create a new todo list named packing",
                                  "start a check list called packing"])
def test_a_list_called_by_its_kind_and_name_is_made(tmp_path: Path, said: str) -> None:
    """"make a to do list called packing" was kept as a note; no list was made."""
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    a.handle_text(said)
    assert _lists(settings.storage.database_path())[-1] == "packing"
    assert a.ctx.notes.recent() == []


def test_packed_and_done_with_tick_items_of_the_list_in_focus(tmp_path: Path) -> None:
    """"i'm done with passport" after the packing list was read: "Sorry, I can't help
    with that here." Said of something not on the list, it is no list turn."""
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    db = settings.storage.database_path()
    a.handle_text("create a packing list with passport, charger and socks")
    a.handle_text("i'm done with passport")
    a.handle_text("i've packed the charger")
    assert a.handle_text("done with work").decision.decided_by != "list-command"
    assert _items(db) == [("packing", "passport", 1), ("packing", "charger", 1),
                          ("packing", "socks", 0)]


@pytest.mark.parametrize("said", ["actually take that off", "take it off the list",
                                  "remove that from the list", "no take them back off"])
def test_take_that_off_after_an_add_takes_those_items_off(tmp_path: Path, said: str) -> None:
    """ "actually take that off" after "put milk on the list" was "I don't know that
    command", and the milk stayed on the list; "remove them from the list" asked which."""
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    db = settings.storage.database_path()
    a.handle_text("add eggs to the shopping list")
    a.handle_text("what's on the shopping list")
    a.handle_text("put milk and butter on the list")
    reply = a.handle_text(said).reply
    assert reply.text == "Took milk and butter off your shopping list.", reply.text
    assert _items(db) == [("shopping", "eggs", 0)]


def test_take_that_off_long_after_or_in_another_session_takes_nothing(tmp_path: Path) -> None:
    clock = MovableClock(datetime(2026, 12, 2, 14, 0, tzinfo=TZ))
    settings = kit_settings(tmp_path)
    a = make_assistant(settings, clock=clock)
    db = settings.storage.database_path()
    a.handle_text("put milk on the list")
    a.handle_text("take that off", session="satellite:kitchen")
    clock.at += timedelta(minutes=10)
    a.handle_text("take that off")
    assert _items(db) == [("shopping", "milk", 0)]


@pytest.mark.parametrize(("said", "task"), [
    ("add bread to the shopping list and remind me to buy it tomorrow at 5", "buy bread"),
    ("add eggs and flour to the list and remind me to pick them up tomorrow at 5",
     "pick up eggs and flour"),
])
def test_a_reminder_said_after_an_add_names_the_things_added(
    tmp_path: Path, said: str, task: str
) -> None:
    """It set a reminder "to buy it": the notification said nothing of the bread."""
    settings = kit_settings(tmp_path)
    a = make_assistant(settings, clock=MovableClock(datetime(2026, 12, 2, 14, 0, tzinfo=TZ)))
    reply = a.handle_text(said).reply
    assert f"OK, I'll remind you to {task} at 17:00 tomorrow" in reply.text, reply.text
    with sqlite3.connect(settings.storage.database_path()) as conn:
        rows = conn.execute("SELECT text, fire_at FROM reminders").fetchall()
    assert rows == [(task, "2026-12-03T17:00:00+01:00")]


def test_an_item_said_by_its_place_and_a_did_i_add_question(tmp_path: Path) -> None:
    """ "remove the last item" said "Not on your shopping list: last item."; "did i put
    toilet paper on the list" was a question about notes ("I have nothing stored")."""
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    db = settings.storage.database_path()
    a.handle_text("add toilet paper, milk and eggs to the shopping list")
    asked = a.handle_text("did i put toilet paper on the list").reply
    assert asked.text == "Yes, toilet paper is on your shopping list.", asked.text
    assert a.handle_text("have we added bread to the shopping list").reply.text == (
        "No, bread isn't on your shopping list.")
    a.handle_text("what's on the shopping list")
    removed = a.handle_text("remove the last item").reply
    assert removed.text == "Took eggs off your shopping list.", removed.text
    a.handle_text("tick off the first one")
    assert _items(db) == [("shopping", "toilet paper", 1), ("shopping", "milk", 0)]
    kept = a.handle_text("take the fifth item off the shopping list").reply
    assert _items(db) == [("shopping", "toilet paper", 1), ("shopping", "milk", 0)], kept.text


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("add eggs to the shopping list no wait oat milk", [("shopping", "oat milk", 0)]),
        ("pop coffee on the list actually make that decaf coffee",
         [("shopping", "decaf coffee", 0)]),
        ("stick ham on the list no wait both ham and cheese",
         [("shopping", "ham", 0), ("shopping", "cheese", 0)]),
        ("add crisps no sorry popcorn to the shopping list", [("shopping", "popcorn", 0)]),
        ("put mow the lawn on the to do list no wait weed the patio",
         [("to-do", "weed the patio", 0)]),
    ],
)
def test_a_list_add_corrected_in_one_breath_adds_what_was_meant(
    tmp_path: Path, said: str, kept: list[tuple[str, str, int]]
) -> None:
    """The first version is taken back and the second, said as things alone, goes on the
    list the first one named (it was "OK, I haven't done anything. Say it again ...")."""
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    turn = a.handle_text(said)
    assert turn.reply.text.startswith("Added "), turn.reply.text
    assert _items(settings.storage.database_path()) == kept


@pytest.mark.parametrize(
    "said",
    [
        "add rice to the list no wait remind me tomorrow",
        "add rice to the list no wait",
        "add rice to the list no wait call my sister",
        "add rice to the list no wait 2 bags",
    ],
)
def test_a_list_add_corrected_with_more_than_things_adds_nothing(
    tmp_path: Path, said: str
) -> None:
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    a.handle_text(said)
    assert _items(settings.storage.database_path()) == []


def test_whats_left_on_the_list_reads_the_list_beside_a_reminder_of_its_name(
    tmp_path: Path,
) -> None:
    """With a reminder "to go shopping" set, "what's left on the shopping list" said when
    the reminder goes off ("Your reminder, go shopping, is in 5 hours")."""
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    a.handle_text("put milk and eggs on my list and remind me to go shopping tomorrow at 5 pm")
    a.handle_text("i bought the eggs")
    turn = a.handle_text("what's left on the shopping list")
    assert turn.reply.text == "Your shopping list has 1 item: milk. Ticked off: eggs.", (
        turn.reply.text)
    assert len(a.ctx.reminders.pending()) == 1


@pytest.mark.parametrize(
    ("said", "kept"),
    [("add eggs", ["eggs"]), ("stick some coffee and milk on", ["coffee", "milk"]),
     ("could you add bread please", ["bread"])],
)
def test_everyday_things_added_with_no_list_named_go_on_the_shopping_list(
    tmp_path: Path, said: str, kept: list[str]
) -> None:
    """ "add eggs" was kept as a note "add eggs"."""
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    assert a.handle_text(said).reply.text.startswith("Added"), said
    assert _items(settings.storage.database_path()) == [("shopping", k, 0) for k in kept]


def test_an_add_with_no_list_and_a_reminder_in_one_breath(tmp_path: Path) -> None:
    """ "add eggs and remind me to buy them tomorrow" was kept whole as a note."""
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    a.handle_text("add eggs and remind me to buy them tomorrow at 5 pm")
    assert _items(settings.storage.database_path()) == [("shopping", "eggs", 0)]
    assert [r.text for r in a.ctx.reminders.pending()] == ["buy eggs"]


@pytest.mark.parametrize("said", ["add call the bank", "add tiles", "add the lights"])
def test_an_add_of_what_is_not_shopping_names_no_list(tmp_path: Path, said: str) -> None:
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    a.handle_text(said)
    assert _items(settings.storage.database_path()) == []


def test_a_sum_after_a_list_was_read_is_a_sum(tmp_path: Path) -> None:
    settings = kit_settings(tmp_path)
    a = make_assistant(settings)
    a.handle_text("add eggs")
    assert a.handle_text("add 5 and 3").reply.text == "That's 8."
    assert _items(settings.storage.database_path()) == [("shopping", "eggs", 0)]
