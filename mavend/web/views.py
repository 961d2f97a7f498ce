"""What the page shows, read from the database: plain JSON, no HTML here."""

from __future__ import annotations

import json
from typing import Any

from mavend.assistant import Assistant
from mavend.lists import ListBook

RECENT_TURNS = 50
RECENT_RECORDS = 200


def state(assistant: Assistant) -> dict[str, Any]:
    """Everything the page draws, in one read (run off the event loop)."""
    ctx = assistant.ctx
    book = ListBook(ctx.store, ctx.tz, clock=ctx.clock)
    lists = [
        {
            "name": summary.name,
            "items": [
                {"id": i.id, "text": i.text, "done": i.done} for i in book.items(summary.name) or []
            ],
        }
        for summary in book.lists()
    ]
    return {
        "reminders": [r.to_json() for r in ctx.reminders.list()],
        "lists": lists,
        "notes": [
            {"id": n.id, "text": n.text, "at": n.at.isoformat()}
            for n, _vector, _embedder in ctx.notes.recent(RECENT_RECORDS)
        ],
        "facts": [
            {
                "id": f.id,
                "key": f.key,
                "value": f.value,
                "at": f.at.isoformat(),
                "said": f.utterance,
            }
            for f, _vector, _embedder in ctx.facts.recent(RECENT_RECORDS)
        ],
        "turns": turns(assistant),
        "changes": changes(assistant),
        "memory": memory(assistant),
    }


def turns(assistant: Assistant) -> list[dict[str, Any]]:
    """The latest turns: what was heard, the decision, the reply, how long it took."""
    with assistant.store.read() as conn:
        rows = conn.execute(
            "SELECT id, at, utterance, intent, decision, reply, outcome, duration_ms"
            " FROM turns ORDER BY id DESC LIMIT ?",
            (RECENT_TURNS,),
        ).fetchall()
    out = []
    for row in rows:
        decision = json.loads(row["decision"]) if row["decision"] else None
        out.append(
            {
                "id": row["id"],
                "at": row["at"],
                "heard": row["utterance"],
                "intent": row["intent"],
                "decision": decision,
                "reply": row["reply"],
                "outcome": row["outcome"],
                "ms": round(row["duration_ms"], 1),
            }
        )
    return out


def changes(assistant: Assistant) -> list[dict[str, Any]]:
    """The latest turns that changed something, every room's, with what undo would do."""
    return [
        {
            "turn": t.turn,
            "session": t.session,
            "at": t.at.isoformat(),
            "said": t.said,
            "did": [c.summary for c in t.changes],
            "undoable": any(c.undoable for c in t.changes) and not t.undone,
            "undone": t.undone,
        }
        for t in assistant.undo.journal.latest(RECENT_TURNS)
    ]


def memory(assistant: Assistant) -> dict[str, Any]:
    """What memory learned for the owner and each enrolled voice ("voice": "" is the
    household's): phrasing habits and repairs that worked."""
    engine = assistant.memory
    if not engine.enabled:
        return {"enabled": False, "habits": [], "repairs": []}
    scopes = engine.table.scopes_under(engine.scope)
    habits = sorted((h for scope in scopes for h in engine.table.habits(scope, RECENT_TURNS)),
                    key=lambda h: (h.at, h.id), reverse=True)[:RECENT_TURNS]
    repairs = [r for scope in scopes for r in engine.table.repairs(scope)]
    return {
        "enabled": True,
        "habits": [
            {"id": h.id, "said": h.utterance, "intent": h.intent, "fn": h.fn,
             "source": h.source, "at": h.at, "voice": _voice(h.scope)}
            for h in habits
        ],
        "repairs": [
            {"id": r.id, "said": r.utterance, "intent": r.intent, "fn": r.fn,
             "worked": r.successes, "failed": r.failures, "at": r.at,
             "voice": _voice(r.scope)}
            for r in repairs
        ],
    }  # fmt: skip


def _voice(scope: str) -> str:
    """ "owner:sam" -> "sam"; the household's own scope -> ""."""
    return scope.partition(":")[2]
