"""The undo turns: "what did you just do?", "undo that", "undo the last two", "redo".

Only this session's turns are seen: a room cannot take back what was said in another.
An undo is itself a turn that changed something, recorded with the turn it took back,
so the next "undo that" puts it back (a redo).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from mavend.handlers.common import HandlerContext
from mavend.lists import ListBook
from mavend.replies import Change, Outcome, Reply, human_list
from mavend.undo.inverse import CannotUndo, Inverses
from mavend.undo.journal import ChangedTurn, UndoJournal
from mavend.undo.parse import UndoCommand, names_the_change

# How long after a change a "don't <do it>" is about that change, said too late to stop
# it: the reply was still being heard.
LATE_NEGATION = timedelta(minutes=2)


class UndoHandler:
    def __init__(self, ctx: HandlerContext, journal: UndoJournal):
        self.ctx, self.journal = ctx, journal
        self.inverses = Inverses(ctx, ListBook(ctx.store, ctx.tz, clock=ctx.clock))

    def command(self, command: UndoCommand, session: str) -> Reply:
        if command.action == "what":
            return self._what(session)
        if command.action == "redo":
            return self._redo(session)
        return self._undo(session, command.turns)

    def record(self, session: str, said: str, reply: Reply) -> None:
        """Keep what a turn changed (the assistant calls this after every turn)."""
        self.journal.record(session, said, reply.changes, self.ctx.now())

    def _what(self, session: str) -> Reply:
        latest = self.journal.recent(session, 1, undone=True)
        if not latest:
            return Reply("I haven't changed anything yet.")
        turn = latest[0]
        did = human_list([c.summary for c in turn.changes])
        taken_back = " That has been taken back since." if turn.undone else ""
        return Reply(
            f"I {did}.{taken_back}",
            data={"turn": turn.turn, "said": turn.said, "undone": turn.undone},
        )

    def _undo(self, session: str, count: int) -> Reply:
        # As in an editor: "undo, undo" goes two steps back; an undo is taken back only
        # by "redo".
        recent = self.journal.recent(session, count * 4 + 8)
        turns = [t for t in recent if self._role(t) != "undo"][:count]
        if not turns:
            return Reply("There's nothing to undo.", error_class="not_found")
        clauses: list[str] = []  # what was taken back
        gone: list[str] = []  # what had nothing left to take back, and why
        refusals: list[str] = []  # what can never be taken back
        undone_turns: list[int] = []
        for turn in turns:  # newest first: the reverse of the order they were done in
            done, nothing, refused = self._take_back(session, turn)
            clauses.extend(done)
            gone.extend(nothing)
            refusals.extend(refused)
            if done or nothing:
                undone_turns.append(turn.turn)
        return _told(clauses, gone, refusals, undone_turns)

    def undo_turn(self, turn: int, session: str) -> Reply:
        """Take back one recorded turn by its number, whichever room it was said in: the
        page's undo button (the household's own page, behind its login)."""
        found = self.journal.get(turn)
        if found is None:
            return Reply("There is no such change.", Outcome.REFUSED, "not_found")
        if found.undone:
            return Reply("That has already been taken back.", Outcome.REFUSED, "not_found")
        done, nothing, refused = self._take_back(session, found)
        return _told(done, nothing, refused, [turn] if done or nothing else [])

    def already_done(self, session: str, negated: str) -> Reply | None:
        """ "don't cancel it", said just after it was cancelled: the change it names is
        taken back, and the reply says it had been done. None when this session's last
        change is older than `LATE_NEGATION`, taken back already, or not what was named."""
        latest = self.journal.recent(session, 1)
        if not latest or self._role(latest[0]) != "change":
            return None
        turn = latest[0]
        if self.ctx.now() - turn.at > LATE_NEGATION or not names_the_change(
                negated, [c.kind for c in turn.changes], [c.summary for c in turn.changes]):
            return None
        turn = self._only_named(turn, negated)
        done, nothing, refused = self._take_back(session, turn)
        if not done:
            return None if not (nothing or refused) else _told(done, nothing, refused, [])
        did = human_list([c.summary for c in turn.changes])
        return Reply(f"I had already {did}, so I've taken it back: I {human_list(done)}.",
                     data={"undone_turns": [turn.turn]})

    def _only_named(self, turn: ChangedTurn, negated: str) -> ChangedTurn:
        """ "don't add eggs" after "add eggs and bread": only the eggs come off (the
        items a list add put on that the words name, when they name some, not all)."""
        if len(turn.changes) != 1 or turn.changes[0].kind != "list.add":
            return turn
        change = turn.changes[0]
        name = str(change.ref.get("list", ""))
        by_id = {i.id: i.text for i in self.inverses.lists.items(name) or []}
        added = [int(i) for i in change.ref.get("added", []) if int(i) in by_id]
        said = f" {negated.lower()} "
        named = [i for i in added if f" {by_id[i].lower()} " in said]
        if not named or len(named) == len(added) or change.ref.get("reopened"):
            return turn
        texts = human_list([by_id[i] for i in named])
        narrowed = Change("list.add", f"added {texts} to your {name} list",
                          {**change.ref, "added": named})
        return replace(turn, changes=(narrowed,))

    def _redo(self, session: str) -> Reply:
        latest = self.journal.recent(session, 1)
        if not latest or self._role(latest[0]) != "undo":
            return Reply("There's nothing to redo.", error_class="not_found")
        done, nothing, refused = self._take_back(session, latest[0])
        return _told(done, nothing, refused, [latest[0].turn] if done or nothing else [])

    def _role(self, turn: ChangedTurn) -> str:
        """"change"; "undo" when it took back a change or a redo (an odd number of steps
        back to a change); "redo" when it took back an undo (an even number)."""
        depth = 0
        while turn.undo_of is not None and depth < 100:
            target = self.journal.get(turn.undo_of)
            if target is None:
                break
            turn, depth = target, depth + 1
        if depth == 0:
            return "change"
        return "undo" if depth % 2 else "redo"

    def _take_back(
        self, session: str, turn: ChangedTurn
    ) -> tuple[list[str], list[str], list[str]]:
        """(what was taken back, what had nothing left and why, what can never be)."""
        done: list[str] = []
        nothing: list[str] = []
        refused: list[str] = []
        redo: list[Change] = []
        for change in reversed(turn.changes):
            try:
                undone = self.inverses.undo(change)
            except CannotUndo as exc:
                refused.append(str(exc))
                continue
            if undone.redo is None:
                nothing.append(undone.said)
            else:
                done.append(undone.said)
                redo.append(undone.redo)
        if done or nothing:
            # Recorded even when nothing was left to redo: the turn counts as taken back.
            self.journal.record(
                session, f"undo: {turn.said}", redo or [_nothing(turn)], self.ctx.now(),
                undo_of=turn.turn,
            )  # fmt: skip
        return done, nothing, refused


def _told(
    clauses: list[str], gone: list[str], refusals: list[str], undone_turns: list[int]
) -> Reply:
    sentences = [f"Undone: I {human_list(clauses)}."] if clauses else []
    if gone:
        why = "; ".join(gone)
        sentences.append(f"{why[0].upper()}{why[1:]}." if clauses else f"Nothing to undo: {why}.")
    sentences.extend(refusals)
    if not undone_turns:
        return Reply(" ".join(sentences), Outcome.REFUSED, "not_undoable")
    return Reply(" ".join(sentences), data={"undone_turns": undone_turns})


def _nothing(turn: ChangedTurn) -> Change:
    return Change("noop", f"found nothing left of “{turn.said}” to take back", undoable=False)
