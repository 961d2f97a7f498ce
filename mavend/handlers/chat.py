"""chat: a short reply from the local LLM; no side effects."""

from __future__ import annotations

import logging

from mavend.handlers.common import REPLY_TIMEOUT_S, HandlerContext, Outcome, Reply
from mavend.router.decision import Decision

log = logging.getLogger(__name__)


class ChatHandler:
    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx

    def handle(self, decision: Decision) -> Reply:
        return self.answer(decision.slots.text.strip() or decision.utterance.strip())

    def answer(self, text: str) -> Reply:
        llm = self.ctx.chat_llm()
        if llm is None:
            return Reply(
                "I can't chat right now: the language model is turned off or missing.",
                Outcome.UNAVAILABLE,
                "llm_off",
            )
        try:
            reply = llm.complete_chat(
                [{"role": "user", "content": text}],
                max_tokens=self.ctx.settings.router.llm_max_tokens,
                timeout_s=REPLY_TIMEOUT_S,
            )
        except Exception as exc:  # LlmTimeout, LlmError: the turn still gets a reply
            log.warning("chat reply failed: %s", exc)
            timeout = "timeout" in type(exc).__name__.lower()
            return Reply(
                "Sorry, I couldn't think of an answer in time."
                if timeout
                else "Sorry, the language model failed.",
                Outcome.FAILED,
                "llm_timeout" if timeout else "llm_error",
            )
        # One paragraph: it is shown in a notification and will be spoken.
        text = " ".join(str(getattr(reply, "text", reply)).split())
        if not text:
            return Reply("Sorry, I have no answer to that.", Outcome.FAILED, "llm_empty")
        return Reply(text, data={"truncated": bool(getattr(reply, "truncated", False))})
