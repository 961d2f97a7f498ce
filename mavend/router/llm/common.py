"""What every LLM backend shares: the errors, the route and reply types, the
bounds on what reaches a prompt, and the deadline.

The cascade and the handlers only ever see these: an in-process model
(`local.LlmRouter`) and an HTTP model server (`remote.RemoteLlm`) raise the same
`LlmError` family and return the same `LlmRoute`, so a failure of either falls
through to the classifier the same way.
"""

from __future__ import annotations

import math
import re
import time
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from mavend.errors import ConfigError
from mavend.router.decision import Intent

# Bounds on what reaches the prompt. A spoken turn is at most ~12 s
# ([endpoint] max_utterance_s): about 40 words, ~250 characters. 320 leaves
# room for fast talkers and typed input, keeps a hostile 10 000-character
# "utterance" out of the context, and bounds what a span field can copy.
MAX_UTTERANCE_CHARS = 320
# Memory recall is already capped by [memory] recall_max_chars (default 600).
MAX_CONTEXT_CHARS = 1000

CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class LlmError(Exception):
    """The LLM stage could not decide; the cascade falls through to the classifier."""


class PromptTooLong(LlmError, ConfigError):
    """The fixed prompt (the acts and devices of this config) leaves no room in the model's
    context: a start-up error naming the setting, never a silently dropped stage."""


class LlmTimeout(LlmError):
    """The turn would not finish within router.llm_timeout_s."""


class LlmOutputError(LlmError):
    """The model's output did not parse or named something outside the enums."""


@dataclass(frozen=True)
class LlmRoute:
    intent: Intent
    # Probability of `intent` among the seven, from the model's logits (see module doc).
    confidence: float
    fn: str  # an allowlisted act name, or "" (not an act, or nothing on the list fits)
    args: dict[str, str]  # slot name -> value as text; slots the model left null are absent
    time_phrase: str  # the time words as spoken (reminder); resolved later, never here
    key: str  # fact key, snake_case
    value: str  # fact value as spoken
    text: str  # what to remind about (reminder); "" otherwise: use the utterance
    source: str  # query: a Source value, "" when the model said "unknown" (or not a query)
    raw: str  # the JSON the model wrote, pre-fill included
    latency_ms: float
    # Every intent's probability, most likely first: candidates for a clarify question.
    alternatives: tuple[tuple[Intent, float], ...] = ()
    evaluated_tokens: int = 0  # prompt tokens evaluated this turn (prefix-cache check)
    decoded_tokens: int = 0  # tokens sampled one at a time this turn


@dataclass(frozen=True)
class LlmReply:
    text: str
    latency_ms: float
    truncated: bool  # stopped at max_tokens rather than at the end of the turn



def clean_text(text: str, limit: int) -> str:
    """Printable, single-spaced, at most `limit` characters (cut at a word edge)."""
    text = unicodedata.normalize("NFC", text)
    text = CONTROL_CHARS.sub(" ", text)
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return cut[:space] if space > limit // 2 else cut



class Deadline:
    """A monotonic deadline that also refuses work predicted to overrun it."""

    def __init__(self, seconds: float | None) -> None:
        self.at = math.inf if seconds is None else time.monotonic() + seconds

    def left(self) -> float:
        return self.at - time.monotonic()

    def check(self, upcoming_s: float = 0.0, what: str = "") -> None:
        if time.monotonic() + upcoming_s >= self.at:
            raise LlmTimeout(f"LLM deadline reached{' before ' + what if what else ''}")



class LlmBackend(Protocol):
    """What the cascade, the handlers and `mavend doctor` use of an LLM backend."""

    @property
    def model_name(self) -> str: ...

    @property
    def remote(self) -> bool:
        """Whether prompts leave this machine (a model server); see
        `router.personal.may_share_personal`."""
        ...

    def warm_up(self) -> float: ...

    def route(self, utterance: str, *, context: str = "") -> LlmRoute: ...

    def complete_chat(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int = 96,
        timeout_s: float | None = None,
    ) -> LlmReply: ...

    def close(self) -> None: ...


# A sentence ends at . ! ? or … followed by a space, a closing quote or bracket, or the
# end: "3.5" and "e.g.x" do not end one.
_SENTENCE_END = re.compile(r"[.!?…][\"')\]]*(?=\s|$)")


def whole_sentences(text: str) -> str:
    """`text` up to its last finished sentence, "" when it has none of two words or more.

    What a reply cut off by its deadline may still say: the words after the last full
    stop are a sentence nobody finished."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    if not ends:
        return ""
    kept = text[: ends[-1]].strip()
    return kept if len(kept.split()) >= 2 else ""
