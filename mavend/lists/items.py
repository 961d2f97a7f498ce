"""List items: splitting what was said into items, tidying each, and the keys they match on.

"eggs, milk and bread" is three items, and so is "eggs milk and bread" (plural and
everyday-item breaks, mavend.lists.groceries); "mac and cheese" one (COMPOUNDS); on the to-do list
"and" splits only between two phrases ("pack the car and water the plants"), so "call mum
and dad" stays one task. Each item keeps its quantity ("two pints of milk") and loses its
article ("some eggs" -> "eggs"). Its `key` (normalized, singular, number words as digits)
is what de-duplicates; its `core` (the key without the quantity: "milk") lets "take milk
off" find "two pints of milk".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from mavend.language.nouns import singular
from mavend.lists.groceries import one_thing, whole_item
from mavend.lists.names import TODO

MAX_ITEM_CHARS = 200
# One breath lists a dozen things; 20 is generous, and more is a misheard paragraph.
MAX_ITEMS_PER_ADD = 20

# "X and Y" that is one thing on a list. Kept small on purpose: "salt and pepper",
# "bread and butter", "oil and vinegar" are two things people buy separately.
COMPOUNDS: tuple[tuple[str, str], ...] = (
    ("mac", "cheese"),
    ("macaroni", "cheese"),
    ("salt", "vinegar"),  # crisps
    ("cheese", "onion"),  # crisps
    ("sour cream", "onion"),
    ("sweet", "sour"),  # sauce
    ("fish", "chips"),
    ("peanut butter", "jelly"),
    ("pb", "j"),
    ("half", "half"),  # the cream
    ("cookies", "cream"),  # ice cream
    ("pork", "beans"),
    ("bubble", "squeak"),
)

_LEADING_FILLER = re.compile(
    r"^(?:(?:some|a|an|the|any|more|also|please|just|um|uh|er|erm|like)\s+)+"
)
_TRAILING_FILLER = re.compile(
    r"(?:\s+(?:please|too|as well|also|for me|thanks|thank you|again|um|uh))+$"
)
_AND = frozenset({"and", "plus", "&"})
_FUNCTION_WORDS = frozenset(
    {"of", "for", "with", "in", "from", "on", "to", "or", "n", "the", "a", "an", "some", "no"}
)
# Words ending in -s that name a kind, not a thing: "brussels sprouts", "sports socks".
_PLURAL_LOOKING_MODIFIERS = frozenset(
    {"brussels", "sports", "kids", "mens", "womens", "childrens", "swiss", "cous", "jeans"}
)
_INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp"})
PRONOUNS = frozenset(
    {"it", "that", "this", "them", "those", "these", "something", "stuff", "me", "us", "him", "her"}
)

_NUMBER_WORDS = {
    "one": "1",
    "two": "2",
    "three": "3",
    "four": "4",
    "five": "5",
    "six": "6",
    "seven": "7",
    "eight": "8",
    "nine": "9",
    "ten": "10",
    "eleven": "11",
    "twelve": "12",
    "dozen": "12",
    "couple": "2",
    "few": "few",
}
_UNIT_WORDS = """pint litre liter ml l kilo kg g gram pound lb ounce oz bag box can tin bottle jar
pack packet carton loaf bunch tub bar roll head piece slice cup punnet dozen case crate tube sack
bucket pot"""
_UNITS = frozenset(_UNIT_WORDS.split())


@dataclass(frozen=True)
class Item:
    """One item as it will be kept: its text, its key (dedup), its core (matching)."""

    text: str
    key: str
    core: str


def clean_text(text: str) -> str:
    """Control and format characters out, spaces squeezed (a pasted item may carry them)."""
    kept = "".join(" " if unicodedata.category(ch) in _INVISIBLE else ch for ch in text)
    return " ".join(kept.split())


def tidy(text: str) -> str:
    """'some eggs please' -> 'eggs'; 'a loaf of bread' -> 'loaf of bread'."""
    text = clean_text(text).lower().strip(" ,.;:!?")
    previous = None
    while previous != text:
        previous = text
        text = _TRAILING_FILLER.sub("", _LEADING_FILLER.sub("", text)).strip(" ,.;:!?")
    return text


def make_key(text: str) -> str:
    """Normalized for matching: lower case, letters and digits, singular, numbers as digits."""
    lowered = unicodedata.normalize("NFKC", text).lower().replace("-", " ")
    words = "".join(ch if ch.isalnum() or ch in " '" else " " for ch in lowered).split()
    words = [w for w in words if w not in ("a", "an", "the", "some")] or words
    return " ".join(singular(_NUMBER_WORDS.get(w, w)) for w in words)


def core_of(key: str) -> str:
    """The key without a leading quantity: '2 pint of milk' -> 'milk', 'loaf of bread' ->
    'bread', '6 egg' -> 'egg'. The quantity is kept in the text, only matching drops it."""
    words = key.split()
    i = 0
    counted = i < len(words) and (words[i].replace(".", "", 1).isdigit() or words[i] == "few")
    if counted:
        i += 1
    if i < len(words) - 1 and singular(words[i]) in _UNITS and (counted or words[i + 1] == "of"):
        i += 1
    if i < len(words) - 1 and words[i] == "of":
        i += 1
    return " ".join(words[i:]) if i < len(words) else key


def make_item(text: str) -> Item:
    tidied = tidy(text)
    key = make_key(tidied)
    return Item(tidied, key, core_of(key))


def split_items(
    span: str, *, list_name: str = "", breaks: frozenset[int] = frozenset()
) -> list[str]:
    """The items in the words after "add" ("eggs milk and bread"). `breaks`: word indexes
    in `span` a comma came before (the raw utterance had "eggs, milk and bread")."""
    words = span.split()
    if not words:
        return []
    if not breaks and list_name != TODO and any(w in _AND for w in words):
        breaks = plural_breaks(words) | item_breaks(words)
    parts: list[list[str]] = [[]]
    for index, word in enumerate(words):
        if index in breaks and parts[-1]:
            parts.append([])
        if word in _AND and parts[-1]:
            parts.append([word])  # a marker, resolved below: compound or separator
            continue
        parts[-1].append(word)
    return [p for p in (tidy(p) for p in _join_and(parts, list_name)) if p]


def plural_breaks(words: Sequence[str]) -> frozenset[int]:
    """Where a list said without commas ("eggs milk and butter") has its boundaries: after
    a plural noun that another item follows. A modifier is rarely plural ("oat milk", "tea
    bags", "washing up liquid" stay whole); a unit or "of" keeps its phrase ("two bags of
    rice"). Used only when the words carry no commas and list several things ("and")."""
    found = set()
    for index, (word, following) in enumerate(pairwise(words)):
        if following in _FUNCTION_WORDS or following in _AND:
            continue
        if not looks_plural(word) or singular(word) in _UNITS:
            continue
        found.add(index + 1)
    return frozenset(found)


def item_breaks(words: Sequence[str]) -> frozenset[int]:
    """Where two everyday items meet in a list said without commas ("milk eggs and
    bread"): between two words that are each a whole item and not one thing together."""
    found = set()
    for index, (word, following) in enumerate(pairwise(words)):
        first, second = singular(word), singular(following)
        if whole_item(first) and whole_item(second) and not one_thing(first, second):
            found.add(index + 1)
    return frozenset(found)


def looks_plural(word: str) -> bool:
    return (
        len(word) > 3
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is", "'s"))
        and word not in _PLURAL_LOOKING_MODIFIERS
    )


def _join_and(parts: list[list[str]], list_name: str) -> list[str]:
    items: list[str] = []
    for part in parts:
        if part and part[0] in _AND:
            rest = part[1:]
            if items and rest and _keeps_together(items[-1], rest, list_name):
                items[-1] = f"{items[-1]} {part[0]} {' '.join(rest)}"
                continue
            part = rest
        if part:
            items.append(" ".join(part))
    return items


def _keeps_together(left: str, right: list[str], list_name: str) -> bool:
    """Whether "<left> and <right>" is one item."""
    right_text = " ".join(right)
    for first, second in COMPOUNDS:
        if (left == first or left.endswith(" " + first)) and (
            right_text == second or right_text.startswith(second + " ")
        ):
            return True
    # A task is a phrase: "call mum and dad" is one, "pack the car and water the plants" two.
    return list_name == TODO and (len(left.split()) < 2 or len(right) < 2)


def item_problem(texts: Sequence[str]) -> str:
    """One sentence on why these items cannot be added, or "" when they can."""
    if not texts:
        return "There's nothing to add: name the item, as in \"add eggs to the list\"."
    if len(texts) > MAX_ITEMS_PER_ADD:
        return (
            f"That's {len(texts)} items at once; I can add up to {MAX_ITEMS_PER_ADD} at a "
            "time. Nothing was added."
        )
    longest = max(texts, key=len)
    if len(longest) > MAX_ITEM_CHARS:
        return (
            f"That item is too long ({len(longest):,} characters); an item can be up to "
            f"{MAX_ITEM_CHARS}. Nothing was added."
        )
    return ""
