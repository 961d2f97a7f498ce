"""Taking a turn back: "what did you just do?", "undo that", "undo the last two", "redo".

    parse_undo(said)           stage 0: is this an undo command?
    UndoHandler(ctx, journal)  records each turn's changes and takes them back
    UndoJournal(store, tz)     the changes table, per session

Handlers say what they changed as `Change`s on their `Reply` (mavend/replies.py); this
room keeps them and knows each one's inverse (inverse.py). A command that ran is
recorded but never undone, and nothing here runs an act.
"""

from mavend.undo.handler import UndoHandler
from mavend.undo.journal import ChangedTurn, UndoJournal
from mavend.undo.parse import UndoCommand, parse_undo

__all__ = ["ChangedTurn", "UndoCommand", "UndoHandler", "UndoJournal", "parse_undo"]
