"""Grammar intents for acts that are not on the allowlist (the device acts, with no
[[devices]] configured) are ignored quietly: a debug line once per process, not an INFO
line per intent on every `mavend say`."""

from __future__ import annotations

import logging

import pytest

from mavend import paths
from mavend.config import Settings
from mavend.router.grammar import CommandGrammar


def load(settings: Settings) -> CommandGrammar:
    return CommandGrammar.from_dir(paths.grammars_dir(), settings.acts, settings.router.wake_words)


def test_a_grammar_load_with_default_settings_logs_nothing_at_info_about_the_allowlist(
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = Settings()
    with caplog.at_level(logging.DEBUG, logger="mavend"):
        load(settings)
        load(settings)
    about = [r for r in caplog.records if "allowlist" in r.getMessage()]
    assert [r for r in about if r.levelno >= logging.INFO] == []
    # Each ignored intent is mentioned at most once, however often the grammar loads.
    names = [r.getMessage().split(": ")[1].split()[0] for r in about]
    assert len(names) == len(set(names)), names
    # The intents are in the grammar files, and still left out.
    assert "act.device_on:" in (paths.grammars_dir() / "home.yaml").read_text()
    assert "act.device_on" not in load(settings).intent_names
