"""Who the assistant says it is: the chat system prompt and the maker-claim check.

Every chat and general-knowledge reply is asked with `system_prompt(...)` first. A
0.5B model asked bare says it is "an AI language model created by OpenAI" and makes
up the weather; the prompt gives it a name (the wake word's), the clock, and the
plain facts of what it cannot know. It carries nothing personal: no facts, notes or
reminders (those are answered from the database, never through the model).

The prompt is short on purpose: on two cores every prompt token costs ~8 ms on every
reply (the chat prompt is evaluated afresh each turn). The clock line comes last, so
the part before it is the same on every turn, should the prompt ever be cached.

Small models still slip into their training ("I am Qwen, created by Alibaba Cloud"),
so `checked_reply` replaces a reply that claims a maker with the assistant's own line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from mavend.config import Settings

# Words in front of a wake name that are not the name ("hey jarvis" -> "Jarvis").
_GREETINGS = frozenset({"hey", "hi", "hello", "ok", "okay", "yo", "oi", "hallo", "hej"})
FALLBACK_NAME = "Mavend"

# Makers and model names a small model borrows from its training data.
_MAKERS = (
    r"open\s*ai|chat\s*-?gpt|gpt-?\s*\d[\w.]*|qwen[\w.]*|tongyi|alibaba|anthropic|claude"
    r"|google|gemini|bard|meta\s+ai|llama|microsoft|copilot|deepmind|mistral"
)
_MAKER = re.compile(rf"\b(?:{_MAKERS})\b", re.IGNORECASE)
# A claim about itself: a first-person subject (or "as an AI ...") and a maker or a model
# name later in the same sentence. "ChatGPT is made by OpenAI" (an answer about the world)
# has no first person and passes.
_SELF_CLAIM = re.compile(
    rf"(?:\bi\s*(?:am|'m|was|have\s+been|'ve\s+been)\b|\bim\b|\bmy\s+(?:name|creators?|makers?"
    rf"|developers?|company)\b|\bas\s+an?\s+(?:ai|assistant|language\s+model)\b"
    rf"|\b(?:created|made|developed|built|trained|designed)\s+me\b)"
    rf"[^.!?\n]{{0,80}}?\b(?:{_MAKERS})\b",
    re.IGNORECASE,
)


# Questions about the assistant itself: the answer is known, so no model is asked.
_OTHER_ASSISTANTS = rf"(?:{_MAKERS}|siri|alexa|cortana|google assistant|a robot|a human|human)"
_IDENTITY = re.compile(
    r"^(?:(?:so|and|hey|ok|okay|um|uh|tell me)\s+)*(?:"
    r"who (?:are|r) (?:you|u)|what (?:are|r) (?:you|u)|what(?:'s| is) your name"
    r"|what (?:should|do|can) i call you|do you have a name|have you got a name"
    r"|who (?:made|created|built|programmed|developed|trained|designed) (?:you|u)"
    r"|who(?:'s| is) your (?:maker|creator|developer|company)"
    rf"|(?:are|r) (?:you|u) (?:an? |the )?{_OTHER_ASSISTANTS}"
    rf"|were you (?:made|created|built|trained|developed) by (?:an? |the )?{_OTHER_ASSISTANTS}"
    r"|introduce yourself|tell me about yourself"
    r")(?:\s+(?:really|exactly|then|please|anyway|again))*\??$",
    re.IGNORECASE,
)


# Other questions about itself with a known answer: the 0.5B model answered "how old are
# you" with "I don't know that about you." (the prompt's line for the user's own life).
_ABOUT_ITSELF: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rf"^(?:(?:so|and|hey|ok|okay|um|uh|tell me)\s+)*(?:{said})"
                r"(?:\s+(?:really|exactly|then|please|anyway))*\??$"), reply)
    for said, reply in (
        (r"how old (?:are|r) (?:you|u)|what(?:'s| is) your age|when (?:were you|was you) born"
         r"|when(?:'s| is) your birthday|what age are you",
         "I don't have an age or a birthday. {own_line}"),
        (r"where (?:are|r) (?:you|u)(?: from)?|where do you live|where do you come from",
         "Right here: {own_line}"),
    )
)

# Pleasantries: what to say back is known. The 0.5B model answered "good night" with "Good
# night! How can I assist you today?" and "thank you" with three sentences.
_SOCIAL: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rf"^(?:(?:ok|okay|oh|great|brilliant|lovely|perfect|cool|nice|right)\s+)*"
                rf"(?:{said})(?:\s+(?:so much|very much|a lot|mate|again|{{name}}))*"
                # "thanks that's all": the reply, not the model's three sentences
                r"(?:\s+(?:that's all|thats all|that's it|thats it|that will be all"
                r"|that's everything|for now|i'm done|im done))*[.!]*$"), reply)
    for said, reply in (
        (r"thanks|thank you|thank u|cheers|ta|much appreciated|thanks a lot", "You're welcome."),
        (r"good ?night|night night|nighty night|sleep well", "Good night."),
        (r"good morning|morning", "Good morning."),
        (r"good afternoon", "Good afternoon."),
        (r"good evening", "Good evening."),
        (r"hello|hi|hey|hiya|hi there|hello there", "Hello."),
        (r"bye|goodbye|bye bye|see you|see you later|see ya", "Bye."),
        (r"are you (?:still )?(?:there|here|listening|awake|with me)|can you hear me"
         r"|(?:you|u) (?:still )?there", "Yes, I'm here."),
        # "how are you": the model said "I'm Jarvis, running on this computer."
        (r"(?:(?:hi|hello|hey|hiya|good morning|good afternoon|good evening)(?: there)?"
         r"(?: \{name\})?\s+)?(?:(?:so|and|um|uh)\s+)?(?:how are you|how r u|how are ya"
         r"|how's it going|hows it going|how are things|how have you been|how's your day"
         r"|hows your day|you alright|are you ok|are you okay|are you well)"
         r"(?:\s+(?:doing|today|this morning|this evening|tonight|going|keeping|feeling))*",
         "I'm fine, thanks for asking. What can I do for you?"),
    )
)


@dataclass(frozen=True)
class Persona:
    """The assistant as the model is told to be: its spoken name."""

    name: str

    @classmethod
    def of(cls, settings: Settings) -> Persona:
        return cls(wake_name(settings))

    def system_prompt(self, now: datetime) -> str:
        """The chat system prompt for a reply asked at `now` (aware, in the user's zone)."""
        # A rule list with the exact words to say worked best with the 0.5B model
        # (bench/chat_honesty.py tried prose, few-shot and rule variants).
        return (
            f"You are {self.name}, a private voice assistant running locally on this home "
            "computer, with no internet. No company made you.\n"
            "Rules:\n"
            "- One or two short plain sentences: they are spoken.\n"
            "- Weather, news, sports, prices, stocks, exchange rates, traffic, when shops open "
            'or close: say "I have no live data for that."\n'
            "- The user's own life (family, plans, belongings): "
            'say "I don\'t know that about you."\n'
            f"- Asked your name or who made you: you are {self.name}, running on this computer.\n"
            "- Questions about the world: answer them.\n"
            f"{clock_line(now)}"
        )

    @property
    def own_line(self) -> str:
        """What it says about itself, and what replaces a reply that claims a maker."""
        return f"I'm {self.name}, a voice assistant running privately on this computer."

    def identity_answer(self, question: str) -> str | None:
        """The answer to a question about the assistant itself ("who are you", "are you
        chatgpt", "who made you"), or None. Known, so no model is asked (a 0.5B model
        says "yes" to "are you chatgpt" now and then)."""
        said = " ".join(question.lower().replace("?", " ").split())
        for pattern, reply in _ABOUT_ITSELF:
            if pattern.match(said):
                return reply.format(own_line=self.own_line)
        if not _IDENTITY.match(said):
            return None
        if re.match(r"^(?:are|r|were) (?:you|u)\b", said):
            return f"No. {self.own_line}"
        return self.own_line

    def social_answer(self, said: str) -> str | None:
        """The reply to a pleasantry ("thank you", "good night"), or None."""
        words = " ".join(said.lower().replace(",", " ").replace("?", " ").split())
        words = re.sub(rf"\b{re.escape(self.name.lower())}\b", "{name}", words)
        for pattern, reply in _SOCIAL:
            if pattern.match(words):
                return reply
        return None

    def checked_reply(self, reply: str, question: str = "") -> str:
        """`reply`, or `own_line` when it claims a maker or another model's name.

        A question that itself names a maker or model and is not about the assistant
        ("who makes ChatGPT") may get an answer that names it in the first person
        ("I believe OpenAI does"), so that answer is left alone.
        """
        about_others = _MAKER.search(question) and not re.search(r"\byou", question, re.I)
        if about_others or not claims_a_maker(reply):
            return reply
        return self.own_line


def claims_a_maker(reply: str) -> bool:
    """True when the reply says it is, or was made by, a company or another model."""
    return _SELF_CLAIM.search(reply) is not None


def clock_line(now: datetime) -> str:
    """ "Now: Wednesday 2 December 2026, 16:05 (4:05 PM), time zone Europe/Berlin." """
    zone = getattr(now.tzinfo, "key", None) or now.tzname() or "UTC"
    hour12 = now.hour % 12 or 12
    half = "AM" if now.hour < 12 else "PM"
    return (
        f"Now: {now:%A} {now.day} {now:%B %Y}, {now:%H:%M} ({hour12}:{now:%M} {half}), "
        f"time zone {zone}."
    )


def wake_name(settings: Settings) -> str:
    """The name people call it by: the first wake word, else the wake model's name.

    `router.wake_words` is what the user configured in words ("hey jarvis" -> "Jarvis");
    the wake model's name ("hey_jarvis", "/path/hey_computer_v2.onnx") is the fallback.
    """
    for phrase in settings.router.wake_words:
        name = _name_in(phrase)
        if name:
            return name
    model = Path(settings.wakeword.model).stem if settings.wakeword.model else ""
    # Model files carry versions ("hey_jarvis_v0.1"): drop them.
    model = re.sub(r"[_\-\s]*v?\d+(?:\.\d+)*$", "", model)
    return _name_in(re.sub(r"[_\-]+", " ", model)) or FALLBACK_NAME


def _name_in(phrase: str) -> str:
    words = [w for w in re.findall(r"[^\W\d_][\w'-]*", phrase) if w]
    while words and words[0].lower() in _GREETINGS:
        words = words[1:]
    return " ".join(w[:1].upper() + w[1:].lower() for w in words)
