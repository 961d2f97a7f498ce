"""The list a follow-up means without naming it: "and bread" right after an add, "remove
the eggs" or "i've got the milk" right after a list was made, added to or read, and a task
said done ("i called the plumber"), which needs no list in focus: tasks are on the to-do
list. The focus lasts the conversation's continuation window, per session."""

from __future__ import annotations

import re
from dataclasses import replace

from mavend.handlers.common import HandlerContext, Outcome, Reply
from mavend.lists.handler import ListHandler
from mavend.lists.names import TODO
from mavend.lists.parse import (
    ListCommand,
    done_tasks,
    for_list_in_focus,
    items_for_it,
    more_items,
)

# "take that off", "actually take them off the list", "remove that from the list": the
# items just added, taken off again ("remove it" alone is a reminder's cancel).
_TAKE_IT_BACK = re.compile(
    r"^(?:(?:actually|no|oh|sorry|wait|um|please|can you|could you)\s+)*"
    r"(?:(?:take|get)\s+(?:that|it|those|them|that one)\s+(?:back\s+)?(?:off|out)"
    r"(?:\s+(?:of\s+)?(?:the|my|that)\s+list)?(?:\s+again)?"
    r"|(?:remove|delete)\s+(?:that|it|those|them)\s+from\s+(?:the|my|that)\s+list)"
    r"(?:\s+(?:please|again))?$"
)
KEY = "list_focus:"  # + session: the list just added to, made or read
# The actions that leave their list in focus: a list read out is too ("remove the eggs"
# after "what's on my list").
_KEPT = ("add", "create", "read", "remove", "tick")


class ListFocus:
    def __init__(self, ctx: HandlerContext, lists: ListHandler):
        self.ctx, self.lists = ctx, lists

    def follow_up(self, said: str, utterance: str, session: str) -> ListCommand | None:
        """The list command `said` is for the list in focus, or None."""
        focus = self.ctx.session.get(KEY + session, now_ts=self.ctx.now().timestamp())
        if not isinstance(focus, dict) or not focus.get("list"):
            return self._task_done(done_tasks(said, TODO), TODO)
        name = str(focus["list"])
        # "and jam" continues an add; after a list was read out it is no add of its own
        more = focus.get("after") != "read" and more_items(said, name, utterance=utterance)
        found = (more or items_for_it(said, name, utterance=utterance)
                 or for_list_in_focus(said, name, utterance=utterance))
        if found is not None and found.action == "bought":
            # "i've got the milk": ticked when each thing is on the list, else not a list turn
            if not self.lists.holds_open(name, found.items):
                return None
            found = replace(found, action="tick")
        if found is not None and found.action == "did":
            return self._task_done(found, name)
        return found

    def taken_back(self, said: str, session: str) -> ListCommand | None:
        """ "actually take that off", "remove them from the list" right after an add: the
        items just added, off again (it was "I don't know that command", or "Which item
        should I take off?", and the milk stayed on the list). None otherwise."""
        if not _TAKE_IT_BACK.match(said):
            return None
        focus = self.ctx.session.get(KEY + session, now_ts=self.ctx.now().timestamp())
        if not isinstance(focus, dict) or focus.get("after") != "add" or not focus.get("items"):
            return None
        return ListCommand("remove", str(focus["list"]), tuple(str(i) for i in focus["items"]))

    def keep(self, session: str, command: ListCommand, reply: Reply) -> None:
        """After an add, a create, a read, a removal or a tick: its list is in focus for
        the continuation window; any other list turn ends it."""
        key = KEY + session
        name = reply.data.get("list") if isinstance(reply.data, dict) else None
        if command.action in _KEPT and name and reply.outcome == Outcome.DONE:
            expires = self.ctx.now().timestamp() + self.ctx.settings.conversation.continuation_s
            items = list(command.items) if command.action == "add" else []
            self.ctx.session.put(key, {"list": name, "after": command.action, "items": items},
                                 expires_ts=expires)
        else:
            self.ctx.session.pop(key)

    def _task_done(self, found: ListCommand | None, name: str) -> ListCommand | None:
        """"i called the plumber": a tick of the task it names, when one is open on the
        list; else not a list turn."""
        if found is None:
            return None
        task = next((t for said in found.items if (t := self.lists.task_named(name, said))), None)
        return None if task is None else replace(found, action="tick", items=(task,))
