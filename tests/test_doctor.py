from __future__ import annotations

from pathlib import Path

import pytest

from mavend.config import Settings, parse_settings
from mavend.doctor.checks import check_data_dir, check_models, check_session_bus, run_checks
from tests.conftest import require_model


def test_session_bus_with_a_notification_server_is_ok(notification_server: object) -> None:
    check = check_session_bus(Settings())
    assert check.ok, check.line()
    assert "notification server mavend-test-server" in check.detail


def test_session_bus_without_a_notification_server_fails_with_a_fix(session_bus: str) -> None:
    check = check_session_bus(Settings())
    assert not check.ok and "no notification server" in check.detail
    assert "dunst" in check.fix


def test_no_session_bus_fails_with_a_fix(no_session_bus: None) -> None:
    check = check_session_bus(Settings())
    assert not check.ok and "DBUS_SESSION_BUS_ADDRESS" in check.detail
    assert check.fix


def test_a_dead_bus_address_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path}/nothing-here")
    check = check_session_bus(Settings())
    assert not check.ok and "cannot connect" in check.detail


def test_data_dir_writable(tmp_path: Path) -> None:
    settings = parse_settings(f'[storage]\ndata_dir = "{tmp_path / "d"}"\n')
    assert check_data_dir(settings).ok
    assert not list((tmp_path / "d").iterdir()), "the probe file is cleaned up"


def test_data_dir_on_a_read_only_filesystem_fails() -> None:
    # /proc refuses new files even for root, so this holds under CI too.
    settings = parse_settings('[storage]\ndata_dir = "/proc/mavend-doctor-test"\n')
    check = check_data_dir(settings)
    assert not check.ok and check.fix


def test_data_dir_that_is_a_file_fails(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    settings = parse_settings(f'[storage]\ndata_dir = "{blocker / "sub"}"\n')
    check = check_data_dir(settings)
    assert not check.ok and "not writable" in check.detail and check.fix


def test_missing_models_name_the_pull_command(tmp_path: Path) -> None:
    settings = parse_settings(f'[models]\ndir = "{tmp_path / "empty"}"\n')
    checks = check_models(settings)
    assert checks and not any(c.ok for c in checks)
    assert all("mavend models pull" in c.fix for c in checks)


def test_every_check_reports_and_none_crashes(notification_server: object) -> None:
    checks = run_checks(Settings())
    names = [c.name for c in checks]
    assert {"audio input", "session bus", "data dir", "llm"} <= set(names)
    assert any(n.startswith("model ") for n in names)
    for check in checks:
        assert check.detail
        assert check.ok or check.fix or "Error" in check.detail, check.line()
    (llm,) = [c for c in checks if c.name == "llm"]
    # Named by the file it loads, and by the name the file gives itself.
    assert llm.ok, llm.line()
    assert llm.detail.startswith(str(require_model("qwen2.5-0.5b-instruct-q4_k_m")))
    assert "(Qwen2.5 Coder 0.5B Instruct" in llm.detail


# --- the speech model this box can afford (mavend/doctor/speech.py) -----------------------
def test_the_speech_check_times_both_models_on_this_box() -> None:
    from mavend.doctor.speech import check_speech_model

    for name in ("whisper-tiny.en", "whisper-base", "hibari-heart"):
        require_model(name)
    check = check_speech_model(Settings())
    assert check.ok, check.line()
    # Both were decoded here, each with its time, and the verdict names a model.
    assert "whisper-tiny.en " in check.detail and "whisper-base " in check.detail
    assert "not pulled" not in check.detail
    assert "keep whisper-tiny.en" in check.detail or 'model = "whisper-base"' in check.detail


def test_the_speech_verdict_names_the_strongest_model_within_budget() -> None:
    from mavend.doctor.speech import BUDGET_MS, Timed, _verdict

    fits = _verdict("whisper-tiny.en", [Timed("whisper-tiny.en", 80.0),
                                        Timed("whisper-base", 150.0)], 2.5)
    assert fits.ok and 'set [stt] model = "whisper-base"' in fits.detail
    slow = _verdict("whisper-tiny.en", [Timed("whisper-tiny.en", 120.0),
                                        Timed("whisper-base", BUDGET_MS + 1)], 2.5)
    assert slow.ok and slow.detail.endswith("keep whisper-tiny.en")
    kept = _verdict("whisper-base", [Timed("whisper-base", 150.0),
                                     Timed("whisper-tiny.en", 80.0)], 2.5)
    assert kept.ok and kept.detail.endswith("keep whisper-base")
    unpulled = _verdict("whisper-tiny.en", [Timed("whisper-tiny.en", 80.0),
                                            Timed("whisper-base", None)], 2.5)
    assert unpulled.ok and "mavend models pull --profile whisper-base" in unpulled.detail
    over = _verdict("whisper-base", [Timed("whisper-base", 3 * BUDGET_MS),
                                     Timed("whisper-tiny.en", 90.0)], 2.5)
    assert not over.ok and over.fix == 'set [stt] model = "whisper-tiny.en"'
    missing = _verdict("whisper-base", [Timed("whisper-base", None)], 2.5)
    assert not missing.ok and missing.fix == "mavend models pull --profile whisper-base"


def test_a_remote_speech_server_is_not_timed_here() -> None:
    from mavend.doctor.speech import check_speech_model

    settings = parse_settings('[stt]\nbackend = "wyoming"\nuri = "tcp://127.0.0.1:10300"\n')
    check = check_speech_model(settings)
    assert check.ok and "not timed here" in check.detail
