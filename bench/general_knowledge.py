"""How often is the chat model's own answer to a plain question about the world right?

    flock /tmp/mavend-heavy.lock .venv/bin/python bench/general_knowledge.py [--model NAME]

Loads the local LLM the way the daemon does (the pulled model, `build_available_router`),
asks each question of bench/data/general_knowledge.jsonl (60 we wrote: "how many legs does a
spider have", each with a regular expression the right answer matches) through
`ChatHandler.answer` with `[llm] general_knowledge = "on"` (the persona's prompt, the checks),
and prints each reply, right or wrong, and the share right. `MEASURED_KNOWLEDGE` in
mavend/handlers/chat.py holds the result: below `KNOWLEDGE_BAR` "auto" does not say the
model's facts. A reply that matches can still carry a false detail ("the Nile flows through
Egypt and Jordan"); those count as right here, so the share is an upper bound.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mavend.clock import system_clock, user_timezone
from mavend.config import LlmSettings, RouterSettings, Settings, StorageSettings
from mavend.handlers.chat import ChatHandler
from mavend.handlers.common import HandlerContext
from mavend.router import build_available_router
from mavend.state.store import Store

QUESTIONS = Path(__file__).parent / "data" / "general_knowledge.jsonl"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=RouterSettings().llm_model)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        settings = Settings(router=RouterSettings(llm_model=args.model),
                            llm=LlmSettings(general_knowledge="on"),
                            storage=StorageSettings(data_dir=data))
        tz = user_timezone(settings.reminders.timezone)
        clock = system_clock(tz)
        router, problems = build_available_router(settings, clock=clock)
        if router.llm is None:
            print(f"no local model {args.model!r} ({problems}): run `mavend models pull`")
            return 1
        llm = router.llm.get()
        store = Store.open(settings)
        ctx = HandlerContext(settings=settings, store=store, tz=tz, clock=clock,
                             chat_llm=lambda: llm)
        chat = ChatHandler(ctx)
        rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line]
        right = 0
        for row in rows:
            reply = chat.answer(row["question"], factual=True).text
            ok = re.search(row["must"], reply.lower()) is not None
            right += ok
            print(f"{'right' if ok else 'WRONG'}  {row['question']!r}: {reply[:110]}")
        store.close()
    print(f"\n{args.model}: {right} of {len(rows)} right ({100 * right / len(rows):.0f} %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
