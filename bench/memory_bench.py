"""Memory bench: corrections that stick, and router accuracy after a week of use.

1. Correction scenarios (written for this bench, never taken from shared/eval):
   the user says something, the router gets it wrong (or asks), the user
   corrects it once; then the same utterance and a paraphrase are said again.
   Figure: the share of those next turns that come out right.
2. A simulated week: ~100 turns of an owner's own phrasing (written here),
   with a few corrections and clarify answers, through the real Assistant with
   memory on. Then the router is measured on shared/eval/router_dev.jsonl with
   what was learned (memory on: habits, repairs, corrected classifier examples)
   and without (memory off), scored exactly as `mavend eval router` scores.

Router: grammar + the real USE classifier, no LLM (the 0.5B LLM costs ~1 s a
turn on two cores; the memory hooks around it are the same).

    .venv/bin/python bench/memory_bench.py [--eval ../shared/eval/router_dev.jsonl]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mavend import paths  # noqa: E402
from mavend.assistant import Assistant  # noqa: E402
from mavend.config import (  # noqa: E402
    ActsSettings,
    MemorySettings,
    ReminderSettings,
    Settings,
    StorageSettings,
)
from mavend.machine import describe_machine  # noqa: E402
from mavend.router import RoutePolicy, Router  # noqa: E402
from mavend.router.classifier import (  # noqa: E402
    CentroidClassifier,
    UseEmbedder,
    cached_embeddings,
)
from mavend.router.decision import Decision  # noqa: E402
from mavend.router.evaluate import RouterReport, read_rows  # noqa: E402
from mavend.router.examples import read_builtin  # noqa: E402
from mavend.router.grammar import CommandGrammar  # noqa: E402
from mavend.router.slots import SlotExtractor  # noqa: E402
from mavend.store import Store  # noqa: E402

SUCCESS = ("done", "confirm", "unavailable")  # as mavend.memory.engine counts a success
TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 3, 10, 9, 0, tzinfo=TZ)
PY = sys.executable

# (first utterance, paraphrase, what the user meant, how they correct it)
# The correction is "no, I meant <label>" for an intent, or a whole request.
SCENARIOS: list[tuple[str, str, str, str]] = [
    (
        "remember to call the dentist at four",
        "remember to ring the dentist at four",
        "reminder",
        "no, I meant set a reminder",
    ),
    (
        "remember the bins tonight at eight",
        "remember the bins at eight tonight",
        "reminder",
        "no, I meant a reminder",
    ),
    (
        "don't let me forget the laundry at six",
        "don't let me forget laundry at six pm",
        "reminder",
        "no, I meant set a reminder",
    ),
    (
        "milk and eggs for the weekend",
        "eggs and milk for the weekend",
        "note",
        "no, I meant take a note",
    ),
    (
        "the wifi password is on the router",
        "wifi password is on the router box",
        "note",
        "no, I meant take a note",
    ),
    (
        "anna's birthday is the third of june",
        "anna has her birthday on the third of june",
        "note",
        "no, I meant a note",
    ),
    (
        "bike tyre pressure sixty psi",
        "bike tyre pressure is sixty psi",
        "note",
        "no, I meant take a note",
    ),
    ("two espressos", "two espressos just now", "fact", "no, I meant log it"),
    ("ran five kilometres", "ran five kilometres this morning", "fact", "no, I meant log it"),
    ("slept badly", "slept badly last night", "fact", "no, I meant log that"),
    ("headache again", "a headache again", "fact", "no, I meant log it"),
    ("vitamin d taken", "took the vitamin d", "fact", "no, I meant log that"),
    ("weight seventy two", "weight seventy two kilos", "fact", "no, I meant log it"),
    (
        "the kettle at half seven",
        "kettle at half past seven",
        "reminder",
        "no, I meant set a reminder",
    ),
    ("standup in ten", "standup in ten minutes", "reminder", "no, I meant a reminder"),
    (
        "pasta in nine minutes",
        "the pasta in nine minutes",
        "reminder",
        "no, I meant set a reminder",
    ),
    (
        "laundry in forty minutes",
        "the laundry in forty minutes",
        "reminder",
        "no, I meant a reminder",
    ),
    ("meds at nine tonight", "my meds at nine tonight", "reminder", "no, I meant set a reminder"),
    ("is the oven still on", "is the oven on still", "query", "no, I meant answer a question"),
    ("population of lisbon", "the population of lisbon", "query", "no, I meant answer a question"),
    (
        "boiling point of water at altitude",
        "water boiling point at altitude",
        "query",
        "no, I meant answer a question",
    ),
    ("how tall is mont blanc", "mont blanc how tall", "query", "no, I meant answer a question"),
    ("lights too bright", "the lights are too bright", "system", "no, I meant lower the volume"),
    ("too loud", "that is too loud", "system", "no, I meant turn the volume down"),
    ("can't hear a thing", "i can't hear a thing", "system", "no, I meant turn the volume up"),
    ("screen off I'm going", "I'm going, screen off", "act", "no, I meant lock the screen"),
    ("silence please", "silence now please", "act", "no, I meant mute the sound"),
    ("next one", "the next one please", "act", "no, I meant skip to the next track"),
    ("back one song", "one song back", "act", "no, I meant go back to the previous track"),
    ("hold the music", "hold the music a moment", "act", "no, I meant pause the music"),
    (
        "shopping list add coffee filters",
        "add coffee filters to shopping",
        "note",
        "no, I meant take a note",
    ),
    (
        "parking level minus two spot b12",
        "parked on level minus two spot b12",
        "note",
        "no, I meant a note",
    ),
    (
        "passport in the top drawer",
        "the passport is in the top drawer",
        "note",
        "no, I meant take a note",
    ),
    ("locker code 3318", "the locker code is 3318", "note", "no, I meant a note"),
    ("glass of water", "one glass of water", "fact", "no, I meant log it"),
    ("fed the cat", "cat fed", "fact", "no, I meant log that"),
    ("watered the plants", "plants watered", "fact", "no, I meant log it"),
    (
        "blood sugar one hundred ten",
        "blood sugar at one hundred ten",
        "fact",
        "no, I meant log that",
    ),
    ("mood pretty good today", "today mood pretty good", "fact", "no, I meant log it"),
    ("call grandma sunday", "call grandma on sunday", "reminder", "no, I meant set a reminder"),
    (
        "pay rent on the first",
        "rent payment on the first",
        "reminder",
        "no, I meant set a reminder",
    ),
    ("dentist friday at ten", "the dentist on friday at ten", "reminder", "no, I meant a reminder"),
    (
        "take the cake out in twenty",
        "cake out in twenty minutes",
        "reminder",
        "no, I meant set a reminder",
    ),
    ("check the mail at noon", "check mail at noon", "reminder", "no, I meant a reminder"),
    (
        "what did I log about coffee",
        "what did I log for coffee",
        "query",
        "no, I meant answer a question",
    ),
    ("when is sunset today", "sunset today when", "query", "no, I meant answer a question"),
    ("distance to the moon", "the distance to the moon", "query", "no, I meant answer a question"),
    ("tell me something funny", "say something funny", "chat", "no, I meant just chat"),
    ("you did well today", "you did really well today", "chat", "no, I meant just chat"),
    ("good night maven", "good night to you maven", "chat", "no, I meant just chat"),
    (
        "spare battery in the hall cupboard",
        "the spare battery is in the hall cupboard",
        "note",
        "no, I meant take a note",
    ),
    (
        "idea: a bird feeder by the window",
        "idea a bird feeder near the window",
        "note",
        "no, I meant a note",
    ),
    ("steps nine thousand", "nine thousand steps", "fact", "no, I meant log it"),
    ("three hours of deep work", "deep work three hours", "fact", "no, I meant log it"),
    (
        "the plumber at two tomorrow",
        "plumber tomorrow at two",
        "reminder",
        "no, I meant set a reminder",
    ),
    ("tea in four minutes", "the tea in four minutes", "reminder", "no, I meant a reminder"),
    ("who wrote dune", "who was the author of dune", "query", "no, I meant answer a question"),
    ("capital of australia", "australia capital city", "query", "no, I meant answer a question"),
    ("louder", "a bit louder", "system", "no, I meant turn the volume up"),
    ("quieter", "a bit quieter", "system", "no, I meant turn the volume down"),
    ("pause it", "pause that", "act", "no, I meant pause the music"),
    ("skip", "skip it", "act", "no, I meant skip to the next track"),
    ("volume forty", "volume at forty", "act", "no, I meant set the volume to forty"),
    ("restart the sound server", "restart the audio server", "act", "no, I meant restart pipewire"),
]

LABEL = {
    "reminder": "no, I meant set a reminder",
    "note": "no, I meant take a note",
    "fact": "no, I meant log it",
    "query": "no, I meant answer a question",
}
# Terse phrasings, corrected with the intent's label: (utterance, paraphrase, intent).
TERSE: list[tuple[str, str, str]] = [
    ("the pharmacy before it closes at seven", "pharmacy before it closes at seven", "reminder"),
    ("my eye drops in three hours", "eye drops in three hours", "reminder"),
    ("the sourdough in two hours", "sourdough in two hours", "reminder"),
    ("the library books on thursday at five", "library books thursday at five", "reminder"),
    ("the lasagne in forty minutes", "lasagne in forty minutes", "reminder"),
    ("the tickets on sale at ten tomorrow", "tickets on sale tomorrow at ten", "reminder"),
    ("speed of sound", "the speed of sound", "query"),
    ("are tomatoes fruit", "are tomatoes a fruit", "query"),
    ("the longest river in the world", "longest river in the world", "query"),
    ("speed of light", "the speed of light", "query"),
    ("melting point of iron", "the melting point of iron", "query"),
    ("the largest ocean", "largest ocean on earth", "query"),
    ("are bats blind", "are bats really blind", "query"),
    ("the school closes early on fridays", "school closes early on fridays", "note"),
    ("the spare bulbs are above the sink", "spare bulbs are above the sink", "note"),
    ("the ladder is in the garage", "ladder is in the garage", "note"),
    ("the allen keys are behind the door", "allen keys behind the door", "note"),
    ("pizza place on elm street is the good one", "the good pizza place is on elm street", "note"),
    ("my shoe size is forty three", "shoe size forty three", "note"),
    ("our table at the restaurant was number nine", "table number nine at the restaurant", "note"),
    ("the hammer is in the shed", "hammer is in the shed", "note"),
    ("the tent is in the attic", "tent is up in the attic", "note"),
    ("the bike key is on the hook by the door", "bike key on the hook by the door", "note"),
    ("the christmas lights are under the stairs", "christmas lights under the stairs", "note"),
    ("the warranty is in the manual", "warranty is inside the manual", "note"),
    ("the extension cord is in the hall closet", "extension cord in the hall closet", "note"),
    ("my reading glasses are on the piano", "reading glasses are on the piano", "note"),
    ("the fuse box is behind the coats", "fuse box behind the coats", "note"),
    ("the landlord's number ends in 45", "landlord number ends in 45", "note"),
    ("the gate code is 1990", "gate code 1990", "note"),
    ("practised piano for half an hour", "practised the piano for half an hour", "fact"),
    ("skipped breakfast", "skipped my breakfast", "fact"),
    ("one beer", "had one beer", "fact"),
    ("cycled to work", "cycled to work today", "fact"),
    ("read thirty pages", "read thirty pages tonight", "fact"),
    ("skipped lunch", "skipped lunch today", "fact"),
    ("cycled home", "cycled back home", "fact"),
    ("slept in", "slept in today", "fact"),
    ("went swimming", "went swimming today", "fact"),
    ("cleaned the kitchen", "kitchen cleaned", "fact"),
    ("did the dishes", "dishes done", "fact"),
    ("called mum", "called my mum", "fact"),
    ("practised guitar for twenty minutes", "guitar practice twenty minutes", "fact"),
    ("sat in the sun for an hour", "sat in the sun an hour", "fact"),
]
SCENARIOS += [(u, p, i, LABEL[i]) for u, p, i in TERSE]

# A week of an owner's own phrasing, with a few corrections and clarify answers.
WEEK: list[str] = [
    "good morning",
    "what time is it",
    "set a timer for ten minutes",
    "pause the music",
    "I had two coffees",
    "remind me to call anna at six",
    "note that the spare key is with tom",
    "how many coffees did I have today",
    "turn the volume up",
    "lock the screen",
    "standup in ten",
    "no, I meant set a reminder",
    "two espressos",
    "no, I meant log it",
    "remember the bins tonight at eight",
    "no, I meant set a reminder",
    "next song",
    "slept seven hours",
    "what's on my reminders",
    "thanks",
    "jot down oat milk",
    "take a note",
    "jot down coffee filters",
    "take a note",
    "jot down batteries",
    "mute",
    "unmute the sound",
    "how far is the moon",
    "remind me to water the plants at nine",
    "I drank a glass of water",
    "drank a glass of water",
    "what did I note about the key",
    "volume forty",
    "no, I meant set the volume to forty",
    "skip",
    "pause it",
    "weight seventy two",
    "no, I meant log it",
    "remember the dentist friday at ten",
    "no, I meant a reminder",
    "where is my passport",
    "passport in the top drawer",
    "no, I meant take a note",
    "good night",
    "what's the weather like",
    "tell me a joke",
    "set an alarm for seven tomorrow",
    "ran five kilometres",
    "no, I meant log it",
    "fed the cat",
    "no, I meant log that",
    "call grandma sunday",
    "no, I meant set a reminder",
    "how tall is mont blanc",
    "louder",
    "quieter",
    "restart pipewire",
    "no",
    "locker code 3318",
    "no, I meant a note",
    "remind me in twenty minutes to take the cake out",
    "what did I have for breakfast",
    "I had porridge for breakfast",
    "play the music",
    "previous track",
    "lock the computer",
    "thank you",
    "you're funny",
    "what can you do",
    "jot down light bulbs",
    "headache again",
    "no, I meant log that",
    "tea in four minutes",
    "no, I meant a reminder",
    "meds at nine tonight",
    "no, I meant set a reminder",
    "when did I last feed the cat",
    "fed the cat",
    "watered the plants",
    "plants watered",
    "remember to call the dentist at four",
    "no, I meant set a reminder",
    "pasta in nine minutes",
    "no, I meant set a reminder",
    "how many glasses of water today",
]


def harmless_acts() -> ActsSettings:
    """The default allowlist, each argv replaced by a harmless print (same names, slots)."""
    defaults = ActsSettings()
    allow = tuple(
        type(a)(
            name=a.name,
            argv=(PY, "-c", "pass"),
            description=a.description,
            destructive=a.destructive,
            timeout_s=a.timeout_s,
            slots=a.slots,
        )
        for a in defaults.allow
    )
    return ActsSettings(allow=allow)


@dataclass
class Kit:
    embedder: UseEmbedder
    builtin: list
    vectors: object

    def classifier(self, user_file: Path | None) -> CentroidClassifier:
        return CentroidClassifier(
            self.embedder, list(self.builtin), embeddings=self.vectors, user_file=user_file
        )


def make_router(settings: Settings, classifier: CentroidClassifier) -> Router:
    grammar = CommandGrammar.from_dir(
        paths.grammars_dir(), settings.acts, settings.router.wake_words
    )
    r = settings.router
    return Router(
        grammar,
        SlotExtractor(settings.acts),
        classifier=classifier,
        llm=None,
        policy=RoutePolicy(
            clarify_threshold=r.clarify_threshold,
            classifier_confident=r.classifier_confident,
            classifier_weight=r.classifier_weight,
            use_llm=False,
        ),
        clock=lambda: NOW,
    )


def make_assistant(kit: Kit, data: Path, *, enabled: bool = True) -> Assistant:
    settings = Settings(
        acts=harmless_acts(),
        reminders=ReminderSettings(timezone="Europe/Berlin"),
        storage=StorageSettings(data_dir=str(data)),
        memory=MemorySettings(enabled=enabled),
    )
    router = make_router(settings, kit.classifier(data / "intent_examples.user.jsonl"))
    return Assistant(settings, Store.open(settings), router, clock=lambda: NOW, tz=TZ)


def right(decision: Decision | None, intent: str) -> bool:
    if decision is None:
        return False
    asks = decision.clarify is not None and decision.clarify.kind == "route"
    return not asks and str(decision.intent) == intent


def correction_scenarios(kit: Kit, tmp: Path) -> dict[str, object]:
    corrected = already_right = identical_ok = paraphrase_ok = not_fixed = unfinished = 0
    misses: list[dict[str, str]] = []
    for i, (said, paraphrase, intent, correction) in enumerate(SCENARIOS):
        a = make_assistant(kit, tmp / f"s{i}")
        try:
            first = a.handle_text(said)
            if right(first.decision, intent) and intent != "act":
                already_right += 1
                continue
            if intent == "act" and right(first.decision, intent) and first.reply.outcome == "done":
                already_right += 1
                continue
            fixed = a.handle_text(correction)
            if not right(fixed.decision, intent):
                not_fixed += 1
                misses.append({"said": said, "stage": "correction", "got": _got(fixed.decision)})
                continue
            if str(fixed.reply.outcome) not in SUCCESS:
                # The corrected turn asked for a detail ("When should I remind you?"):
                # no repair is stored until a corrected turn succeeds (the spec).
                unfinished += 1
                misses.append(
                    {"said": said, "stage": "corrected turn asked", "got": fixed.reply.text[:60]}
                )
                continue
            corrected += 1
            for text, kind in ((said, "identical"), (paraphrase, "paraphrase")):
                turn = a.handle_text(text)
                ok = right(turn.decision, intent)
                if kind == "identical":
                    identical_ok += ok
                else:
                    paraphrase_ok += ok
                if not ok:
                    misses.append(
                        {"said": text, "stage": kind, "want": intent, "got": _got(turn.decision)}
                    )
        finally:
            a.store.close()
    next_turns = 2 * corrected
    return {
        "scenarios_written": len(SCENARIOS),
        "right_at_first (not a correction scenario)": already_right,
        "correction_not_understood": not_fixed,
        "corrected_turn_asked_for_a_detail (no repair stored)": unfinished,
        "corrected_scenarios": corrected,
        "next_turns": next_turns,
        "identical_right": identical_ok,
        "paraphrase_right": paraphrase_ok,
        "share_next_turns_right": round((identical_ok + paraphrase_ok) / next_turns, 4)
        if next_turns
        else 0.0,
        "misses": misses,
    }


def _route_of(decision: Decision) -> str:
    asks = decision.clarify is not None and decision.clarify.kind == "route"
    return "clarify" if asks else str(decision.intent)


def _got(decision: Decision | None) -> str:
    if decision is None:
        return "none"
    if decision.clarify is not None and decision.clarify.kind == "route":
        return "clarify"
    return f"{decision.intent}/{decision.decided_by}"


def week_then_eval(kit: Kit, tmp: Path, eval_file: Path) -> dict[str, object]:
    data = tmp / "week"
    a = make_assistant(kit, data)
    outcomes: dict[str, int] = {}
    for text in WEEK:
        turn = a.handle_text(text)
        outcomes[str(turn.reply.outcome)] = outcomes.get(str(turn.reply.outcome), 0) + 1
    with a.store.read() as conn:
        learned = dict(conn.execute("SELECT kind, count(*) FROM memory GROUP BY kind").fetchall())
    rows = read_rows(eval_file)
    on = RouterReport("memory on")
    off = RouterReport("memory off")
    plain = make_router(a.settings, kit.classifier(None))
    by: dict[str, int] = {}
    changed = 0
    for row in rows:
        started = time.perf_counter()
        # Read-only: the eval turns are routed with what the week taught, never learned from.
        decision = a.memory._route(a.router, row.text).decision
        on.add(row, decision, {"total": (time.perf_counter() - started) * 1000})
        by[decision.decided_by] = by.get(decision.decided_by, 0) + 1
        started = time.perf_counter()
        baseline = plain.route(row.text)
        off.add(row, baseline, {"total": (time.perf_counter() - started) * 1000})
        changed += _route_of(decision) != _route_of(baseline)
    a.store.close()
    keys = ("strict_accuracy", "lenient_accuracy", "clarify_rate_oos", "clarify_rate_in_scope")
    return {
        "week_turns": len(WEEK),
        "week_outcomes": outcomes,
        "learned_records": learned,
        "eval_rows": len(rows),
        "memory_off": {k: off.summary()[k] for k in keys},
        "memory_on": {k: on.summary()[k] for k in keys},
        "eval_decisions_changed_by_memory": changed,
        "memory_on_decided_by": by,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval", type=Path, default=ROOT.parent / "shared/eval/router_dev.jsonl")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from mavend.router import model_path

    settings = Settings()
    started = time.monotonic()
    embedder = UseEmbedder(
        model_path(settings.router.classifier_model, settings.models.models_path())
    )
    builtin = read_builtin(None)
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        vectors, _ = cached_embeddings(embedder, builtin, tmp / "cache")
        kit = Kit(embedder, builtin, vectors)
        scenarios = correction_scenarios(kit, tmp)
        week = week_then_eval(kit, tmp, args.eval)
    report = {
        "machine": describe_machine(load=True),
        "settings": {
            "router": "grammar + USE classifier, no LLM",
            "memory": MemorySettings().__dict__,
            "clarify_threshold": settings.router.clarify_threshold,
        },
        "corrections": scenarios,
        "week_then_eval": week,
        "seconds": round(time.monotonic() - started, 1),
    }
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
        return 0
    print(json.dumps(report, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
