"""A list add corrected in the same breath: "add eggs to the list no wait oat milk",
"stick tahini on the list actually make that tahini and lemons", "put eggs no sorry
bread on the list". The first version runs nothing (mavend.router.negation reads the
repair); the second, said as things alone, is added to the list the first one named
(it was "OK, I haven't done anything. Say it again the way you want it.").

The second version must be things: words that start another request ("no wait set a
timer") or say more than items ("... no wait remind me tomorrow") are not added.
"""

from __future__ import annotations

import re

from mavend.lists.joined import _OTHER_START
from mavend.lists.parse import _MORE_THAN_ITEMS, _strip, parse_list_command
from mavend.router.negation import withdrawal

# What says that the words after it replace the things: "make that", "i meant", "both".
_LEAD = re.compile(
    r"^(?:(?:make|change) (?:it|that|them|those)(?: to| into)?|i mean|i meant|it should be"
    r"|rather|instead|just|only|both|(?:i )?want|(?:we )?need)\s+"
)
_TAIL = re.compile(r"\s+(?:instead|rather|please)$")
# The verb of the first version when it named no list yet ("add eggs no wait oat milk to
# the list"): the second version is said with it.
_VERB = re.compile(r"^(?:add|put|stick|pop|write down|jot down|write|jot|chuck|bung|throw)\b")
_MAX_WORDS = 6
_LIST_NAMED = re.compile(r"\b(?:on|to|onto|in)\s+(?:the|my|our)\s+(?:[a-z-]+\s+){0,2}list$")


def repaired_add(said: str) -> str:
    """The list add the user meant, as words the list parser reads ("add oat milk to the
    shopping list"), or "" when `said` is not a list add corrected with things."""
    taken_back = withdrawal(said)
    if taken_back is None or taken_back.kind != "repair" or not taken_back.then:
        return ""
    first, then = taken_back.first, _strip(taken_back.then)
    if (verb := _VERB.match(first)) and _LIST_NAMED.search(then):
        # "add eggs no wait oat milk to the list": the second version names the list
        whole = f"{verb.group(0)} {then}"
        again = parse_list_command(whole)
        return whole if again is not None and again.action == "add" and again.items else ""
    added = parse_list_command(first)
    if added is None or added.action != "add" or not added.items:
        return ""
    again = parse_list_command(then)
    if again is not None:  # "... no wait add oat milk to the to do list": said whole
        return then if again.action == "add" else ""
    span = _TAIL.sub("", _LEAD.sub("", then))
    span = re.sub(rf"^{_VERB.pattern}\s+", "", span)  # "... no wait add oat milk"
    if not span or len(span.split()) > _MAX_WORDS or _MORE_THAN_ITEMS.search(span) \
            or _OTHER_START.match(span) or re.search(r"\d", span):
        return ""
    return f"add {span} to " + (f"my {added.list_name} list" if added.list_name else "the list")
