"""A list command's reply: it adds, takes off, ticks, reads, and (after a yes) clears.

Nothing here guesses: an item that is not on the list, or that could be two items, changes
nothing and says so. A clear asks first (handlers.confirm) and, on the yes, deletes only
the items that were there when it asked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from mavend.config import DeviceSpec
from mavend.handlers.common import HandlerContext, Outcome, Reply, TurnContext, human_list
from mavend.handlers.confirm import Confirmations
from mavend.home.todo import HomeList
from mavend.language.nouns import be
from mavend.lists.book import ListBook, ListInputError, ListItem, ListLimitError
from mavend.lists.items import clean_text, core_of, make_item, make_key
from mavend.lists.match import by_place, find
from mavend.lists.names import DEFAULT_LIST, SHOPPING, TODO, canonical_name, spoken_name
from mavend.lists.parse import ListCommand
from mavend.replies import Change

CLEAR_OP = "lists.clear"
DROP_OP = "lists.drop"
# A spoken read-back names this many items and the count; the text names them all.
SPOKEN_FIRST = 4


def _items_word(count: int) -> str:
    return f"{count} item{'' if count == 1 else 's'}"


class ListHandler:
    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx
        self.book = ListBook(ctx.store, ctx.tz, clock=ctx.clock)

    def command(self, cmd: ListCommand, context: TurnContext | None = None) -> Reply:
        if cmd.action not in ("create", "lists") and cmd.list_name:
            cmd = replace(cmd, list_name=self._said_short(cmd.list_name))
        kept_in_home = self._home_list(cmd.list_name or DEFAULT_LIST)
        if kept_in_home is not None and cmd.action not in ("lists", "create"):
            return HomeList(self.ctx.settings, kept_in_home).run(cmd.action, cmd.items)
        try:
            if cmd.action == "add":
                return self.add(cmd)
            if cmd.action in ("remove", "tick", "untick"):
                return self.change(cmd)
            if cmd.action == "read":
                return self.read(cmd)
            if cmd.action == "lists":
                return self.lists()
            if cmd.action == "clear":
                return self.ask_clear(cmd, context)
            if cmd.action == "drop":
                return self.ask_drop(cmd, context)
            if cmd.action == "create":
                return self.create(cmd)
        except ListLimitError as exc:
            return Reply(str(exc), Outcome.REFUSED, "limit")
        return Reply(f"I can't do {cmd.action!r} with a list.", Outcome.REFUSED, "bad_input")

    def holds_open(self, name: str, texts: Sequence[str]) -> bool:
        """Whether each of `texts` is one open item of the list (matched as a tick would)."""
        items = [i for i in self.book.items(name) or [] if not i.done]
        return all(find(items, (item := make_item(t)).key, item.core).one for t in texts)

    def task_named(self, name: str, said: str) -> str | None:
        """The one open item of `name` that `said` names: the item itself, or a task by
        what it is done to ("the gate" is "fix the gate"); None when none or several."""
        items = [i for i in self.book.items(name) or [] if not i.done]
        item = make_item(said)
        found = find(items, item.key, item.core)
        if found.candidates:
            return found.one.text if found.one else None
        by_object = [i for i in items if i.key.split(" ", 1)[1:] == [item.key]]
        return by_object[0].text if len(by_object) == 1 else None

    def _home_list(self, name: str) -> DeviceSpec | None:
        """The Home Assistant to-do list (`[[devices]] type = "todo"`) called `name`."""
        for device in self.ctx.settings.devices:
            if device.type == "todo" and name in {
                canonical_name(n) for n in (device.name, *device.aliases)
            }:
                return device
        return None

    # add -----------------------------------------------------------------
    def add(self, cmd: ListCommand) -> Reply:
        name = self.book.resolve(cmd.list_name)
        spoken = spoken_name(name)
        if not any(clean_text(i) for i in cmd.items):
            return Reply(f"What should I add to your {spoken}?", Outcome.ASKED, data={"list": name})
        try:
            result = self.book.add(name, cmd.items)
        except ListInputError as exc:
            return Reply(str(exc), Outcome.REFUSED, "bad_input", {"list": name})
        sentences = []
        if result.added:
            sentences.append(f"Added {_texts(result.added)} to your {spoken}.")
        if result.reopened:
            sentences.append(f"Put {_texts(result.reopened)} back on your {spoken}.")
        if result.updated:
            sentences.append(f"Changed to {_texts(result.updated)} on your {spoken}.")
        if result.already:
            where = "it" if sentences else f"your {spoken}"
            sentences.append(f"Already on {where}: {_texts(result.already)}.")
        changes: tuple[Change, ...] = ()
        if result.added or result.reopened:
            put = _texts([*result.added, *result.reopened])
            ref = {
                "list": name,
                "added": [i.id for i in result.added],
                "reopened": [i.id for i in result.reopened],
            }
            changes = (Change("list.add", f"added {put} to your {spoken}", ref),)
        return Reply(
            " ".join(sentences),
            changes=changes,
            data={
                "list": name,
                "ids": [i.id for i in result.touched],
                "added": [i.id for i in result.added],
                "reopened": [i.id for i in result.reopened],
                "updated": [i.id for i in result.updated],
                "already": [i.id for i in result.already],
            },
        )

    # remove, tick, untick ------------------------------------------------
    def change(self, cmd: ListCommand) -> Reply:
        verb = {"remove": "take off", "tick": "tick off", "untick": "put back"}[cmd.action]
        name = self._list_for(cmd)
        spoken = spoken_name(name)
        if not cmd.items:
            return Reply(f"Which item should I {verb}?", Outcome.ASKED, data={"list": name})
        items = self.book.items(name)
        if items is None:
            return self._no_list(name)
        chosen: list[ListItem] = []
        missing: list[str] = []
        for said in cmd.items:
            pool = _pool(items, cmd.action)
            if (placed := by_place(pool, said)) is not None:
                # "take the last one off", "tick off the first item": by where it is
                if placed not in chosen:
                    chosen.append(placed)
                continue
            found = find(pool, make_key(said), core_of(make_key(said)))
            if found.ambiguous:
                options = human_list([c.text for c in found.candidates], conjunction="or")
                return Reply(
                    f"Which one: {options}? Nothing was changed.",
                    Outcome.ASKED,
                    data={"list": name, "candidates": [c.id for c in found.candidates]},
                )
            if found.one is None:
                missing.append(said)
            elif found.one not in chosen:
                chosen.append(found.one)
        changed = self._apply(cmd.action, name, [i.id for i in chosen])
        done = [i for i in chosen if i.id in changed]
        return Reply(
            _change_sentence(cmd.action, spoken, done, missing, items),
            data={"list": name, "ids": [i.id for i in done], "missing": missing},
            error_class="" if done else "not_found",
            changes=_list_changes(cmd.action, name, spoken, done),
        )

    def _apply(self, action: str, name: str, ids: list[int]) -> list[int]:
        if not ids:
            return []
        if action == "remove":
            return self.book.remove(name, ids)
        return self.book.tick(name, ids, done=action == "tick")

    def _list_for(self, cmd: ListCommand) -> str:
        """The list meant. Unnamed: the default one, unless the item is on exactly one
        other list ("tick off call the plumber" with a shopping and a to-do list)."""
        name = self.book.resolve(cmd.list_name)
        if cmd.list_name or not cmd.items:
            return name
        key = make_key(cmd.items[0])
        holding = self.book.holding(key, core_of(key))
        return holding[0] if len(holding) == 1 and name not in holding else name

    # read ----------------------------------------------------------------
    def read(self, cmd: ListCommand) -> Reply:
        name = self.book.resolve(cmd.list_name)
        spoken = spoken_name(name)
        items = self.book.items(name)
        if items is None:
            return self._no_list(name)
        if cmd.items:
            return self._membership(cmd.items, name, items)
        open_items = [i for i in items if not i.done]
        ticked = [i for i in items if i.done]
        data = {"list": name, "ids": [i.id for i in open_items], "done": [i.id for i in ticked]}
        if not items:
            return Reply(f"Your {spoken} is empty.", data=data)
        if not open_items:
            return Reply(f"Everything on your {spoken} is ticked off: {_texts(ticked)}.", data=data)
        text = f"Your {spoken} has {_items_word(len(open_items))}: {_texts(open_items)}."
        if ticked:
            text += f" Ticked off: {_texts(ticked)}."
        spoken_text = ""
        if len(open_items) > SPOKEN_FIRST:
            first = _texts(open_items[:SPOKEN_FIRST])
            spoken_text = (
                f"Your {spoken} has {len(open_items)} items. The first {SPOKEN_FIRST}: {first}."
            )
            if ticked:
                spoken_text += f" {len(ticked)} ticked off."
        return Reply(text, data=data, spoken=spoken_text)

    def _membership(self, said: Sequence[str], name: str, items: list[ListItem]) -> Reply:
        spoken = spoken_name(name)
        sentences = []
        ids = []
        for thing in said:
            key = make_key(thing)
            found = find(items, key, core_of(key))
            hit = found.one or (found.candidates[0] if found.candidates else None)
            if hit is None:
                sentences.append(f"No, {thing} {be(thing)}n't on your {spoken}.")
            elif found.ambiguous:
                options = human_list([c.text for c in found.candidates])
                sentences.append(f"Your {spoken} has {options}.")
                ids.extend(c.id for c in found.candidates)
            else:
                state = ", ticked off" if hit.done else ""
                sentences.append(f"Yes, {hit.text} {be(hit.text)} on your {spoken}{state}.")
                ids.append(hit.id)
        return Reply(" ".join(sentences), data={"list": name, "ids": ids})

    def lists(self) -> Reply:
        summaries = self.book.lists()
        if not summaries:
            return Reply("You don't have any lists yet.", data={"lists": []})
        parts = []
        for s in summaries:
            if s.open:
                parts.append(f"{s.name} ({_items_word(s.open)})")
            elif s.done:
                parts.append(f"{s.name} (all ticked off)")
            else:
                parts.append(f"{s.name} (empty)")
        count = len(summaries)
        return Reply(
            f"You have {count} list{'' if count == 1 else 's'}: {human_list(parts)}.",
            data={"lists": [s.name for s in summaries]},
        )

    # clear ---------------------------------------------------------------
    def ask_clear(self, cmd: ListCommand, context: TurnContext | None) -> Reply:
        name = self.book.resolve(cmd.list_name)
        items = self.book.items(name)
        if items is None:
            return self._no_list(name)
        if not items:
            return Reply(f"Your {spoken_name(name)} is already empty.", data={"list": name})
        ids = [i.id for i in items]
        session = context.session if context is not None else ""
        return Confirmations(self.ctx).ask(
            session,
            CLEAR_OP,
            {"list": name, "ids": ids},
            f"Clear the {spoken_name(name)} ({_items_word(len(ids))})?",
            room="lists",
            data={"list": name, "ids": ids},
        )

    def ask_drop(self, cmd: ListCommand, context: TurnContext | None) -> Reply:
        """ "delete the packing list": the list itself, gone from "what lists do i have" (it
        said "already empty" and stayed). With items, asked first; a default list (shopping,
        to-do) is only ever cleared."""
        name = self.book.resolve(cmd.list_name)
        if name in (SHOPPING, TODO, DEFAULT_LIST):
            return self.ask_clear(cmd, context)
        items = self.book.items(name)
        if items is None:
            return self._no_list(name)
        if not items:
            self.book.drop(name)
            return Reply(f"Deleted your {spoken_name(name)}.", data={"list": name, "ids": []})
        session = context.session if context is not None else ""
        return Confirmations(self.ctx).ask(
            session,
            DROP_OP,
            {"list": name, "count": len(items)},
            f"Delete the {spoken_name(name)} and its {_items_word(len(items))}?",
            room="lists",
            data={"list": name, "ids": [i.id for i in items]},
        )

    def confirmed(self, op: str, pending: Mapping[str, Any]) -> Reply:
        """The yes to a clear: only the items there when it was asked are deleted. The yes
        to a drop: the list and what is on it now."""
        if op == DROP_OP:
            name = str(pending.get("list") or "")
            if not self.book.drop(name):
                return Reply(f"Your {spoken_name(name)} is already gone.")
            return Reply(f"Deleted your {spoken_name(name)}.", data={"list": name})
        if op != CLEAR_OP:
            return Reply("That question has lapsed; ask again.", Outcome.REFUSED)
        name = str(pending.get("list") or "")
        try:
            ids = [int(i) for i in pending.get("ids") or ()]
        except (TypeError, ValueError):
            return Reply("That question has lapsed; ask again.", Outcome.REFUSED)
        cleared = self.book.clear(name, ids)
        spoken = spoken_name(name)
        left = [i for i in self.book.items(name) or [] if not i.done]
        text = f"Cleared your {spoken}: {_items_word(len(cleared))} taken off."
        if left:
            text += f" Added since I asked, still on it: {_texts(left)}."
        return Reply(text, data={"list": name, "ids": cleared, "kept": [i.id for i in left]})

    # create --------------------------------------------------------------
    def create(self, cmd: ListCommand) -> Reply:
        if not cmd.list_name:
            return Reply("What should I call the new list?", Outcome.ASKED)
        spoken = spoken_name(cmd.list_name)
        if self.book.create(cmd.list_name):
            if cmd.items:  # "... with passport and charger"
                added = self.add(ListCommand("add", cmd.list_name, cmd.items))
                return Reply(f"I've made a new {spoken}. {added.text}", added.outcome,
                             added.error_class, {**dict(added.data), "list": cmd.list_name},
                             changes=added.changes)
            return Reply(f"I've made a new {spoken}. It's empty.", data={"list": cmd.list_name})
        items = self.book.items(cmd.list_name) or []
        open_count = sum(1 for i in items if not i.done)
        return Reply(
            f"You already have a {spoken}, with {_items_word(open_count)}.",
            data={"list": cmd.list_name, "ids": [i.id for i in items if not i.done]},
        )

    def _said_short(self, name: str) -> str:
        """ "my christmas list" for the one list called "christmas presents": the list
        whose name holds every word said, when exactly one does; else the name as said."""
        lists = [s.name for s in self.book.lists()]
        if name in lists:
            return name
        words = set(name.split())
        holding = [n for n in lists if words and words <= set(n.split())]
        return holding[0] if len(holding) == 1 else name

    def _no_list(self, name: str) -> Reply:
        others = [s.name for s in self.book.lists()]
        text = f"You don't have a {spoken_name(name)}."
        if others:
            text += f" Your lists: {human_list(others)}."
        return Reply(text, error_class="not_found", data={"list": name, "ids": []})


def _texts(items: Sequence[ListItem]) -> str:
    return human_list([i.text for i in items])


def _pool(items: list[ListItem], action: str) -> list[ListItem]:
    """The items a verb can act on: open ones to tick, ticked ones to put back, any to
    take off (open first, so "milk" finds the open milk before an old ticked one)."""
    if action == "tick":
        return [i for i in items if not i.done]
    if action == "untick":
        return [i for i in items if i.done]
    return [i for i in items if not i.done] + [i for i in items if i.done]


def _change_sentence(
    action: str, spoken: str, done: list[ListItem], missing: list[str], items: list[ListItem]
) -> str:
    sentences = []
    if done:
        what = _texts(done)
        sentences.append(
            {
                "remove": f"Took {what} off your {spoken}.",
                "tick": f"Ticked off {what} on your {spoken}.",
                "untick": f"Put {what} back on your {spoken}.",
            }[action]
        )
    absent: list[str] = []
    ticked: list[str] = []
    open_ones: list[str] = []
    for said in missing:
        key = make_key(said)
        elsewhere = find(items, key, core_of(key)).candidates
        if action == "tick" and elsewhere and all(i.done for i in elsewhere):
            ticked.append(elsewhere[0].text)
        elif action == "untick" and elsewhere:
            open_ones.append(elsewhere[0].text)
        else:
            absent.append(said)
    if absent:
        sentences.append(f"Not on your {spoken}: {human_list(absent)}.")
    if ticked:
        sentences.append(f"Already ticked off: {human_list(ticked)}.")
    if open_ones:
        sentences.append(f"Not ticked off: {human_list(open_ones)}.")
    if not done:
        sentences.append("Nothing was changed.")
    return " ".join(sentences)


def _list_changes(action: str, name: str, spoken: str, done: list[ListItem]) -> tuple[Change, ...]:
    """What a remove, tick or untick changed, for "undo that"."""
    if not done:
        return ()
    texts = _texts(done)
    if action == "remove":
        ref = {"list": name, "texts": [i.text for i in done]}
        return (Change("list.remove", f"took {texts} off your {spoken}", ref),)
    ref = {"list": name, "ids": [i.id for i in done]}
    if action == "tick":
        return (Change("list.tick", f"ticked {texts} off your {spoken}", ref),)
    return (Change("list.untick", f"put {texts} back on your {spoken}", ref),)
