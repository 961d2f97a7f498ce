"""A day and an hour said apart, with the task between them ("remind me on friday to
call bob at 3"): the reminder fires on that day at that hour and its text is the task
alone. Once it fired on Friday at 09:00 as "call bob at 3". Judged by the reminders table."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from mavend.config import parse_settings
from tests.state_kit import TZ, MovableClock, make_assistant

NOW = datetime(2026, 3, 11, 14, 20, tzinfo=TZ)  # a Wednesday afternoon


@pytest.mark.parametrize(
    ("said", "text", "fires"),
    [
        ("remind me on friday to call bob at 3", "call bob", datetime(2026, 3, 13, 15, 0)),
        ("remind me tomorrow to call the plumber at 9 am", "call the plumber",
         datetime(2026, 3, 12, 9, 0)),
        ("remind me on march 20 to book the party room at 8 pm", "book the party room",
         datetime(2026, 3, 20, 20, 0)),
        ("remind me on friday to ring the garage in the evening", "ring the garage",
         datetime(2026, 3, 13, 19, 0)),
        # the hour of a thing, not of the reminder: the day's default hour, text kept
        ("remind me tomorrow to check the 3 o'clock train", "check the 3 o'clock train",
         datetime(2026, 3, 12, 9, 0)),
        # two hours for one day: neither is picked; the day's default hour, the words kept
        ("remind me tomorrow to take the pills at 7 and at 8", "take the pills at 7 and at 8",
         datetime(2026, 3, 12, 9, 0)),
    ],
)  # fmt: skip
def test_the_day_and_the_hour_apart(
    tmp_path: Path, said: str, text: str, fires: datetime
) -> None:
    settings = parse_settings(
        f'[router]\nllm_enabled = false\n[storage]\ndata_dir = "{tmp_path / "data"}"\n'
    )
    assistant = make_assistant(settings, clock=MovableClock(NOW))
    try:
        assistant.handle_text(said)
        rows = assistant.store.connection().execute("SELECT text, fire_at FROM reminders")
        rows = rows.fetchall()
    finally:
        assistant.store.close()
    assert [(r["text"], datetime.fromisoformat(r["fire_at"])) for r in rows] == [
        (text, fires.replace(tzinfo=TZ))
    ]
