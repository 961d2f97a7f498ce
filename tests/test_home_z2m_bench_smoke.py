"""The Zigbee2MQTT half of the home benchmark (bench/home_z2m_bench.py) on its small home:
every generated request passes, and its judge fails a request whose device is left in
another state, one that changes another device, one whose reply lacks the value read, and
one that runs an allowlisted program on this box."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from bench.home_z2m_bench import Request, make_home, requests_for, run_home


def test_the_small_z2m_home_passes_and_the_judge_fails_wrong_end_states(tmp_path: Path) -> None:
    devices = make_home(12)
    assert {d.type for d in devices} >= {
        "light", "plug", "switch", "cover", "fan", "climate", "sensor", "binary_sensor", "lock",
    }  # fmt: skip
    generated = [q for d in devices for q in requests_for(d, "z2m_small")]
    light = next(q for q in generated if q.text == "turn on the kitchen light")
    reading = next(q for q in generated if q.cls == "sensor")
    wrong = [
        dataclasses.replace(light, id="wrong-state", expect={"state": "OFF"}),
        dataclasses.replace(light, id="other-device", device="lounge plug", expect={}),
        dataclasses.replace(reading, id="wrong-value", reply_has="99.9"),
        Request("box-act", "absent", "turn the volume down", "kitchen light"),
    ]
    run = run_home("z2m_small", devices, tmp_path, [*generated, *wrong])
    results = {r.request.id: r for r in run}
    assert [i for i in results if results[i].problems] == [
        "wrong-state", "other-device", "wrong-value", "box-act",
    ], {i: r.problems for i, r in results.items() if r.problems}  # fmt: skip
    assert len(generated) == 36
    assert results["wrong-state"].problems == ["kitchen_light.state is 'ON', wanted 'OFF'"]
    assert results["other-device"].problems[0].startswith("kitchen_light changed:")
    assert results["wrong-value"].problems == ["the reply does not say '99.9'"]
    assert results["box-act"].problems[0].startswith("ran ['volume_down']")
