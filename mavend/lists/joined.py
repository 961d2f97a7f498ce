"""A list command said in one breath with another request: "add eggs to the list and set
a timer for ten minutes", "add bread to the shopping list and remind me to buy it at 5".
Each is its own turn, in the order said; a reminder about the things just added names
them ("remind me to buy it" is "to buy bread": "buy it" reminds of nothing).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mavend.lists.parse import ListCommand, _strip, parse_list_command
from mavend.replies import human_list
from mavend.router.grammar import normalize


@dataclass(frozen=True)
class ListSplit:
    """A list command said together with another request ("add eggs to the list and set
    a timer for ten minutes"): the list command, and the other request's words (`rest`),
    said before it (`list_first` False) or after."""

    command: ListCommand
    rest: str
    list_first: bool

    def rest_naming_items(self) -> str:
        """`rest` with its "it" / "them" put as the items the list command added, when it
        is a reminder said after the add ("... and remind me to buy it tomorrow")."""
        if not (self.list_first and self.command.action == "add" and self.command.items
                and _REMINDER.match(self.rest)):
            return self.rest
        items = human_list(list(self.command.items))
        # "pick them up" -> "pick up eggs and flour"
        return _IT.sub(lambda m: f"{m['up']} {items}" if m["up"] else items, self.rest, count=1)


# A reminder, and the pronoun in it that points back at the things added.
_REMINDER = re.compile(r"^(?:remind|set a reminder|don't let me forget|dont let me forget)\b")
_IT = re.compile(r"(?<=\s)(?:it|them|those|these)(?: (?P<up>up|out|in|off|back|down))?\b")


# How the other request starts: a command, not more items ("... to the list and milk").
_OTHER_START = re.compile(
    r"^(?:set|remind|turn|lock|unlock|play|pause|stop|start|resume|skip|mute|unmute|what|whats|"
    r"what's|tell|how|when|switch|open|close|call|text|dim|volume|note|make a note|remember|"
    r"take a note|read|check|wake)\b"
)
_LIST_START = re.compile(
    r"^(?:add|put|stick|pop|write|jot|take|remove|delete|tick|cross|check off|mark|untick|"
    r"clear|empty)\b"
)
_JOINER = re.compile(r"\s+and(?:\s+then|\s+also)?\s+|\s+then\s+")
# A request that another request's words may belong to ("remind me at 5 and add milk to
# the list" may be one reminder): never split.
_NO_SPLIT = re.compile(r"\b(?:remind|reminder|note|remember|don't|dont|do not|never)\b")


def split_list_command(said: str, *, utterance: str = "") -> ListSplit | None:
    """A list command joined by "and" to another request, or None (also when the whole
    utterance is one list command: parse_list_command reads that)."""
    text = _strip(normalize(said))
    if not text or parse_list_command(text, utterance=utterance) is not None:
        return None
    for joint in _JOINER.finditer(text):
        left, right = text[: joint.start()], text[joint.end() :]
        if not left or not right:
            continue
        if _OTHER_START.match(right):
            command = parse_list_command(left, utterance=utterance)
            if command is not None:
                return ListSplit(command, right, list_first=True)
        if _LIST_START.match(right) and not _NO_SPLIT.search(left):
            command = parse_list_command(right, utterance=utterance)
            if command is not None:
                return ListSplit(command, left, list_first=False)
    return None
