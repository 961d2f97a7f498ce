"""The home benchmark (bench/home_bench.py) on a handful of flat_small requests: its judge
passes a request whose end state is right and fails one whose end state is wrong, one
that changes an entity it should not, one whose reply lacks the words asked for, and one
that runs an allowlisted program on this box instead of touching the home."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from bench.home_bench import main
from bench.home_bench_kit import HOMES_DIR, HomeRequest, load_requests, run_home


@pytest.fixture(scope="module")
def requests() -> dict[str, HomeRequest]:
    return {r.id: r for r in load_requests("flat_small")}


def test_the_runner_passes_right_end_states_and_fails_wrong_ones(
    tmp_path: Path, requests: dict[str, HomeRequest]
) -> None:
    turn_on = requests["flat_small-001"]  # "turn on the living room ceiling light"
    turn_off = requests["flat_small-002"]  # setup: on; expect: off
    asked = requests["flat_small-004"]  # "is the living room ceiling light on" (setup: on)
    assert turn_on.expect == {"light.living_room_ceiling_light": {"state": "on"}}
    wrong_state = dataclasses.replace(
        turn_on, id="wrong-state", expect={"light.living_room_ceiling_light": {"state": "off"}}
    )
    nothing_expected = dataclasses.replace(turn_on, id="nothing-expected", expect={})
    wrong_words = dataclasses.replace(asked, id="wrong-words", reply_has=(("off", "dark"),))
    wrong_attribute = dataclasses.replace(
        requests["flat_small-005"],  # "set the living room ceiling light to 40 percent"
        id="wrong-attribute",
        expect={
            "light.living_room_ceiling_light": {"state": "on", "attributes": {"brightness": 200}}
        },
    )
    box_act = HomeRequest(
        id="box-act", home="flat_small", cls="absent", kind="absent", text="turn the volume down"
    )
    run = run_home(
        "flat_small",
        tmp_path,
        requests=[
            turn_on,
            wrong_state,
            turn_off,
            nothing_expected,
            asked,
            wrong_words,
            requests["flat_small-005"],
            wrong_attribute,
            box_act,
        ],
    )
    assert len(run.imported.devices) == 19  # every entity
    results = {r.request.id: r for r in run.results}
    # Each request starts from the fixture: turn_off's setup (on) is what it turns off.
    assert [i for i, r in results.items() if r.passed] == [
        "flat_small-001",
        "flat_small-002",
        "flat_small-004",
        "flat_small-005",
    ], [r.problems for r in run.results]
    assert results["wrong-state"].problems == [
        "light.living_room_ceiling_light: state 'on', wanted 'off'"
    ]
    assert results["nothing-expected"].problems == [
        "light.living_room_ceiling_light changed: state 'off' -> 'on'"
    ]
    assert results["wrong-words"].problems == ["the reply has none of ['off', 'dark']"]
    assert results["wrong-attribute"].problems == [
        "light.living_room_ceiling_light: brightness 102, wanted 200"
    ]
    # The home is untouched, but a program of the allowlist ran on this box: a failure.
    assert results["box-act"].acts == ["volume_down"]
    assert results["box-act"].problems == ["ran volume_down on this box, not a home device"]
    assert all(len(r.turn_ms) == 1 and r.turn_ms[0] > 0 for r in run.results)


def test_the_command_line_prints_the_table_and_writes_the_raw_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A data folder of one home and two requests, the second expecting what cannot be.
    data = tmp_path / "homes"
    data.mkdir()
    shutil.copy(HOMES_DIR / "flat_small.json", data / "flat_small.json")
    rows = [json.loads(line) for line in (HOMES_DIR / "flat_small.requests.jsonl").open()]
    right, wrong = rows[0], {**rows[0], "id": "wrong-1", "expect": {
        "light.living_room_ceiling_light": {"state": "off"}}}  # fmt: skip
    (data / "flat_small.requests.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in (right, wrong))
    )
    out = tmp_path / "home.json"
    argv = ["--home", "flat_small", "--data", str(data), "--json", str(out), "--show-failures", "5"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    [home_line] = [ln for ln in printed.splitlines() if ln.split()[:2] == ["flat_small", "19"]]
    assert home_line.split()[:6] == ["flat_small", "19", "19", "2", "1/2", "50%"]
    assert f"FAIL wrong-1 [light/command] {right['text']!r}" in printed
    raw = json.loads(out.read_text())
    assert [(r["id"], r["passed"]) for r in raw["results"]] == [
        (right["id"], True),
        ("wrong-1", False),
    ]
    assert raw["homes"]["flat_small"]["devices"] == 19 and raw["llm"] is False
