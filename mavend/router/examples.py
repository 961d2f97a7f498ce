"""The classifier's labelled examples: the shipped bank and the user's corrections.

The bank (`mavend/data/intents/<label>.jsonl`, one file per label) was written
for this project: utterances the way people talk to a speaker, never copied or
paraphrased from the measurement data under shared/eval (tests/test_bank.py
checks for exact and near duplicates). Besides the seven intents it has two
labels for input that is no request mavend should act on:

- `unsupported`: a request or question a home box cannot handle (pay a bill,
  drive the car): the turn is declined with a question, never written;
- `fragment`: no request at all (fillers, cut-off phrases, keyboard mash).

The user's corrections go to an append-only file in the data directory
(`append_example`; the memory module writes it) and win over the bank.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from mavend.router.decision import Intent, Source

__all__ = [
    "LABELS",
    "OUT_OF_SCOPE",
    "USER_EXAMPLES_FILENAME",
    "Example",
    "append_example",
    "builtin_examples_dir",
    "load_examples",
    "read_examples",
]

log = logging.getLogger(__name__)

USER_EXAMPLES_FILENAME = "intent_examples.user.jsonl"
UNSUPPORTED = "unsupported"
FRAGMENT = "fragment"
OUT_OF_SCOPE = frozenset({UNSUPPORTED, FRAGMENT})
# Every label the classifier knows: the intents first, in the enum's order.
LABELS: tuple[str, ...] = (*(str(i) for i in Intent), UNSUPPORTED, FRAGMENT)
# The sources a query example may be tagged with (the bank's query rows all are).
SOURCES: tuple[str, ...] = tuple(s.value for s in Source if s.value)


@dataclass(frozen=True)
class Example:
    """One labelled utterance. `intent` is one of `LABELS` (an `Intent` or out of scope)."""

    text: str
    intent: str
    # query: where the answer lives (a Source value), for the classifier's source head
    source: str = ""

    def __post_init__(self) -> None:
        label = str(self.intent)
        if label not in LABELS:
            raise ValueError(f"unknown label {label!r}; one of {', '.join(LABELS)}")
        object.__setattr__(self, "intent", label)
        if self.source and (label != "query" or self.source not in SOURCES):
            raise ValueError(f"source {self.source!r}: only a query has one, one of {SOURCES}")

    @property
    def in_scope(self) -> bool:
        return self.intent not in OUT_OF_SCOPE

    def to_json(self) -> dict[str, str]:
        row = {"text": self.text, "intent": self.intent}
        return row | ({"source": self.source} if self.source else {})


def builtin_examples_dir() -> Path:
    """The labelled examples shipped in the package, one JSONL file per label."""
    return Path(str(resources.files("mavend").joinpath("data", "intents")))


def builtin_example_files(directory: Path | None = None) -> list[Path]:
    return sorted((directory or builtin_examples_dir()).glob("*.jsonl"))


def load_examples(builtin: Path | None, user: Path | None) -> list[Example]:
    """The shipped examples (a directory or one file), then the user's (later lines win)."""
    examples = read_builtin(builtin)
    if user is not None:
        examples.extend(read_examples(user, strict=False))
    return examples


def read_builtin(builtin: Path | None) -> list[Example]:
    """The shipped bank: strict, because a bad line is a packaging bug."""
    if builtin is not None and builtin.is_file():
        return read_examples(builtin, strict=True)
    files = builtin_example_files(builtin)
    if not files:
        raise ValueError(f"no example files (*.jsonl) in {builtin or builtin_examples_dir()}")
    return [e for path in files for e in read_examples(path, strict=True)]


def append_example(user_file: Path, example: Example) -> None:
    """Append one example as a JSON line and fsync it; earlier lines are never touched."""
    user_file.parent.mkdir(parents=True, exist_ok=True)
    created = not user_file.exists()
    row: dict[str, Any] = example.to_json()
    row["added"] = datetime.now(UTC).isoformat(timespec="seconds")
    line = json.dumps(row, ensure_ascii=False) + "\n"
    with open(user_file, "ab") as fh:
        # A crash mid-append can leave a last line without its newline; start a
        # fresh line so this row is not glued onto the torn one.
        if fh.tell() > 0 and not _ends_with_newline(user_file):
            line = "\n" + line
        fh.write(line.encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())
    if created:
        _fsync_dir(user_file.parent)  # the new directory entry must survive a crash too


def read_examples(path: Path, *, strict: bool) -> list[Example]:
    """One JSONL file. Strict: a bad line raises. Lenient (the user's file): a line
    torn by a crash mid-append is skipped with a warning, because losing one
    correction beats refusing to start."""
    if not strict and not path.exists():
        return []
    with open(path, encoding="utf-8") as fh:
        return list(_parse_lines(path, fh, strict=strict))


def _parse_lines(path: Path, lines: Iterable[str], *, strict: bool) -> Iterable[Example]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield _parse_example(line)
        except (ValueError, TypeError, KeyError) as exc:
            if strict:
                raise ValueError(f"{path}:{number}: bad example line: {exc}") from exc
            log.warning("%s:%d: skipping a bad example line (%s)", path, number, exc)


def _parse_example(line: str) -> Example:
    row = json.loads(line)
    if not isinstance(row, dict):
        raise TypeError("not a JSON object")
    text = row["text"]
    if not isinstance(text, str) or not text.strip():
        raise ValueError("text must be a non-empty string")
    return Example(text=text.strip(), intent=str(row["intent"]), source=str(row.get("source", "")))


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # not every filesystem lets a directory be opened; best effort
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
