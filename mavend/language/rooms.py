"""Rooms said by another of their everyday names: "the hall" for a home whose room is
"hallway", "the lounge" for "living room". A name is read as the home's room only when
the home has exactly one room of that group and no room or device called by the name
said: where a house has both a study and an office, "study" is the study.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Names people use for the same room. Each group is one room in a home that has one.
_GROUPS: tuple[tuple[str, ...], ...] = (
    ("hallway", "hall", "entrance hall", "entryway", "entrance"),
    ("living room", "lounge", "sitting room", "front room", "family room"),
    ("kids room", "kids' room", "childrens room", "children's room"),
    ("office", "study", "home office"),
    ("garden", "back garden", "backyard", "yard"),
    ("bedroom", "main bedroom", "master bedroom"),
    ("toilet", "loo", "wc", "cloakroom"),
    ("dining room", "dining area"),
    ("utility room", "utility", "laundry room", "laundry"),
    ("landing", "upstairs landing"),
)


def as_home_rooms(text: str, rooms: Iterable[str], names: Iterable[str] = ()) -> str:
    """`text` (normalized) with each room said by another of its names put as the home's
    room ("is the hall window shut" -> "is the hallway window shut" when the home has a
    hallway and no hall); `text` itself when nothing is said so. `names`: the devices'
    spoken names, which a room word inside them must not be changed in."""
    have = set(rooms)
    spoken = " ".join(names)
    for group in _GROUPS:
        home = [room for room in group if room in have]
        if len(home) != 1:
            continue
        others = [n for n in group if n not in have and not re.search(rf"\b{re.escape(n)}\b",
                                                                       spoken)]
        if not others:
            continue
        said = re.compile(r"\b(?:" + "|".join(
            re.escape(n) for n in sorted(others, key=len, reverse=True)) + r")\b")
        # The home's own name where it is said stays ("utility" inside "utility room")
        parts = re.split(rf"(\b{re.escape(home[0])}\b)", text)
        text = "".join(part if i % 2 else said.sub(home[0], part) for i, part in enumerate(parts))
    return text
