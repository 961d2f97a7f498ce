"""The router's LLM on an OpenAI-compatible server (`[llm] backend = "openai"`).

The same stage as the in-process `LlmRouter`, over HTTP: the same messages
(`prompt.messages`: the system text with the allowlist, the few-shot turns;
then the user turn `prompt.user_content`: the utterance and, when memory
recalled something, its recall block), the same answer grammar, the same parser
and checks, the same `LlmError` family on any failure, so the cascade falls
through to the classifier exactly as it does for the local model.

A route is one `POST {base_url}/chat/completions`, temperature 0, with the answer
held to the router's grammar: the GBNF of `gbnf.build_gbnf` (with this
utterance's words for the span fields, as the local model decodes them) in the
`grammar` field that llama.cpp's servers read, or the JSON schema of
`schema.answer_schema` in `response_format`. The answer is then parsed by
`answer.parse_answer` (intents and sources from the enums, acts only from the
allowlist, every slot checked) and `answer.check_fields` (what the grammar
guarantees locally, since a server may not have honoured it).

Confidence. The local router reads each intent's probability off the logits at
the first token of the intent's name. Here, with `[llm] logprobs = true`, the
server is asked for that token's `top_logprobs` (20, the OpenAI maximum) and the
same sum is made over them: the probability mass of every listed token that
spells the beginning of an intent name, per intent, renormalised over those
tokens (`intent_scores`). A server that sends none (or `logprobs = false`) gets
a fixed `NO_LOGPROBS_CONFIDENCE` for the intent it wrote and the rest spread
evenly over the other six: 0.6 is about how often the local 0.5B model alone
names the right intent on the dev rows (58.8 %, BENCHMARKS.md), the honest
value of an answer with no evidence of its own. The gate still asks: under the
vote policy the classifier's share decides whether the turn is clear enough,
and under llm-first a 0.6 is above the default clarify_threshold (0.35), so
with such a server prefer "vote" or "tie-break".
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from mavend.config import ActsSettings, LlmSettings, RouterSettings
from mavend.router import prompt
from mavend.router.decision import Intent
from mavend.router.llm import schema
from mavend.router.llm.answer import check_fields, parse_answer
from mavend.router.llm.common import (
    MAX_CONTEXT_CHARS,
    MAX_UTTERANCE_CHARS,
    Deadline,
    LlmError,
    LlmOutputError,
    LlmReply,
    LlmRoute,
    clean_text,
)
from mavend.router.llm.gbnf import PREFILL, build_gbnf, span_words
from mavend.router.llm.transport import Endpoint, Secret, request_json

NO_LOGPROBS_CONFIDENCE = 0.6
TOP_LOGPROBS = 20
# The local router counts only sampled tokens against llm_max_tokens; a server
# counts the fixed text of the answer too (`{"intent": "act", "fn": "` ...).
FIXED_TOKENS = 32
# The warm-up's first route makes the server evaluate (and cache) the ~1 500-token
# fixed prompt: ~12 s on two cores, far more than a turn's deadline.
WARM_UP_TIMEOUT_S = 180.0
MODELS_TIMEOUT_S = 5.0
CHAT_CONTENT_CHARS = 4000  # as the local model's chat turns
# The router's answer starts with the intent's name; this is the text before it.
INTENT_OFFSET = len(PREFILL)


class RemoteLlm:
    """The LLM stage on an OpenAI-compatible server. Thread-safe: no shared state per call."""

    def __init__(
        self,
        endpoint: Endpoint,
        llm: LlmSettings,
        router: RouterSettings,
        acts: ActsSettings,
        *,
        key: Secret | None = None,
    ) -> None:
        self._endpoint = endpoint
        self._llm = llm
        self._router = router
        self._acts = acts
        self._key = key
        # Fixed for the life of the backend, like the local model's cached prefix.
        self._messages = prompt.messages(acts)
        self._response_format = (
            schema.response_format(acts) if llm.constrain == "json_schema" else None
        )
        self.server_models: tuple[str, ...] = ()
        self.models_error = ""  # why /v1/models did not answer, after `list_models`

    def __repr__(self) -> str:
        return f"RemoteLlm({self._endpoint.url!r}, model={self._llm.model!r})"

    @property
    def endpoint(self) -> Endpoint:
        return self._endpoint

    @property
    def remote(self) -> bool:
        """Prompts leave this machine (`router.personal.may_share_personal`)."""
        return True

    @property
    def share_personal(self) -> bool:
        """`[llm] share_personal`: may stored data be put in this server's prompts?"""
        return self._llm.share_personal

    @property
    def model_name(self) -> str:
        """The configured model, else the one the server listed; "" when neither."""
        return self._llm.model or (self.server_models[0] if self.server_models else "")

    def list_models(self, timeout_s: float = MODELS_TIMEOUT_S) -> tuple[str, ...]:
        """The ids `GET /v1/models` lists; LlmError when it does not answer."""
        try:
            answer = request_json(
                self._endpoint, "GET", "/models", Deadline(timeout_s), key=self._key
            )
            data = answer.get("data") if isinstance(answer, dict) else None
            if not isinstance(data, list):
                raise LlmOutputError(f"{self._endpoint.source}: /v1/models has no list")
        except LlmError as exc:
            self.models_error = str(exc)
            raise
        self.server_models = tuple(
            str(m["id"]) for m in data if isinstance(m, dict) and "id" in m
        )
        self.models_error = ""
        return self.server_models

    def warm_up(self) -> float:
        """Ask the server what it serves, then route once with a long deadline so it
        evaluates (and caches) the fixed prompt now rather than in a turn; seconds."""
        started = time.monotonic()
        # Not every server lists its models; the route below says whether it works.
        with contextlib.suppress(LlmError):
            self.list_models()
        self._route("remind me at noon to stretch", "", Deadline(WARM_UP_TIMEOUT_S))
        return time.monotonic() - started

    def route(self, utterance: str, *, context: str = "") -> LlmRoute:
        """Route one utterance; LlmError (LlmTimeout, LlmOutputError) if it cannot."""
        return self._route(utterance, context, Deadline(self._router.llm_timeout_s))

    def complete_chat(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int = 96,
        timeout_s: float | None = None,
    ) -> LlmReply:
        """A short free reply, as the local model's: greedy, one system turn first."""
        started = time.monotonic()
        deadline = Deadline(self._router.llm_timeout_s if timeout_s is None else timeout_s)
        turns = [
            {"role": m["role"], "content": clean_text(m["content"], CHAT_CONTENT_CHARS)}
            for m in messages
        ]
        if not turns or turns[0]["role"] != "system":
            turns.insert(0, {"role": "system", "content": prompt.CHAT_SYSTEM_TEXT})
        body = self._body(turns, max_tokens)
        if self._llm.constrain == "grammar":
            body["repeat_penalty"] = 1.1  # what the local model's replies use
        reply = self._complete(body, deadline)
        text, _, finish = self._choice(reply)
        latency = (time.monotonic() - started) * 1000.0
        return LlmReply(text.strip(), latency, finish == "length")

    def close(self) -> None:
        """Nothing to release: every request opens and closes its own connection."""

    # ------------------------------------------------------------------ routing

    def _route(self, utterance: str, context: str, deadline: Deadline) -> LlmRoute:
        started = time.monotonic()
        text = clean_text(utterance, MAX_UTTERANCE_CHARS)
        if not text:
            raise LlmError("empty utterance")
        memory = clean_text(context, MAX_CONTEXT_CHARS)
        user = {"role": "user", "content": prompt.user_content(text, memory, self._acts)}
        words = span_words(text)
        body = self._body([*self._messages, user], self._router.llm_max_tokens + FIXED_TOKENS)
        if self._response_format is not None:
            body["response_format"] = self._response_format
        else:
            body["grammar"] = build_gbnf(self._acts, words=words)
            # llama.cpp servers default to a 1.1 repeat penalty; the local router
            # decodes without one, and the answers should be the same.
            body["repeat_penalty"] = 1.0
        if self._llm.logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = TOP_LOGPROBS
        reply = self._complete(body, deadline)
        raw, logprobs, _ = self._choice(reply)
        try:
            parsed = parse_answer(raw, self._acts)
            check_fields(parsed, words)
        except LlmOutputError as exc:
            raise LlmOutputError(f"{self._endpoint.source}: {exc}") from None
        scores = intent_scores(logprobs, raw) or fixed_scores(parsed.intent)
        ranked = tuple(sorted(scores.items(), key=lambda kv: kv[1], reverse=True))
        usage = reply.get("usage") if isinstance(reply.get("usage"), dict) else {}
        return LlmRoute(
            intent=parsed.intent, confidence=scores[parsed.intent], fn=parsed.fn,
            args=parsed.args, time_phrase=parsed.time_phrase, key=parsed.key,
            value=parsed.value, text=parsed.text, source=parsed.source, raw=raw,
            latency_ms=(time.monotonic() - started) * 1000.0, alternatives=ranked,
            evaluated_tokens=_count(usage, "prompt_tokens"),
            decoded_tokens=_count(usage, "completion_tokens"),
        )

    def _body(self, messages: list[dict[str, str]], max_tokens: int) -> dict[str, Any]:
        body: dict[str, Any] = {
            "messages": messages, "temperature": 0.0, "max_tokens": max_tokens, "stream": False,
        }
        if self._llm.model:
            body["model"] = self._llm.model
        return body

    def _complete(self, body: dict[str, Any], deadline: Deadline) -> dict[str, Any]:
        reply = request_json(
            self._endpoint, "POST", "/chat/completions", deadline, payload=body, key=self._key
        )
        if not isinstance(reply, dict):
            raise LlmOutputError(f"{self._endpoint.source}: the answer is not a JSON object")
        return reply

    def _choice(self, reply: dict[str, Any]) -> tuple[str, list[Any] | None, str]:
        """The first choice's content, its logprobs (None if none) and finish reason."""
        choices = reply.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str):
            raise LlmOutputError(
                f"{self._endpoint.source}: no choices[0].message.content in the answer"
            )
        assert isinstance(first, dict)
        logprobs = first.get("logprobs")
        entries = logprobs.get("content") if isinstance(logprobs, dict) else None
        finish = first.get("finish_reason")
        return content, entries if isinstance(entries, list) else None, str(finish or "")


