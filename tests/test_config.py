from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from mavend.config import Settings, load_settings, parse_settings
from mavend.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent


def test_example_config_is_exactly_the_defaults() -> None:
    example = parse_settings((ROOT / "config.example.toml").read_text(), "config.example.toml")
    assert example == Settings()


def test_example_config_documents_every_key() -> None:
    documented = tomllib.loads((ROOT / "config.example.toml").read_text())
    defaults = Settings()
    for section, fields in documented.items():
        if section == "acts":
            continue
        assert set(fields) == set(vars(getattr(defaults, section))), section
    # [[devices]], [[floors]] and [[satellites]] are arrays of tables: documented as commented
    # examples (tests/test_home.py parses the example home uncommented).
    assert set(documented) == {name for name in vars(defaults)} - {"devices", "floors",
                                                                  "satellites"}


def test_missing_default_file_means_defaults() -> None:
    assert load_settings() == Settings()


def test_explicit_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "nope.toml")


def test_config_file_in_xdg_dir_is_read(private_dirs: Path) -> None:
    path = private_dirs / "config" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text("[router]\nclarify_threshold = 0.7\n")
    assert load_settings().router.clarify_threshold == 0.7


def test_malformed_toml_names_the_line() -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings("[audio]\nblock_ms = 80\nthreshold = = 1\n", "c.toml")
    assert "c.toml" in str(info.value) and "line 3" in str(info.value)


@pytest.mark.parametrize(
    ("text", "key", "line", "message"),
    [
        ("[audio]\nblok_ms = 80\n", "audio.blok_ms", 2, "unknown key"),
        ('\n[wakeword]\nthreshold = "0.5"\n', "wakeword.threshold", 3, "valid number"),
        ("[wakeword]\nthreshold = 1.5\n", "wakeword.threshold", 2, "less than or equal"),
        ('[stt]\ncompute_type = "fp8"\n', "stt.compute_type", 2, "int8"),
        ("[nonsense]\nx = 1\n", "nonsense", 1, "unknown key"),
        ('[router]\nwake_words = "jarvis"\n', "router.wake_words", 2, "valid array"),
    ],
)
def test_bad_values_name_the_key_and_the_line(text: str, key: str, line: int, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings(text, "c.toml")
    assert f"c.toml:{line}: `{key}`" in str(info.value)
    assert message in str(info.value)


def test_acts_errors_point_into_the_right_array_entry() -> None:
    text = """
[[acts.allow]]
name = "ok_one"
argv = ["true"]

[[acts.allow]]
name = "bad_one"
argv = ["echo", "{what}"]
timeout_s = 0
"""
    with pytest.raises(ConfigError) as info:
        parse_settings(text, "c.toml")
    assert "c.toml:9: `acts.allow[1].timeout_s`: Input should be greater than 0" in str(info.value)
    with pytest.raises(ConfigError) as info:
        parse_settings(text.replace("timeout_s = 0", ""), "c.toml")
    assert "c.toml:6: `acts.allow[1]`" in str(info.value) and "what" in str(info.value)


@pytest.mark.parametrize(
    "acts",
    [
        '[[acts.allow]]\nname = "x"\nargv = []\n',
        '[[acts.allow]]\nname = "x"\nargv = ["{prog}"]\n[acts.allow.slots.prog]\nvalues = ["ls"]\n',
        '[[acts.allow]]\nname = "Bad Name"\nargv = ["true"]\n',
        '[[acts.allow]]\nname = "x"\nargv = ["true"]\n[[acts.allow]]\nname = "x"\nargv = ["ls"]\n',
        '[[acts.allow]]\nname = "x"\nargv = ["a", "{s}"]\n[acts.allow.slots.s]\ntype = "enum"\n',
        '[[acts.allow]]\nname = "x"\nargv = ["a", "{s}"]\n[acts.allow.slots.s]\n'
        'type = "pattern"\npattern = "("\n',
    ],
)
def test_unsafe_or_incomplete_acts_are_rejected(acts: str) -> None:
    with pytest.raises(ConfigError):
        parse_settings(acts, "c.toml")


def test_settings_are_frozen() -> None:
    settings = Settings()
    with pytest.raises(Exception, match=r"frozen|cannot assign"):
        settings.router.clarify_threshold = 0.1  # type: ignore[misc]


def test_paths_follow_storage_settings(tmp_path: Path) -> None:
    settings = parse_settings(f'[storage]\ndata_dir = "{tmp_path}"\ndatabase = "x.db"\n')
    assert settings.storage.database_path() == tmp_path / "x.db"
