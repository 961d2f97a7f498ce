"""List names: what the user calls a list, and the one name it is kept under.

"grocery list", "my shopping", "the groceries" are all the shopping list; "to do", "todo",
"to-do", "my tasks" the to-do list; anything else is kept as said ("hardware store").
"""

from __future__ import annotations

import re

SHOPPING = "shopping"
TODO = "to-do"
# The list an unnamed "add eggs to my list" goes to when more than one list exists (with
# exactly one list, that one): shopping is what people mean by "the list" most often.
DEFAULT_LIST = SHOPPING

# A name is a few words, not a sentence: longer ones are refused, not truncated.
MAX_NAME_CHARS = 40
MAX_NAME_WORDS = 4

_SHOPPING_NAMES = frozenset(
    {
        "shopping",
        "grocery",
        "groceries",
        "grocery shopping",
        "food shopping",
        "food",
        "supermarket",
        "shop",
    }
)
_TODO_NAMES = frozenset(
    {"to do", "todo", "to dos", "todos", "to-do", "to-dos", "task", "tasks", "things to do"}
)
# Other rooms' "lists": a song, a calendar entry or a note is not a list item here.
NOT_LISTS = frozenset(
    {
        "calendar",
        "diary",
        "agenda",
        "schedule",
        "reminder",
        "reminders",
        "note",
        "notes",
        "alarm",
        "alarms",
        "timer",
        "timers",
        "play",
        "playlist",
        "queue",
        "contact",
        "contacts",
        "favourites",
        "favorites",
        "address book",
        "speed dial",
        "mailing",
        "email",
        "waiting",
    }
)
_LEADING = re.compile(r"^(?:(?:the|my|our|your|a|an|new|another)\s+)+")
_TRAILING = re.compile(r"\s+lists?$")
_NAME_WORD = re.compile(r"^[a-z0-9][a-z0-9'-]*$")
# Words that end a name: a name containing one is a misparse ("milk to my").
_NOT_IN_NAME = frozenset(
    {"to", "on", "onto", "into", "in", "off", "from", "and", "the", "my", "our", "list", "of"}
)


def canonical_name(said: str) -> str | None:
    """The name a list is kept under, or None when `said` is not a usable list name."""
    name = _TRAILING.sub("", _LEADING.sub("", " ".join(said.lower().split())))
    if not name or name in NOT_LISTS:
        return None
    if name in _SHOPPING_NAMES:
        return SHOPPING
    if name in _TODO_NAMES:
        return TODO
    # "the hallway to do list" is the hallway todo list: "to" inside it is no misparse.
    name = re.sub(r"\bto[ -]do(s?)$", r"todo\1", name)
    words = name.split()
    if len(name) > MAX_NAME_CHARS or len(words) > MAX_NAME_WORDS:
        return None
    if any(w in _NOT_IN_NAME or not _NAME_WORD.match(w) for w in words):
        return None
    return name


def spoken_name(name: str) -> str:
    """'shopping' -> 'shopping list'."""
    return f"{name} list"
