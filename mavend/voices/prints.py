"""The household's enrolled voices: one voiceprint per name, kept in the database.

A voiceprint is the normed mean of a person's enrollment embeddings. Enrolling refuses
recordings that do not sound like one voice (one of them far from the rest): a voiceprint
of two people would let either pass as the other. `identify(vector)` names the enrolled
voice nearest to an utterance when it is near enough (`threshold`) and no other voice is
about as near (`margin`), else nobody: "unknown" is the answer whenever in doubt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from mavend.config.voices import DEFAULT_MARGIN, DEFAULT_THRESHOLD
from mavend.errors import UsageError
from mavend.state.store import Store

# An enrollment recording this far from the others' mean is not the same voice.
MIN_AGREEMENT = 0.7
MIN_RECORDINGS = 3
_NAME = re.compile(r"^[a-z][a-z' -]{0,39}$")
# What a turn's speaker is called when no enrolled voice matches: never a voice's name.
RESERVED = frozenset({"unknown"})


@dataclass(frozen=True)
class VoicePrint:
    name: str
    vector: np.ndarray
    encoder: str
    utterances: int
    seconds: float
    enrolled_at: str


@dataclass(frozen=True)
class Identified:
    name: str | None  # None: unknown
    score: float  # cosine to the nearest voiceprint (-1 when none is enrolled)


def voice_name(name: str) -> str:
    """A spoken name as stored: lower case, letters, spaces, apostrophes and hyphens."""
    clean = " ".join(name.strip().lower().split())
    if not _NAME.match(clean):
        raise UsageError(f"a voice's name is a spoken name of letters (up to 40): {name!r}")
    if clean in RESERVED:
        raise UsageError(f"{clean!r} is what mavend calls a voice it does not know; "
                         "pick another name")
    return clean


def voiceprint(vectors: list[np.ndarray]) -> np.ndarray:
    """The normed mean of one voice's embeddings; refuses recordings of more than one."""
    if len(vectors) < MIN_RECORDINGS:
        raise UsageError(f"enrolling needs at least {MIN_RECORDINGS} recordings of the voice "
                         f"(got {len(vectors)})")
    stacked = np.stack(vectors)
    for index, vector in enumerate(stacked):
        rest = np.delete(stacked, index, axis=0).mean(axis=0)
        agreement = float(vector @ (rest / np.linalg.norm(rest)))
        if agreement < MIN_AGREEMENT:
            raise UsageError(
                f"recording {index + 1} does not sound like the others (similarity "
                f"{agreement:.2f}, at least {MIN_AGREEMENT} expected): one voice per enrollment"
            )
    mean = stacked.mean(axis=0)
    return (mean / np.linalg.norm(mean)).astype(np.float32)


class VoicePrints:
    def __init__(self, store: Store):
        self._store = store

    def enroll(self, name: str, vectors: list[np.ndarray], *, encoder: str,
               seconds: float) -> VoicePrint:
        """Store (or replace) `name`'s voiceprint from its recordings' embeddings."""
        name = voice_name(name)
        vector = voiceprint(vectors)
        at = datetime.now(UTC).isoformat(timespec="seconds")
        with self._store.write(f"enroll the voice {name!r}") as conn:
            conn.execute(
                "INSERT OR REPLACE INTO voices (name, vector, encoder, utterances, seconds,"
                " enrolled_at) VALUES (?, ?, ?, ?, ?, ?)",
                (name, vector.tobytes(), encoder, len(vectors), round(seconds, 2), at),
            )
        return VoicePrint(name, vector, encoder, len(vectors), round(seconds, 2), at)

    def all(self) -> list[VoicePrint]:
        with self._store.read() as conn:
            rows = conn.execute("SELECT * FROM voices ORDER BY name").fetchall()
        return [
            VoicePrint(r["name"], np.frombuffer(r["vector"], dtype=np.float32), r["encoder"],
                       r["utterances"], r["seconds"], r["enrolled_at"])
            for r in rows
        ]

    def forget(self, name: str) -> bool:
        with self._store.write(f"forget the voice {name!r}") as conn:
            return conn.execute("DELETE FROM voices WHERE name = ?",
                                (voice_name(name),)).rowcount > 0

    def identify(self, vector: np.ndarray, *, threshold: float = DEFAULT_THRESHOLD,
                 margin: float = DEFAULT_MARGIN, encoder: str = "") -> Identified:
        """The enrolled voice `vector` is, or nobody. Voiceprints of another encoder are
        not compared (their spaces differ)."""
        prints = [p for p in self.all() if not encoder or p.encoder == encoder]
        if not prints:
            return Identified(None, -1.0)
        scores = sorted(((float(vector @ p.vector), p.name) for p in prints), reverse=True)
        best, name = scores[0]
        second = scores[1][0] if len(scores) > 1 else -1.0
        if best < threshold or best - second < margin:
            return Identified(None, best)
        return Identified(name, best)
