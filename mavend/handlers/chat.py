"""chat: a short reply from the LLM (local, or the configured server); no side effects.

Chat and general-knowledge questions are asked with the persona's system prompt: its
name, the clock, and what it cannot know (`persona`). The only caller is the query
handler's one way out to general knowledge (`QueryHandler._general_knowledge`), behind
the personal boundary: chat turns and queries alike reach `answer` only through it.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from mavend.config import Settings
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

# Plain facts about the world each model got right, asked with the persona's prompt
# (bench/general_knowledge.py on bench/data/general_knowledge.jsonl, our own 60
# questions). The 0.5B said a spider has four legs and the first man on the moon was
# James Bond, as confidently as it said Paris is France's capital; its token
# probabilities did not tell the two apart. Below the bar its facts are not said.
MEASURED_KNOWLEDGE = {"qwen2.5-0.5b-instruct-q4_k_m": 29 / 60}
KNOWLEDGE_BAR = 0.9
# Asked for one or two short sentences, the 0.5B model still wrote five ("what do you think
# about cats"): a spoken reply says the first two.
SENTENCES_SAID = 2
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]'\"%][.!?])(?=\s+[A-Z0-9\"'(])")
NO_FACTS = ("I can't answer that reliably: the language model on this box is too small to "
            "get facts right, and I have no source to look them up.")


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

    def answer(self, text: str, *, factual: bool = False) -> Reply:
        """The reply to `text`; `factual`: a question about the world (routed as a query),
        which the model answers only where it measured good enough (`knows_facts`)."""
        known = self.persona.identity_answer(text)
        if known is not None:  # "who are you", "are you chatgpt": known, not generated
            return Reply(known, data={"identity": True})
        if (social := self.persona.social_answer(text)) is not None:
            return Reply(social, data={"social": True})
        if (known := self.smalltalk.reply(text)) is not None:  # a feeling, a joke, a fact
            return Reply(known, data={"smalltalk": True})
        if _HOW_TO.match(text.lower().strip()) and self.ctx.settings.llm.backend == "local":
            return Reply(NO_STEPS, data={"how_to": True})
        if factual and not knows_facts(self.ctx.settings):
            return Reply(NO_FACTS, data={"general_knowledge": False})
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
        said, cut = first_sentences(said, SENTENCES_SAID)
        if not said:
            return Reply("Sorry, I have no answer to that.", Outcome.FAILED, "llm_empty")
        checked = self.persona.checked_reply(said, text)
        if checked != said:
            log.info("chat reply claimed a maker; replaced with the assistant's own line")
        return Reply(checked,
                     data={"truncated": cut or bool(getattr(reply, "truncated", False))})


def first_sentences(text: str, count: int) -> tuple[str, bool]:
    """The first `count` sentences of `text`, and whether any were left out. A full stop
    after a capital ("J.R.R. Tolkien") ends no sentence."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]  # between two sentences
    if len(ends) < count:
        return text, False
    return text[: ends[count - 1]].strip(), True


def knows_facts(settings: Settings) -> bool:
    """Is the model's own knowledge said as an answer ([llm] general_knowledge)? "auto":
    yes for a server the owner chose and for a local model not measured below the bar."""
    mode = settings.llm.general_knowledge
    if mode != "auto":
        return mode == "on"
    if settings.llm.backend != "local":
        return True
    model = Path(settings.router.llm_model).name.lower().removesuffix(".gguf")
    measured = MEASURED_KNOWLEDGE.get(model)
    return measured is None or measured >= KNOWLEDGE_BAR