def fixed_scores(intent: Intent) -> dict[Intent, float]:
    """Without logprobs: see the module doc."""
    rest = (1.0 - NO_LOGPROBS_CONFIDENCE) / (len(Intent) - 1)
    return {i: NO_LOGPROBS_CONFIDENCE if i is intent else rest for i in Intent}


def intent_scores(entries: list[Any] | None, raw: str) -> dict[Intent, float] | None:
    """Each intent's probability from the top logprobs at the token that starts the
    intent's name, as the local router sums its logits; None when they do not say.

    The token covering offset `INTENT_OFFSET` of the answer may begin a little
    before the name (a server's tokenizer may glue `"` to it): each alternative
    must then agree with the answer up to the name, and what follows must spell
    the beginning of one intent's name (or the whole name and its closing quote).
    """
    if not entries or not raw.startswith(PREFILL):
        return None
    start = 0
    for entry in entries:
        token = entry.get("token") if isinstance(entry, dict) else None
        if not isinstance(token, str):
            return None
        if start + len(token) > INTENT_OFFSET:
            top = entry.get("top_logprobs")
            # The chosen token counts too, listed among its alternatives or not.
            chosen = {"token": token, "logprob": entry.get("logprob")}
            return _scores_at([*top, chosen] if isinstance(top, list) else None,
                              raw[start:INTENT_OFFSET])
        start += len(token)
    return None


def _scores_at(top: object, lead: str) -> dict[Intent, float] | None:
    if not isinstance(top, list):
        return None
    seen: dict[str, float] = {}  # by text: the chosen token may be listed twice
    for alternative in top:
        if not isinstance(alternative, dict):
            continue
        token, logprob = alternative.get("token"), alternative.get("logprob")
        if isinstance(token, str) and isinstance(logprob, int | float) and math.isfinite(logprob):
            seen.setdefault(token, float(logprob))
    mass = dict.fromkeys(Intent, 0.0)
    for token, logprob in seen.items():
        owner = _owner(token[len(lead):]) if token.startswith(lead) else None
        if owner is not None:
            mass[owner] += math.exp(logprob)
    total = sum(mass.values())
    if total <= 0.0:
        return None
    return {intent: m / total for intent, m in mass.items()}


def _owner(piece: str) -> Intent | None:
    """The intent whose name `piece` begins (or is, with what follows the name)."""
    if not piece:
        return None
    for intent, label in prompt.LABELS.items():
        if label.startswith(piece) or piece.startswith(label + '"'):
            return intent
    return None


def _count(usage: object, name: str) -> int:
    value = usage.get(name) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and value >= 0 else 0
