"""A reminder asked for with its time and no task: "remind me in ten minutes".

    ask_task(ctx, when, session)           -> "What should I remind you about?"
    task_answer(ctx, said, session)        -> the reminder's decision, with the answer as its task

It set a reminder called "reminder" (the fire said "Reminder" and nothing else). Now the
time is kept for this session, and the next words said there within TASK_ANSWER_S are the
task ("to call the bank", "the washing") unless they are a request of their own, which the
caller decides (a grammar command, a negation). The time was resolved when it was asked:
"in ten minutes" stays ten minutes from then.
"""

from __future__ import annotations

import re
from datetime import datetime

from mavend.handlers.common import HandlerContext, Outcome, Reply
from mavend.router.decision import Decision, Intent, Slots, Stage

TASK_ASKED = "reminder.task_asked:"
TASK_ANSWER_S = 60.0  # a task said later than this is no answer to the question
QUESTION = "What should I remind you about?"

# "to call the bank", "about the washing", "that the plumber comes": the task's words.
_LEAD = re.compile(r"^(?:(?:oh|um|uh|er|erm|well|ok|okay|so|just)\s+)*"
                   r"(?:(?:remind me\s+)?(?:to|about|that|of)\s+)?")


def ask_task(ctx: HandlerContext, when: datetime, session: str) -> Reply:
    """Keep the time for this session's next words; ask what the reminder is for."""
    now = ctx.now().timestamp()
    ctx.session.put(TASK_ASKED + session, {"when": when.isoformat()},
                    expires_ts=now + TASK_ANSWER_S)
    return Reply(QUESTION, Outcome.ASKED, data={"fire_at": when.isoformat()})


def pending_task(ctx: HandlerContext, session: str) -> datetime | None:
    """The time this session's question keeps, taken (a question is answered once)."""
    key = TASK_ASKED + session
    # A read first: most turns follow no question, and a pop is a write transaction.
    asked = ctx.session.get(key, now_ts=ctx.now().timestamp())
    if not isinstance(asked, dict):
        return None
    ctx.session.pop(key)
    try:
        return datetime.fromisoformat(str(asked["when"]))
    except (KeyError, ValueError):
        return None


def task_answer(utterance: str, said: str, when: datetime) -> Decision | None:
    """The reminder at `when` with `said` (normalized) as its task; None for no words."""
    task = _LEAD.sub("", said).strip()
    if not task:
        return None
    return Decision(
        utterance=utterance,
        stage=Stage.GRAMMAR,
        intent=Intent.REMINDER,
        confidence=1.0,
        slots=Slots(time=when, has_time=True, text=task, kind="reminder"),
        decided_by="task-answer",
    )
