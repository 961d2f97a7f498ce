"""note: free text kept with its sentence embedding, for recall by meaning later."""

from __future__ import annotations

from mavend.handlers.common import HandlerContext, Reply
from mavend.replies import Change
from mavend.router.decision import Decision

ECHO_CHARS = 80


class NoteHandler:
    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx

    def handle(self, decision: Decision) -> Reply:
        return self.save(decision.slots.text.strip() or decision.utterance.strip())

    def kept(self) -> list[str]:
        """The words of the notes kept and the facts' keys ("wifi password"), newest
        first: what a change of value ("change the wifi password to ...") may be about."""
        notes = [note.text for note, _, _ in self.ctx.notes.recent(500)]
        return notes + self.ctx.facts.keys()

    def save(self, text: str, *, prefix: str = "Noted") -> Reply:
        refused = self.ctx.voice_refusal("keep notes")
        if refused is not None:
            return refused
        vector, embedder = self.ctx.embed(text)
        note = self.ctx.notes.add(text, self.ctx.now(), embedding=vector, embedder=embedder,
                                  speaker=self.ctx.owner_of_writes())
        echo = text if len(text) <= ECHO_CHARS else text[: ECHO_CHARS - 1] + "…"
        ref = {"id": note.id, "text": text, "speaker": note.speaker}
        change = Change("note.add", f"noted “{echo}”", ref)
        return Reply(f"{prefix}: {echo}", data={"note_id": note.id}, changes=(change,))
