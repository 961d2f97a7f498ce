"""A destructive or bulk operation waits for a clear yes from the session that was asked.

End state asserted: the harmless destructive act (restart_service in the kit writes a
marker file) has or has not run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.state_kit import kit_settings, make_assistant


@pytest.mark.parametrize("yes", ["yes", "yes please", "do it", "go ahead", "yeah", "sure", "ok"])
def test_a_clear_yes_runs_it(tmp_path: Path, yes: str) -> None:
    a = make_assistant(kit_settings(tmp_path))
    assert a.handle_text("restart syncthing").reply.outcome == "confirm"
    assert not (tmp_path / "marker.txt").exists()
    turn = a.handle_text(yes)
    assert turn.decision.decided_by == "confirmation"
    assert (tmp_path / "marker.txt").read_text() == "syncthing"


@pytest.mark.parametrize(
    "said",
    [
        "ok so what's the time",
        "yes i mean no",
        "sure is cold today",
        "go ahead and tell me the time",
        "do it later",
    ],
)
def test_a_yes_inside_a_longer_sentence_is_not_a_yes(tmp_path: Path, said: str) -> None:
    a = make_assistant(kit_settings(tmp_path))
    assert a.handle_text("restart syncthing").reply.outcome == "confirm"
    turn = a.handle_text(said)
    assert turn.decision is None or turn.decision.decided_by != "confirmation"
    # The question lapsed with the turn that moved on: a later yes runs nothing either.
    assert a.handle_text("yes").decision.decided_by != "confirmation"
    assert not (tmp_path / "marker.txt").exists()


def test_a_yes_from_another_session_is_not_this_sessions_yes(tmp_path: Path) -> None:
    a = make_assistant(kit_settings(tmp_path))
    assert a.handle_text("restart syncthing", session="satellite:kitchen").reply.outcome == (
        "confirm"
    )
    assert a.handle_text("yes", session="local").decision.decided_by != "confirmation"
    assert not (tmp_path / "marker.txt").exists()
    assert a.handle_text("yes", session="satellite:kitchen").decision.decided_by == (
        "confirmation"
    )
    assert (tmp_path / "marker.txt").read_text() == "syncthing"


def test_no_and_a_withdrawal_both_leave_it_undone(tmp_path: Path) -> None:
    a = make_assistant(kit_settings(tmp_path))
    a.handle_text("restart syncthing")
    assert a.handle_text("no").reply.text == "OK, I won't."
    a.handle_text("restart syncthing")
    assert a.handle_text("no wait don't").decision.decided_by == "negation"
    assert a.handle_text("yes").decision.decided_by != "confirmation"
    assert not (tmp_path / "marker.txt").exists()
