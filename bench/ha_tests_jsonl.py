"""Home Assistant's intent tests for one language as router eval rows (issue 25, Russian).

    git clone https://github.com/home-assistant/intents /tmp/intents   # once, by hand
    .venv/bin/python bench/ha_tests_jsonl.py /tmp/intents/tests/ru > bench/out/ha_ru.jsonl
    .venv/bin/mavend eval router bench/out/ha_ru.jsonl --mode all

Each test sentence becomes {"text", "intent", "source", "source_ref"}, its intent the one
mavend's own handler for that request is (the mapping the external English set uses:
device control and timer changes are acts, a timer started is a reminder, states, the
date, the weather and a timer's status are queries, an item added to a list is a note).
HA intents with no mavend counterpart (HassNevermind, ...) are left out and counted on
stderr. Only for measuring: nothing here reaches a grammar, a prompt or an example.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import yaml

INTENTS = {
    "HassTurnOn": "act", "HassTurnOff": "act", "HassToggle": "act", "HassLightSet": "act",
    "HassSetPosition": "act", "HassSetVolume": "act", "HassSetVolumeRelative": "act",
    "HassMediaNext": "act", "HassMediaPrevious": "act", "HassMediaPause": "act",
    "HassMediaUnpause": "act", "HassMediaSearchAndPlay": "act", "HassBroadcast": "act",
    "HassClimateSetTemperature": "act", "HassVacuumStart": "act", "HassVacuumReturnToBase": "act",
    "HassCancelTimer": "act", "HassCancelAllTimers": "act", "HassIncreaseTimer": "act",
    "HassDecreaseTimer": "act", "HassPauseTimer": "act", "HassUnpauseTimer": "act",
    "HassShoppingListCompleteItem": "act",
    "HassStartTimer": "reminder",
    "HassGetState": "query", "HassClimateGetTemperature": "query", "HassGetWeather": "query",
    "HassGetCurrentDate": "query", "HassGetCurrentTime": "query", "HassTimerStatus": "query",
    "HassShoppingListAddItem": "note", "HassListAddItem": "note",
}


def rows(tests_dir: Path):
    skipped: Counter[str] = Counter()
    for path in sorted(tests_dir.glob("*.yaml")):
        if path.name.startswith("_"):
            continue
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for index, test in enumerate(data.get("tests") or []):
            intent = (test.get("intent") or {}).get("name", "")
            mapped = INTENTS.get(intent)
            if mapped is None:
                skipped[intent] += len(test.get("sentences") or [])
                continue
            for sentence in test.get("sentences") or []:
                yield {"text": sentence, "intent": mapped, "source": f"ha_intents:{intent}",
                       "source_ref": f"tests/{tests_dir.name}/{path.name} tests[{index}]"}
    for intent, count in sorted(skipped.items()):
        print(f"left out: {intent} ({count} sentences)", file=sys.stderr)


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    for row in rows(Path(sys.argv[1])):
        print(json.dumps(row, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
