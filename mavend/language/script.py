"""Which language a request is in, told by its script.

Replies exist in English only (the one voice, hibari, speaks English), so a
request written or heard in Russian is answered in English and told so once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

ENGLISH_ONLY = "Replies are in English only."
# Words a Russian request may open with before saying what it wants ("ну", "слушай",
# "эм"): one list for every room that reads Russian commands (a regex alternation).
RUSSIAN_FILLER = r"(?:ну|а|так|это|слушай|пожалуйста|э+м*)"
_CYRILLIC = range(0x0400, 0x0530)


def is_russian(text: str) -> bool:
    """Whether most of the letters in text are Cyrillic."""
    letters = [ch for ch in text if ch.isalpha()]
    cyrillic = sum(1 for ch in letters if ord(ch) in _CYRILLIC)
    return bool(letters) and cyrillic * 2 > len(letters)


@dataclass
class EnglishOnlyNotice:
    """Says `ENGLISH_ONLY` after a Russian request: once per session, again after
    `every_s` (a household that keeps speaking Russian is not told every turn)."""

    every_s: float = 3600.0
    _told_at: dict[str, float] = field(default_factory=dict)

    def due(self, text: str, session: str, now: float | None = None) -> bool:
        if not is_russian(text):
            return False
        now = time.monotonic() if now is None else now
        told = self._told_at.get(session)
        if told is not None and now - told < self.every_s:
            return False
        self._told_at[session] = now
        return True
