"""The token the time grammar runs on: canonical text that keeps its offsets."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Tok:
    text: str  # canonical text
    start: int  # offsets in the original input
    end: int
    gap: bool  # whitespace before it in the input
    kind: str  # "num" | "word" | "punct"
    spoken: bool = False  # a number that was written as words
