"""How a note is asked for is not part of the note: the row keeps what was said after it.

Found by hand: "put a note that the boiler was serviced today" was kept as "put a note
that the boiler was serviced today" (and read back that way). Judged by the notes table.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from tests.state_kit import TZ, MovableClock, kit_settings, make_assistant

NOW = datetime(2026, 12, 7, 10, 0, tzinfo=TZ)


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("put a note that the boiler was serviced today", "the boiler was serviced today"),
        ("jot down a note saying the gate code is 4512", "the gate code is 4512"),
        ("could you leave a note that the plumber comes thursday",
         "the plumber comes thursday"),
        ("make a note that the car needs tyres", "the car needs tyres"),
        ("remember that the spare key is under the blue pot",
         "the spare key is under the blue pot"),
    ],
)
def test_the_note_is_what_follows_the_asking(tmp_path: Path, said: str, kept: str) -> None:
    helper = make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW))
    turn = helper.handle_text(said)
    notes = [note.text for note, _, _ in helper.ctx.notes.recent()]
    assert notes == [kept], turn.to_json()
