"""Taking one change back. Each kind has its inverse, and the inverse's own record, so
that an undo can itself be taken back (a redo).

    reminder.set / reminder.restore  {ids}         -> cancel them       -> reminder.cancel
    reminder.cancel                  {ids}         -> pending again     -> reminder.restore
    reminder.edit                    {id, before, after} -> as before   -> reminder.edit
    note.add                         {id, text}    -> delete the note   -> note.delete
    note.delete                      {text}        -> the note again    -> note.add
    note.edit                        {id, before, after} -> old words   -> note.edit
    fact.add                         {id, key, value, utterance} -> delete -> fact.delete
    fact.delete                      {key, value, utterance}     -> again  -> fact.add
    list.add                         {list, added, reopened}     -> off / ticked again
    list.remove                      {list, texts} -> back on the list  -> list.add
    list.tick / list.untick          {list, ids}   -> the other way     -> list.untick / tick
    list.edit / fact.edit / note.edit {id, before, after} -> the old words back
    device.set                       {act, devices} -> the allowlist's device act the other way
                                     (only devices Home Assistant reported as switched)
    act.while                        {ids, act, args, room, what} -> the while ends now: its
                                     scheduled opposite ("unmute the sound") runs, its row is
                                     cancelled (an act for a while: mavend.handlers.timed)

Anything else, or a change recorded as not undoable (a command that ran), is refused
with a sentence saying why. The only acts run here are the way back the change itself
recorded, checked against the allowlist as it stands: a device switched back, a while's
opposite run early; never a destructive act.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mavend.handlers.act import ActHandler
from mavend.handlers.common import HandlerContext
from mavend.home.run import HomeActs
from mavend.lists import ListBook
from mavend.replies import Change, Outcome, human_list
from mavend.scheduler import Status


@dataclass(frozen=True)
class Undone:
    """What taking a change back did: the change that would redo it and a clause, "cancelled
    the timer for 10 minutes"; or, nothing left to take back (`redo` None), a clause that
    says why, "the note had already gone"."""

    redo: Change | None
    said: str


class CannotUndo(Exception):
    """The change cannot be taken back; the message says why, as a sentence."""


class Inverses:
    def __init__(self, ctx: HandlerContext, lists: ListBook):
        self.ctx, self.lists = ctx, lists
        self._table: dict[str, Callable[[Change], Undone]] = {
            "reminder.set": self._cancel_reminders,
            "reminder.restore": self._cancel_reminders,
            "reminder.cancel": self._restore_reminders,
            "reminder.edit": self._put_back_reminder,
            "note.add": self._delete_note,
            "note.delete": self._add_note,
            "note.edit": self._note_back,
            "fact.add": self._delete_fact,
            "fact.delete": self._add_fact,
            "list.add": self._take_off_list,
            "list.remove": self._put_back_on_list,
            "list.tick": lambda c: self._tick(c, done=False),
            "list.untick": lambda c: self._tick(c, done=True),
            "list.edit": self._item_back,
            "fact.edit": self._fact_back,
            "device.set": self._switch_back,
            "act.while": self._end_while,
        }

    def undo(self, change: Change) -> Undone:
        inverse = self._table.get(change.kind)
        if not change.undoable or inverse is None:
            why = str(change.ref.get("why", ""))
            because = f": {why}" if why else ""
            raise CannotUndo(f"I can't take back that I {change.summary}{because}.")
        return inverse(change)

    # reminders -----------------------------------------------------------
    def _cancel_reminders(self, change: Change) -> Undone:
        ids = [int(i) for i in change.ref.get("ids", [])]
        what = str(change.ref.get("what") or "the reminder")
        pending = [r.id for r in self.ctx.reminders.pending() if r.id in ids]
        if not pending:
            return Undone(None, f"{what} had already gone")
        self.ctx.reminders.cancel_many(pending)
        self.ctx.on_reminders_changed()
        said = f"cancelled {what}"
        return Undone(Change("reminder.cancel", said, {"ids": pending, "what": what}), said)

    def _restore_reminders(self, change: Change) -> Undone:
        now = self.ctx.now()
        ids = [int(i) for i in change.ref.get("ids", [])]
        what = str(change.ref.get("what") or "the reminder")
        restored = [r.id for i in ids if (r := self.ctx.reminders.restore(i, now=now))]
        if not restored:
            return Undone(None, f"{what} stays cancelled: its time has passed")
        self.ctx.on_reminders_changed()
        said = f"put back {what}"
        return Undone(Change("reminder.restore", said, {"ids": restored, "what": what}), said)

    def _put_back_reminder(self, change: Change) -> Undone:
        """A move, rename, pause, snooze or added time, put back as it was."""
        ref = change.ref
        what = str(ref.get("what") or "the reminder")
        reminder_id = int(ref.get("id", 0))
        if not self.ctx.reminders.put_back(reminder_id, dict(ref.get("before", {})),
                                           now=self.ctx.now()):  # fmt: skip
            return Undone(None, f"{what} can't go back: it has fired, gone, or its old time "
                                "has passed")  # fmt: skip
        self.ctx.on_reminders_changed()
        said = f"put {what} back as it was"
        redo = {**ref, "before": ref.get("after", {}), "after": ref.get("before", {})}
        return Undone(Change("reminder.edit", f"changed {what} again", redo), said)

    # notes and facts -----------------------------------------------------
    def _delete_note(self, change: Change) -> Undone:
        text = str(change.ref.get("text", ""))
        if not self.ctx.notes.delete(int(change.ref.get("id", 0))):
            return Undone(None, f"the note “{text}” had already gone")
        ref = {"text": text, "speaker": str(change.ref.get("speaker", ""))}
        return Undone(Change("note.delete", f"deleted the note “{text}”", ref),
                      f"deleted the note “{text}”")  # fmt: skip

    def _add_note(self, change: Change) -> Undone:
        text = str(change.ref.get("text", ""))
        vector, embedder = self.ctx.embed(text)
        speaker = str(change.ref.get("speaker", ""))  # whose it was, as it was
        note = self.ctx.notes.add(text, self.ctx.now(), embedding=vector, embedder=embedder,
                                  speaker=speaker)
        what = f"noted “{text}” again"
        ref = {"id": note.id, "text": text, "speaker": speaker}
        return Undone(Change("note.add", what, ref), what)

    def _note_back(self, change: Change) -> Undone:
        ref = change.ref
        before, after = str(ref.get("before", "")), str(ref.get("after", ""))
        vector, embedder = self.ctx.embed(before)
        if not self.ctx.notes.edit(int(ref.get("id", 0)), before, embedding=vector,
                                   embedder=embedder):  # fmt: skip
            return Undone(None, "that note had already gone")
        said = f"changed the note back to “{before}”"
        redo = {**ref, "before": after, "after": before}
        return Undone(Change("note.edit", f"changed the note to “{after}” again", redo), said)

    def _fact_back(self, change: Change) -> Undone:
        ref = change.ref
        before, after = str(ref.get("before", "")), str(ref.get("after", ""))
        if not self.ctx.facts.edit(int(ref.get("id", 0)), before):
            return Undone(None, "that entry had already gone")
        redo = {**ref, "before": after, "after": before}
        return Undone(Change("fact.edit", f"changed it to “{after}” again", redo),
                      f"changed it back to “{before}”")  # fmt: skip

    def _delete_fact(self, change: Change) -> Undone:
        ref = dict(change.ref)
        if not self.ctx.facts.delete(int(ref.pop("id", 0))):
            return Undone(None, "that entry had already gone")
        what = f"took back “{ref.get('utterance') or ref.get('value')}”"
        return Undone(Change("fact.delete", what, ref), what)

    def _add_fact(self, change: Change) -> Undone:
        ref = change.ref
        utterance = str(ref.get("utterance", ""))
        vector, embedder = self.ctx.embed(utterance or f"{ref.get('key')} {ref.get('value')}")
        fact = self.ctx.facts.add(
            str(ref.get("key", "")),
            str(ref.get("value", "")),
            self.ctx.now(),
            utterance=utterance,
            embedding=vector,
            embedder=embedder,
            speaker=str(ref.get("speaker", "")),
        )
        what = f"logged “{utterance or fact.value}” again"
        return Undone(Change("fact.add", what, {**ref, "id": fact.id}), what)

    # lists ---------------------------------------------------------------
    def _take_off_list(self, change: Change) -> Undone:
        name = str(change.ref.get("list", ""))
        by_id = {i.id: i.text for i in self.lists.items(name) or []}
        added = [int(i) for i in change.ref.get("added", []) if int(i) in by_id]
        reopened = [int(i) for i in change.ref.get("reopened", [])]
        texts = [by_id[i] for i in added]
        gone = self.lists.remove(name, added)
        ticked = self.lists.tick(name, reopened, done=True)
        if not gone and not ticked:
            return Undone(None, f"the {name} list had changed since")
        what = f"took {', '.join(texts) or 'them'} off the {name} list again"
        redo = Change("list.remove", what, {"list": name, "texts": texts})
        if ticked:  # ticked ones were put back by the add: tick them off again
            return Undone(redo, what + " and ticked the rest off again")
        return Undone(redo, what)

    def _put_back_on_list(self, change: Change) -> Undone:
        name = str(change.ref.get("list", ""))
        texts = [str(t) for t in change.ref.get("texts", [])]
        result = self.lists.add(name, texts)
        added = [i.id for i in result.added]
        what = f"put {', '.join(texts)} back on the {name} list"
        return Undone(
            Change("list.add", what, {"list": name, "added": added, "reopened": []}), what
        )

    def _item_back(self, change: Change) -> Undone:
        ref = change.ref
        name = str(ref.get("list", ""))
        before, after = str(ref.get("before", "")), str(ref.get("after", ""))
        if self.lists.rename_item(name, int(ref.get("id", 0)), before) is None:
            return Undone(None, f"the {name} list had changed since")
        redo = {**ref, "before": after, "after": before}
        return Undone(Change("list.edit", f"changed {before} to {after} again", redo),
                      f"changed {after} back to {before}")  # fmt: skip

    def _tick(self, change: Change, *, done: bool) -> Undone:
        name = str(change.ref.get("list", ""))
        ids = [int(i) for i in change.ref.get("ids", [])]
        changed = self.lists.tick(name, ids, done=done)
        if not changed:
            return Undone(None, f"the {name} list had changed since")
        what = f"{'ticked' if done else 'unticked'} them on the {name} list again"
        kind = "list.tick" if done else "list.untick"
        return Undone(Change(kind, what, {"list": name, "ids": changed}), what)

    # devices -------------------------------------------------------------
    def _switch_back(self, change: Change) -> Undone:
        """Switch back the devices that reported they were the other way. Only a generated
        device act from the allowlist is run: never a command, never a written act."""
        act = self.ctx.settings.acts.get(str(change.ref.get("act", "")))
        if act is None or act.kind != "device" or act.name not in _SWITCHES:
            raise CannotUndo(f"I can't take back that I {change.summary}.")
        switched: list[str] = []
        for name in [str(n) for n in change.ref.get("devices", [])]:
            done = HomeActs(self.ctx.settings).run(act, {"device": name}, "")
            if done.sent:
                self.ctx.acts.add(self.ctx.now(), act.name, done.sent, exit_code=None,
                                  error_class=done.reply.error_class, stdout=done.reply.text,
                                  stderr=done.detail, duration_ms=0.0)  # fmt: skip
            if done.reply.outcome is Outcome.DONE:
                switched.append(name)
        if not switched:  # nothing switched back: the turn stays as it was, to try again
            names = human_list([f"the {n}" for n in change.ref.get("devices", [])])
            raise CannotUndo(f"I couldn't switch {names} back just now.")
        op = "off" if act.name == "device_off" else "on"
        said = f"turned {op} {human_list([f'the {n}' for n in switched])} again"
        redo = {"act": _SWITCHES[act.name], "devices": switched, "op": op}
        return Undone(Change("device.set", said.removesuffix(" again"), redo), said)

    def _end_while(self, change: Change) -> Undone:
        """"mute for an hour", then "undo that": the sound comes back now and nothing is
        left to run later. Once the while is over there is nothing to take back."""
        ref = change.ref
        ids = [int(i) for i in ref.get("ids", [])]
        what = str(ref.get("what") or "put it back")
        rows = [r for r in self.ctx.reminders.list(statuses=None) if r.id in ids]
        if not any(r.status is Status.PENDING for r in rows):
            if any(r.status is Status.CANCELLED for r in rows):
                return Undone(None, f"“{what}” had been cancelled already, so it stays as it is")
            return Undone(None, f"the while was already over: I ran “{what}” when it ended")
        args = {str(k): str(v) for k, v in dict(ref.get("args") or {}).items()}
        ran = ActHandler(self.ctx).run_stored(str(ref.get("act", "")), args,
                                              str(ref.get("room") or ""), what)  # fmt: skip
        if ran.outcome is not Outcome.DONE:  # the row stays: it still puts it back later
            raise CannotUndo(f"I couldn't {what} just now. {ran.text}")
        self.ctx.reminders.cancel_many(ids)
        self.ctx.on_reminders_changed()
        said = f"ran “{what}” now instead of at {ref.get('at') or 'the end'}"
        return Undone(Change("act.run", said, {"act": str(ref.get("act", ""))},
                             undoable=False), said)  # fmt: skip


_SWITCHES = {"device_on": "device_off", "device_off": "device_on"}
