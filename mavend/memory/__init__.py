"""Memory: the assistant gets better the more it is used.

    habits   each routed turn's judged intent is written back; a later, similar
             phrasing recalls it, so an unclear turn can be settled the way the
             user settled it before (never overriding a confident decision)
    repairs  a failure signature (utterance pattern + failing route + error
             class) -> the route and slots the user's correction showed; applied
             the next time the signature appears (proposed, for a destructive act)
    recall   a small sanitized block of both for the LLM's per-turn prompt
    preview  what memory would change about a turn, read-only (`mavend route`)

Per room: each session (the local one, a satellite, a Wyoming client) has its own
previous turn, so a correction reaches only the turn said just before it in the same
place; and only trusted sessions (the owner at this box, satellites marked `trusted`)
write habits, repairs or classifier examples. Everyone reads the owner's.

`Memory` is the one entry point (`Assistant` wires it around each turn);
`mavend memory list|forget` shows and deletes what was learned. With
`[memory] enabled = false` it does nothing at all: no table is written, nothing
is recalled.
"""

from mavend.memory.engine import Memory, Plan, voice_scope
from mavend.memory.preview import MemoryPreview, RouteView

__all__ = ["Memory", "MemoryPreview", "Plan", "RouteView", "voice_scope"]
