"""Semantic recall over notes and facts, and answers phrased only from what was recalled.

Rows are scored by the cosine of their sentence embedding with the question's,
plus a small bonus per shared content word (names and numbers that an
embedding blurs). Below a floor nothing is recalled, and the answer is "I
don't know": the LLM is never asked to fill a gap. When it phrases an answer,
it sees the recalled rows only, and an answer that states a number the rows do
not contain is replaced by the plain recalled text.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from mavend.handlers.common import REPLY_TIMEOUT_S, HandlerContext, content_stems, fingerprint
from mavend.handlers.fact import fact_phrase
from mavend.scheduler import spoken_time

log = logging.getLogger(__name__)

# Measured with USE-multilingual on paraphrase pairs here: paraphrases of a
# stored note score 0.37-0.69 (plus the word bonus), unrelated questions < 0.26.
MIN_SCORE = 0.42
WORD_BONUS = 0.1  # per shared content word, at most two
# Without an embedder: the share of the question's content words a row must hold.
MIN_WORD_SHARE = 0.5

# Measured on the 0.5B model: asking it to turn "I" into "you" made it answer
# "You and your."; the pronouns are swapped in code instead (`to_second_person`).
PHRASE_SYSTEM = (
    "You answer the owner's question from their own notes, listed below, and from nothing "
    "else. Answer in one short spoken sentence. If the notes do not answer the question, "
    "reply exactly: I don't know.\nNotes:\n"
)


@dataclass(frozen=True)
class Recalled:
    kind: str  # note | fact
    id: int
    text: str
    at: datetime
    score: float


class Recall:
    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx

    def search(self, question: str) -> list[Recalled]:
        limit = self.ctx.settings.memory.recall_max_items or 5
        rows = self._rows()
        if not rows:
            return []
        embedder = self.ctx.embedder()
        wanted = content_stems(question)
        scores = (
            self._semantic(question, rows, wanted, embedder)
            if embedder is not None
            else self._lexical(rows, wanted)
        )
        found = [
            Recalled(kind, row_id, text, at, score)
            for (kind, row_id, text, at, _, _), score in zip(rows, scores, strict=True)
            if score is not None
        ]
        found.sort(key=lambda r: (-r.score, -r.at.timestamp()))
        return found[:limit]

    def _rows(self) -> list[tuple[str, int, str, datetime, np.ndarray | None, str]]:
        rows = [("note", n.id, n.text, n.at, vec, emb) for n, vec, emb in self.ctx.notes.recent()]
        rows += [
            ("fact", f.id, f.utterance or fact_phrase(f.key, f.value), f.at, vec, emb)
            for f, vec, emb in self.ctx.facts.recent()
        ]
        return rows

    def _semantic(self, question, rows, wanted, embedder) -> list[float | None]:
        name = fingerprint(embedder)
        query = embedder.embed([question])[0]
        vectors = []
        for kind, row_id, text, _, vector, stored_by in rows:
            if vector is None or stored_by != name or vector.shape != query.shape:
                # Saved without an embedder, or by another model: embed now, keep it.
                vector = embedder.embed([text])[0]
                self._cache(kind, row_id, vector, name)
            vectors.append(vector)
        cosines = np.stack(vectors) @ query
        out: list[float | None] = []
        for (_, _, text, _, _, _), cosine in zip(rows, cosines, strict=True):
            score = float(cosine) + WORD_BONUS * min(len(wanted & content_stems(text)), 2)
            out.append(score if score >= MIN_SCORE else None)
        return out

    @staticmethod
    def _lexical(rows, wanted) -> list[float | None]:
        out: list[float | None] = []
        for _, _, text, _, _, _ in rows:
            share = len(wanted & content_stems(text)) / len(wanted) if wanted else 0.0
            out.append(share if share >= MIN_WORD_SHARE else None)
        return out

    def _cache(self, kind: str, row_id: int, vector: np.ndarray, name: str) -> None:
        book = self.ctx.notes if kind == "note" else self.ctx.facts
        try:
            book.set_embedding(row_id, vector, name)
        except Exception:  # a cache: recall works without it
            log.debug("caching an embedding failed", exc_info=True)


def recall_block(found: list[Recalled], ctx: HandlerContext) -> str:
    """The rows as the LLM sees them, within the configured bounds."""
    memory = ctx.settings.memory
    lines, used = [], 0
    for row in found[: memory.recall_max_items]:
        text = row.text[: memory.recall_item_chars]
        line = f"- ({row.at:%Y-%m-%d}) {text}"
        if used + len(line) > memory.recall_max_chars:
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def plain_answer(found: list[Recalled], ctx: HandlerContext) -> str:
    now = ctx.now()
    top = found[0]
    said = "noted" if top.kind == "note" else "logged"
    answer = f"You {said} at {spoken_time(top.at, now)}: {top.text}"
    if len(found) > 1:
        answer += f". Also: {found[1].text}"
    return answer.rstrip(".") + "."


_NUMBER = re.compile(r"\d+(?:[.:]\d+)?")


def grounded(answer: str, found: list[Recalled], question: str) -> bool:
    """The answer says something from the rows, and no number they do not contain."""
    known = " ".join(
        [question, *(r.text for r in found), *(f"{r.at:%Y-%m-%d %H:%M}" for r in found)]
    )
    allowed = set(_NUMBER.findall(known))
    if not all(number in allowed for number in _NUMBER.findall(answer)):
        return False
    # A word from the rows that the question did not already hold: an answer
    # that only echoes the question (or says nothing) tells the user nothing.
    from_rows = set().union(*(content_stems(r.text) for r in found)) - content_stems(question)
    return bool(content_stems(answer) & from_rows)


_SECOND_PERSON = {
    "i": "you",
    "me": "you",
    "my": "your",
    "mine": "yours",
    "myself": "yourself",
    "i'm": "you're",
    "i've": "you've",
    "i'll": "you'll",
    "i'd": "you'd",
}
_PRONOUN = re.compile(r"\b(?:i am|i was|i'm|i've|i'll|i'd|i|me|my|mine|myself)\b", re.IGNORECASE)


def to_second_person(text: str) -> str:
    """The notes are the owner's words ("my passport"); the answer speaks to them."""

    def swap(match: re.Match[str]) -> str:
        word = match.group().lower()
        out = {"i am": "you are", "i was": "you were"}.get(word) or _SECOND_PERSON[word]
        return out.capitalize() if match.start() == 0 else out

    return _PRONOUN.sub(swap, text)


def phrase_answer(question: str, found: list[Recalled], ctx: HandlerContext) -> str:
    """The LLM's answer from the recalled rows only; the plain rows when it is off or strays."""
    llm = ctx.chat_llm()
    if llm is None:
        return plain_answer(found, ctx)
    messages = [
        {"role": "system", "content": PHRASE_SYSTEM + recall_block(found, ctx)},
        {"role": "user", "content": question},
    ]
    try:
        reply = llm.complete_chat(
            messages, max_tokens=ctx.settings.router.llm_max_tokens, timeout_s=REPLY_TIMEOUT_S
        )
    except Exception as exc:  # a timeout or a broken model: the rows still answer
        log.warning("phrasing the answer failed (%s); answering with the notes", exc)
        return plain_answer(found, ctx)
    text = str(getattr(reply, "text", reply)).strip()
    if not text or not grounded(text, found, question):
        log.info("the LLM's answer %r is not grounded in the notes; using them as they are", text)
        return plain_answer(found, ctx)
    if "don't know" in text.lower() or "do not know" in text.lower():
        # The rows were the best we had; say what they are rather than nothing.
        return plain_answer(found, ctx)
    return to_second_person(text)
