"""A Home Assistant to-do list (`[[devices]] type = "todo"`), with mavend's list verbs.

"add oat milk to the shopping list" goes here instead of mavend's own lists when the
list's name is a todo device's name or alias (mavend/lists/handler.py decides). Home
Assistant's todo services do the work, as its documentation names them: todo.add_item,
todo.remove_item, todo.update_item (status completed / needs_action) and todo.get_items
(a service that answers: POST ...?return_response). An item is taken off or ticked only
when the list holds it by that name (case aside): nothing is guessed, nothing half-done
silently; a clear is not offered for a list kept elsewhere.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from mavend.config import DeviceSpec, Settings
from mavend.home import classes
from mavend.home import homeassistant as ha
from mavend.home.feedback import failure_sentence
from mavend.replies import Outcome, Reply, human_list

log = logging.getLogger(__name__)

OPEN, DONE = "needs_action", "completed"


class HomeList:
    """One todo entity: `run(action, items)` -> one reply."""

    def __init__(self, settings: Settings, device: DeviceSpec):
        self.settings = settings
        self.device = device
        self.name = device.name

    def run(self, action: str, items: Sequence[str]) -> Reply:
        if action == "read":
            return self.read(items)
        if action == "add":
            return self.add(items)
        if action in ("remove", "tick", "untick"):
            return self.change(action, items)
        return Reply(
            f"The {self.name} is kept in Home Assistant; I can add, take off, tick off and "
            "read its items, but not that.",
            Outcome.REFUSED,
            "not_allowed",
        )

    # reading -----------------------------------------------------------------------
    def items(self, status: Sequence[str] = (OPEN,)) -> list[dict[str, Any]] | Reply:
        body = {"entity_id": self.device.homeassistant, "status": list(status)}
        result = ha.call_service(
            self.settings.homeassistant, "todo.get_items", body, return_response=True
        )
        if result.error:
            return self._failed(result)
        response = result.body.get("service_response") if isinstance(result.body, dict) else None
        answer = (
            (response or {}).get(self.device.homeassistant) if isinstance(response, dict) else None
        )
        listed = answer.get("items") if isinstance(answer, dict) else None
        if not isinstance(listed, list):
            return Reply(
                f"Home Assistant answered, but not with the {self.name}'s items.",
                Outcome.FAILED,
                ha.BAD_RESPONSE,
            )
        return [i for i in listed if isinstance(i, dict) and isinstance(i.get("summary"), str)]

    def read(self, asked: Sequence[str]) -> Reply:
        found = self.items()
        if isinstance(found, Reply):
            return found
        texts = [i["summary"] for i in found]
        if asked:  # "is milk on the shopping list"
            on = [a for a in asked if _find(found, a)]
            off = [a for a in asked if a not in on]
            parts = []
            if on:
                parts.append(f"Yes, {human_list(on)} {'is' if len(on) == 1 else 'are'} on it.")
            if off:
                parts.append(f"{human_list(off).capitalize()} isn't on the {self.name}.")
            return Reply(" ".join(parts), data={"list": self.name, "items": texts})
        if not texts:
            return Reply(f"The {self.name} is empty.", data={"list": self.name, "items": []})
        count = f"{len(texts)} item{'' if len(texts) == 1 else 's'}"
        return Reply(
            f"The {self.name} has {count}: {human_list(texts)}.",
            data={"list": self.name, "items": texts},
        )

    # changing ----------------------------------------------------------------------
    def add(self, items: Sequence[str]) -> Reply:
        items = [i for i in (x.strip() for x in items) if i]
        if not items:
            return Reply(f"What should I add to the {self.name}?", Outcome.ASKED)
        added: list[str] = []
        for item in items:
            result = self._call("add", item)
            if result.error:
                return self._partial(added, "Added", self._failed(result))
            added.append(item)
        return Reply(f"Added {human_list(added)} to the {self.name}.", data={"list": self.name})

    def change(self, action: str, said: Sequence[str]) -> Reply:
        verb = {"remove": "take off", "tick": "tick off", "untick": "put back"}[action]
        if not said:
            return Reply(f"Which item should I {verb}?", Outcome.ASKED)
        found = self.items((DONE,) if action == "untick" else (OPEN, DONE))
        if isinstance(found, Reply):
            return found
        done: list[str] = []
        missing = [s for s in said if _find(found, s) is None]
        for item in said:
            match = _find(found, item)
            if match is None:
                continue
            result = self._call(action, match["summary"])
            if result.error:
                return self._partial(done, _PAST[action], self._failed(result))
            done.append(match["summary"])
        parts = []
        if done:
            parts.append(f"{_PAST[action]} {human_list(done)} {_WHERE[action]} the {self.name}.")
        if missing:
            parts.append(f"Not on the {self.name}: {human_list(missing)}.")
            if not done:
                parts.append("Nothing was changed.")
        return Reply(
            " ".join(parts),
            data={"list": self.name, "done": done, "missing": missing},
            error_class="" if done else "not_found",
        )

    def _call(self, op: str, item: str) -> ha.HaResult:
        service, data = classes.call("todo", op, item)
        body = {"entity_id": self.device.homeassistant, **data}
        return ha.call_service(self.settings.homeassistant, service, body)

    def _failed(self, result: ha.HaResult) -> Reply:
        log.warning("todo %s: %s (%s)", self.device.homeassistant, result.error, result.detail)
        text = failure_sentence(
            self.settings, result.error, f"the {self.name}", True, result.status, result.detail
        )
        outcome = Outcome.UNAVAILABLE if "unreachable" in result.error else Outcome.FAILED
        return Reply(text, outcome, result.error)

    def _partial(self, done: list[str], verb: str, failed: Reply) -> Reply:
        if not done:
            return failed
        text = f"{verb} {human_list(done)}, then: {failed.text}"
        return Reply(text, failed.outcome, failed.error_class)


_PAST = {"add": "Added", "remove": "Took", "tick": "Ticked off", "untick": "Put back"}
_WHERE = {"remove": "off", "tick": "on", "untick": "on"}


def _find(items: list[dict[str, Any]], said: str) -> dict[str, Any] | None:
    """The item called `said` (case and spaces aside), or None: never a near one."""
    key = " ".join(said.casefold().split())
    for item in items:
        if " ".join(item["summary"].casefold().split()) == key:
            return item
    return None
