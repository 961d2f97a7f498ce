"""chat: a short reply from the LLM (local, or the configured server); no side effects.

Chat and general-knowledge questions are asked with the persona's system prompt: its
name, the clock, and what it cannot know (`persona`). The only caller is the query
handler's one way out to general knowledge (`QueryHandler._general_knowledge`), behind
the personal boundary: chat turns and queries alike reach `answer` only through it.
"""

from __future__ import annotations

import logging
import re

from mavend.handlers.common import REPLY_TIMEOUT_S, HandlerContext, Outcome, Reply
from mavend.handlers.persona import Persona
from mavend.smalltalk import SmallTalk

log = logging.getLogger(__name__)

# Steps to follow: the shipped 0.5B model, asked "how do i boil an egg", began "Preheat
# the oven to 350°F". Instructions are wrong in ways that matter, so the small local model
# is not asked for them; a server the owner pointed mavend at ([llm] backend = "openai")
# is. "how do you say ... in french" and "how do you spell" are not steps.
_HOW_TO = re.compile(
    r"^(?:(?:so|and|um|uh|hey|ok|okay|please|tell me) )*(?:"
    r"how (?:do|can|should|would|could) (?:i|you|we|one) (?!say\b|spell\b|pronounce\b|feel\b)"
    r"|how to (?!say\b|spell\b|pronounce\b)"
    r"|how long (?:do|should|does it take to|to) (?:i |you |we )?(?:boil|cook|bake|roast|fry|grill"
    r"|steam|microwave|soak|marinate|defrost|thaw)\b"
    r"|what(?:'s| is) the (?:best|right|proper|easiest|quickest|fastest) way to "
    r"|(?:give me |what are )?(?:the )?(?:steps|instructions) (?:to|for) "
    r"|(?:a |the )?recipe for )"
)
NO_STEPS = ("I can't give you reliable step-by-step instructions: the language model on "
            "this box is too small to get them right, and I have no source for them.")


class ChatHandler:
    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx
        self.persona = Persona.of(ctx.settings)
        self.smalltalk = SmallTalk()

    def messages(self, text: str) -> list[dict[str, str]]:
        """What the model is asked: the persona's system turn at this moment, then `text`."""
        return [
            {"role": "system", "content": self.persona.system_prompt(self.ctx.now())},
            {"role": "user", "content": text},
        ]

    def answer(self, text: str) -> Reply:
        known = self.persona.identity_answer(text)
        if known is not None:  # "who are you", "are you chatgpt": known, not generated
            return Reply(known, data={"identity": True})
        if (social := self.persona.social_answer(text)) is not None:
            return Reply(social, data={"social": True})
        if (known := self.smalltalk.reply(text)) is not None:  # a feeling, a joke, a fact
            return Reply(known, data={"smalltalk": True})
        if _HOW_TO.match(text.lower().strip()) and self.ctx.settings.llm.backend == "local":
            return Reply(NO_STEPS, data={"how_to": True})
        llm = self.ctx.chat_llm()
        if llm is None:
            return Reply(
                "I can't chat right now: the language model is turned off or missing.",
                Outcome.UNAVAILABLE,
                "llm_off",
            )
        try:
            reply = llm.complete_chat(
                self.messages(text),
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
        said = " ".join(str(getattr(reply, "text", reply)).split())
        if not said:
            return Reply("Sorry, I have no answer to that.", Outcome.FAILED, "llm_empty")
        checked = self.persona.checked_reply(said, text)
        if checked != said:
            log.info("chat reply claimed a maker; replaced with the assistant's own line")
        return Reply(checked, data={"truncated": bool(getattr(reply, "truncated", False))})
