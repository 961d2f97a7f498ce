"""Stage 1 of the router: a local GGUF model, constrained by a GBNF grammar.

One utterance in, one `LlmRoute` out, or a typed `LlmError` so the cascade
falls through to the embedding classifier. A turn never breaks because of the
model: llama.cpp exceptions, a blown deadline and output that does not parse
all become `LlmError`.

How a turn is decoded (and why):

1. The prompt is the chat template rendered over a fixed system text, the act
   allowlist and few-shot turns, then the user turn, then the assistant turn
   pre-filled with `{"intent": "`. Everything before the user text is the same
   on every turn, so its KV cache is evaluated once (`warm_up`) and reused;
   a turn evaluates only the user turn, ~20-40 tokens.
2. The seven intent names start with seven different letters, so the first
   token after the pre-fill decides the intent. We read the logits there and
   sum the softmax mass of every token that spells a prefix of each name: that
   is exactly the probability of each intent under grammar-constrained
   sampling (the grammar's renormalisation over the allowed tokens). The
   intent is the one with the most mass and `confidence` is that mass.
   Nothing is sampled for this, so note/query/chat/system cost no decode
   step at all.
3. act/reminder/fact then need fields, decoded in phases (`Phase`): fixed
   text (`act", "fn": "`, ` "text": "`, ...) is appended to the prompt and
   evaluated as one batch, the free parts are decoded greedily under the
   grammar rule for just that part, until the rule is complete. A forced
   token costs ~10 ms in a batch against ~45 ms as a decode step (2 cores).
   The time phrase, reminder text and fact value are spans of the
   utterance's own words (`span_words`), so the model copies them; it cannot
   compute, convert or translate a time.

The whole answer is always a complete match of `build_gbnf`'s grammar (the
tests check it): step 2 picks one of its alternatives and step 3 is
constrained by the very rules it is made of.

Repeatability: llama.cpp's numerics depend on how tokens are batched, so a
greedy result can change when a turn reuses a different length of cached
prompt (PLATFORM.md saw this). We never reuse cache past the fixed prefix and
always evaluate the user turn in the same chunks from the same position, so
the same utterance gives the same logits on every turn.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import math
import re
import threading
import time
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from mavend.config import ActSlot, ActSpec, ActsSettings, RouterSettings
from mavend.router import prompt
from mavend.router.decision import Intent

log = logging.getLogger(__name__)

# Bounds on what reaches the prompt. A spoken turn is at most ~12 s
# ([endpoint] max_utterance_s): about 40 words, ~250 characters. 320 leaves
# room for fast talkers and typed input, keeps a hostile 10 000-character
# "utterance" out of the context, and bounds what a span field can copy.
MAX_UTTERANCE_CHARS = 320
# Memory recall is already capped by [memory] recall_max_chars (default 600).
MAX_CONTEXT_CHARS = 1000

# Field bounds in the grammar, in characters.
TIME_CHARS = 64
KEY_CHARS = 32
VALUE_CHARS = 64
PATTERN_SLOT_CHARS = 64

# The assistant turn starts with this; the grammar's root begins with it too.
PREFILL = '{"intent": "'
# What follows the intent's label up to the first free field, for the intents
# that carry fields; the others end right after the label.
FIELDS_AFTER: Mapping[Intent, str] = {
    Intent.ACT: '", "fn": "',
    Intent.REMINDER: '", "time": "',
    Intent.FACT: '", "key": "',
    Intent.QUERY: '", "source": "',
}
PLAIN_INTENTS = (Intent.NOTE, Intent.CHAT, Intent.SYSTEM)
# A query's source: one of prompt.SOURCE_WORDS and the end of the object.
SOURCE_ROOT = "query-rest"
# Fixed text between two free fields. The decoder appends it to the prompt (one
# batched eval) instead of sampling it token by token: ~5 forced tokens cost
# ~50 ms that way against ~45 ms each as decode steps on two cores.
TEXT_SEP = ' "text": "'
VALUE_SEP = ' "value": "'


# Tokens evaluated per llama_decode call for prompts. Deadline checks happen
# between chunks (and refuse a chunk predicted to overrun), so this bounds how
# far a prompt eval can overrun; chunk edges are fixed so results repeat (see
# above). Chunk size hardly changes throughput on CPU (~125 tok/s here).
EVAL_CHUNK = 64
# A decode step is ~45 ms on two cores; never assume more than this ahead.
MAX_STEP_LOOKAHEAD_S = 0.2

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

_JSON_CHAR = r'[^"\\\x00-\x1F\x7F]'  # no control characters, quotes or escapes
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def intent_head(intent: Intent) -> str:
    """The fixed text after the pre-fill once `intent` is chosen."""
    return prompt.LABELS[intent] + FIELDS_AFTER.get(intent, "")


class LlmError(Exception):
    """The LLM stage could not decide; the cascade falls through to the classifier."""


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


# --------------------------------------------------------------------------- grammar


def gbnf_literal(text: str) -> str:
    """A GBNF string literal that matches `text` exactly."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def fn_rule(act: ActSpec) -> str:
    # GBNF rule names are [a-zA-Z0-9-]; act names are [a-z0-9_], so this is 1:1.
    return "fn-" + act.name.replace("_", "-")


def _int_rule(slot: ActSlot) -> str:
    bounds = [abs(b) for b in (slot.min, slot.max) if b is not None]
    digits = max(len(str(b)) for b in bounds) if len(bounds) == 2 else 9
    sign = '"-"? ' if slot.min is None or slot.min < 0 else ""
    tail = f" [0-9]{{0,{digits - 1}}}" if digits > 1 else ""
    return f'"null" | {sign}("0" | [1-9]{tail})'


def _slot_rule(slot: ActSlot) -> str:
    if slot.type == "enum":
        values = " | ".join(gbnf_literal(json.dumps(v, ensure_ascii=False)) for v in slot.values)
        return f'"null" | {values}'
    if slot.type == "int":
        return _int_rule(slot)
    # A regular expression does not translate into GBNF in general: a bounded
    # string here, matched against the pattern after decoding.
    return f'"null" | "\\"" {_JSON_CHAR}{{0,{PATTERN_SLOT_CHARS}}} "\\""'


def args_sep(slot_name: str, first: bool) -> str:
    """The fixed text before a slot's value: ` "args": {"level": ` or ` "b": `."""
    return (' "args": {' if first else " ") + json.dumps(slot_name) + ": "


def slot_rule(index: int, j: int) -> str:
    # By position: "a_b"+"c" and "a"+"b_c" would collide as names.
    return f"slot{index}-{j}"


def _act_rules(act: ActSpec, index: int) -> list[str]:
    if not act.slots:
        return [f"{fn_rule(act)} ::= {gbnf_literal(act.name + chr(34) + '}')}"]
    parts = [gbnf_literal(act.name + '",')]
    rules: list[str] = []
    last = len(act.slots) - 1
    for j, (slot_name, slot) in enumerate(act.slots.items()):
        parts += [gbnf_literal(args_sep(slot_name, j == 0)), slot_rule(index, j),
                  gbnf_literal("," if j < last else "}}")]
        rules.append(f"{slot_rule(index, j)} ::= {_slot_rule(slot)}")
    return [f"{fn_rule(act)} ::= {' '.join(parts)}", *rules]


@dataclass(frozen=True)
class Phase:
    """One step of decoding fields: fixed text (evaluated as prompt), then a
    grammar rule decoded greedily until it is complete."""

    literal: str
    root: str


def act_choice_root(acts: ActsSettings) -> str:
    """The act's name and the character after it: `",` (slots follow) or `"}`."""
    names = [gbnf_literal(a.name + ('",' if a.slots else '"}')) for a in acts.allow]
    return " | ".join([*names, gbnf_literal(prompt.no_fn(acts) + '"}')])


def slot_phases(act: ActSpec, index: int) -> list[Phase]:
    last = len(act.slots) - 1
    return [
        Phase(args_sep(name, j == 0),
              f"{slot_rule(index, j)} {gbnf_literal(',' if j < last else '}}')}")
        for j, name in enumerate(act.slots)
    ]


# reminder and fact: the first field ends with `",`, the second closes the object.
FIELD_PHASES: Mapping[Intent, tuple[Phase, Phase]] = {
    Intent.REMINDER: (Phase("", 'time-chars "\\","'), Phase(TEXT_SEP, 'text-chars "\\"}"')),
    Intent.FACT: (Phase("", 'fact-key "\\","'), Phase(VALUE_SEP, 'value-chars "\\"}"')),
}


def build_gbnf(
    acts: ActsSettings, *, max_text_chars: int = 160, words: Sequence[str] | None = None
) -> str:
    """The grammar of the router's answer, generated from the act allowlist.

    Shape (only the fields an intent uses, fixed key order and spacing so
    the model spends no tokens on layout):

        {"intent": "act", "fn": "volume_set", "args": {"level": 40}}
        {"intent": "act", "fn": "none"}                  nothing on the list fits
        {"intent": "reminder", "time": "in ten minutes", "text": "check the oven"}
        {"intent": "fact", "key": "water", "value": "a glass"}
        {"intent": "query", "source": "notes"}           where the answer lives
        {"intent": "note"} / chat / system                the text is the utterance

    `fn` is one of the allowlisted names or "none" (`prompt.no_fn`: another
    word if an act is called "none"), so an act that is not on the list
    cannot be written. Enum slots are limited to their values, int slots
    to digits (range checked after decoding), pattern slots to bounded
    strings. Strings hold no control characters, quotes or backslashes.

    With `words` (the utterance's words, see `span_words`), "time", "text"
    and "value" can only be a run of consecutive words of the utterance, or
    "": the model copies the time phrase, it cannot convert, translate or
    compute it. Without, they are bounded free strings (`max_text_chars`
    for "text").
    """
    no_fn = gbnf_literal(prompt.no_fn(acts) + '"}')
    acts_alts = " | ".join([*(fn_rule(a) for a in acts.allow), no_fn])
    heads = " | ".join(
        f"{gbnf_literal(intent_head(i))} {i}-rest" for i in FIELDS_AFTER
    )
    plain = " | ".join(gbnf_literal(prompt.LABELS[i]) for i in PLAIN_INTENTS)
    text_sep, value_sep = gbnf_literal('",' + TEXT_SEP), gbnf_literal('",' + VALUE_SEP)
    rules = [
        f"root ::= {gbnf_literal(PREFILL)} intent-body",
        f"intent-body ::= {heads} | plain-rest",
        f'plain-rest ::= ({plain}) "\\"}}"',
        f"act-rest ::= {acts_alts}",
        "query-rest ::= ("
        + " | ".join(gbnf_literal(w) for w in prompt.SOURCE_WORDS) + ') "\\"}"',
        *(rule for i, act in enumerate(acts.allow) for rule in _act_rules(act, i)),
        f'reminder-rest ::= time-chars {text_sep} text-chars "\\"}}"',
        f'fact-rest ::= fact-key {value_sep} value-chars "\\"}}"',
        f"fact-key ::= [a-z] [a-z0-9_]{{0,{KEY_CHARS - 1}}}",
    ]
    if words is None:
        rules += [
            f"time-chars ::= {_JSON_CHAR}{{0,{TIME_CHARS}}}",
            f"text-chars ::= {_JSON_CHAR}{{0,{max_text_chars}}}",
            f"value-chars ::= {_JSON_CHAR}{{0,{VALUE_CHARS}}}",
        ]
    else:
        rules += ["time-chars ::= span", "text-chars ::= span", "value-chars ::= span",
                  *_span_rules(words)]
    return "\n".join(rules) + "\n"


_EDGE_PUNCTUATION = ".,;:!?()[]{}<>\"'«»“”„…"
MAX_SPAN_WORDS = 80
MAX_WORD_CHARS = 40  # longer is not a word anyone says; cut so a span stays small


def span_words(text: str) -> list[str]:
    """The utterance's words as a span grammar uses them: edge punctuation off,
    no quotes or backslashes (JSON strings here carry no escapes)."""
    words = []
    for raw in text.split()[:MAX_SPAN_WORDS]:
        word = raw.strip(_EDGE_PUNCTUATION).replace('"', "").replace("\\", "")
        word = word[:MAX_WORD_CHARS]
        if word and not _CONTROL.search(word):
            words.append(word)
    return words


def _span_rules(words: Sequence[str]) -> list[str]:
    """`span` matches "" or any run of consecutive `words`, single-spaced."""
    if not words:
        return ['span ::= ""']
    rules = ['span ::= "" | ' + " | ".join(f"w{i}" for i in range(len(words)))]
    for i, word in enumerate(words):
        more = f' (" " w{i + 1})?' if i + 1 < len(words) else ""
        rules.append(f"w{i} ::= {gbnf_literal(word)}{more}")
    return rules


def with_root(gbnf: str, rule: str) -> str:
    """The same grammar, starting at `rule` (the remainder after a pre-fill)."""
    body = [line for line in gbnf.splitlines() if not line.startswith("root ::=")]
    return "\n".join([f"root ::= {rule}", *body]) + "\n"


_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])
# Greedy decoding under a grammar only needs the best token the grammar allows:
# check the top few by logit first and the whole vocabulary only if none
# passes. Checking all ~150k tokens costs ~20 ms a step, as much as the model.
_FAST_CANDIDATES = 48


class CompiledGrammar:
    """A GBNF grammar parsed once against a model's vocabulary, reset per turn.

    `LlamaGrammar.from_string` only stores the text and llama.cpp re-parses it
    for every completion; a grammar that does not parse there yields a NULL
    sampler (and a crash). Here it is parsed once, at start-up, and a bad
    grammar is an `LlmError`.
    """

    def __init__(self, llm: Any, gbnf: str) -> None:
        import llama_cpp

        self.text = gbnf
        self._n_vocab = llm.n_vocab()
        self._eos = llm.token_eos()
        self._ptr = llama_cpp.llama_sampler_init_grammar(_vocab(llm), gbnf.encode(), b"root")
        if not self._ptr:
            raise LlmError("the router grammar does not parse (llama.cpp logged why)")

    def reset(self) -> None:
        import llama_cpp

        llama_cpp.llama_sampler_reset(self._ptr)

    def accept(self, token: int) -> None:
        import llama_cpp

        llama_cpp.llama_sampler_accept(self._ptr, token)

    def mask(self, ids: np.ndarray, logits: np.ndarray) -> np.ndarray:
        """The logits of `ids` with every token the grammar forbids now at -inf."""
        import llama_cpp

        data = np.empty(len(ids), dtype=_TOKEN_DATA)
        data["id"] = ids
        data["logit"] = logits
        data["p"] = 0.0
        array = llama_cpp.llama_token_data_array(
            data=data.ctypes.data_as(llama_cpp.llama_token_data_p),
            size=len(ids),
            selected=-1,
            sorted=False,
        )
        llama_cpp.llama_sampler_apply(self._ptr, ctypes.byref(array))
        return data["logit"]

    def complete(self) -> bool:
        """Whether the text accepted so far is a full match (end-of-turn allowed).

        Every phase rule ends in fixed punctuation, so once complete nothing
        else is allowed: there is no "could stop or go on" state to decide.
        """
        ids = np.array([self._eos], dtype=np.int32)
        return bool(np.isfinite(self.mask(ids, np.zeros(1, dtype=np.float32)))[0])

    def best(self, logits: np.ndarray) -> int:
        """The highest-logit token the grammar allows (greedy, constrained)."""
        k = min(_FAST_CANDIDATES, self._n_vocab)
        top = np.argpartition(logits, -k)[-k:]
        top = top[np.argsort(logits[top])[::-1]]
        allowed = np.isfinite(self.mask(top, logits[top]))
        if allowed.any():
            return int(top[int(np.argmax(allowed))])
        masked = self.mask(np.arange(self._n_vocab, dtype=np.int32), logits)
        if not np.isfinite(masked).any():
            raise LlmOutputError("the grammar allows no token here")
        return int(np.argmax(masked))

    def close(self) -> None:
        import llama_cpp

        if self._ptr:
            llama_cpp.llama_sampler_free(self._ptr)
            self._ptr = None


# --------------------------------------------------------------------------- output


@dataclass(frozen=True)
class _Parsed:
    intent: Intent
    fn: str = ""
    args: dict[str, str] = field(default_factory=dict)
    time_phrase: str = ""
    key: str = ""
    value: str = ""
    text: str = ""
    source: str = ""


def parse_answer(raw: str, acts: ActsSettings) -> _Parsed:
    """Check the model's JSON against the enums; LlmOutputError if anything is off."""
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise LlmOutputError(f"router output is not JSON: {raw[:200]!r}") from exc
    if not isinstance(obj, dict):
        raise LlmOutputError(f"router output is not an object: {raw[:200]!r}")
    intent = prompt.intent_of(obj.get("intent"))
    if intent is None:
        raise LlmOutputError(f"unknown intent {obj.get('intent')!r}")
    strings = {k: v for k, v in obj.items() if isinstance(v, str)}
    if intent is Intent.ACT:
        fn = strings.get("fn", "")
        fn = "" if fn == prompt.no_fn(acts) else fn
        spec = acts.get(fn) if fn else None
        if fn and spec is None:
            raise LlmOutputError(f"act {fn!r} is not on the allowlist")
        args = _checked_args(spec, obj.get("args") or {}) if spec else {}
        return _Parsed(intent, fn=fn, args=args)
    if intent is Intent.REMINDER:
        return _Parsed(intent, time_phrase=strings.get("time", "").strip(),
                       text=strings.get("text", "").strip())
    if intent is Intent.FACT:
        return _Parsed(intent, key=strings.get("key", ""), value=strings.get("value", "").strip())
    if intent is Intent.QUERY:
        source = strings.get("source", prompt.UNKNOWN_SOURCE)
        if source not in prompt.SOURCE_WORDS:
            raise LlmOutputError(f"unknown source {source!r}")
        return _Parsed(intent, source="" if source == prompt.UNKNOWN_SOURCE else source)
    return _Parsed(intent)


def _checked_args(spec: ActSpec, args: object) -> dict[str, str]:
    """Slot values that fit the allowlist; a value that does not is left out.

    A missing slot makes stage 2 ask for it, which beats running an act with a
    value the allowlist never allowed.
    """
    if not isinstance(args, dict):
        raise LlmOutputError(f"args of {spec.name} is not an object")
    out: dict[str, str] = {}
    for name, value in args.items():
        slot = spec.slots.get(name)
        if slot is None:
            raise LlmOutputError(f"act {spec.name} has no slot {name!r}")
        if value is None:
            continue
        if slot.type == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                continue
            if (slot.min is not None and value < slot.min) or (
                slot.max is not None and value > slot.max
            ):
                continue
            out[name] = str(value)
        elif slot.type == "enum":
            if value in slot.values:
                out[name] = str(value)
        elif isinstance(value, str) and re.fullmatch(slot.pattern, value):
            out[name] = value
    return out


def clean_text(text: str, limit: int) -> str:
    """Printable, single-spaced, at most `limit` characters (cut at a word edge)."""
    text = unicodedata.normalize("NFC", text)
    text = _CONTROL.sub(" ", text)
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = cut.rfind(" ")
    return cut[:space] if space > limit // 2 else cut


# --------------------------------------------------------------------------- router


class _Deadline:
    """A monotonic deadline that also refuses work predicted to overrun it."""

    def __init__(self, seconds: float | None) -> None:
        self.at = math.inf if seconds is None else time.monotonic() + seconds

    def left(self) -> float:
        return self.at - time.monotonic()

    def check(self, upcoming_s: float = 0.0, what: str = "") -> None:
        if time.monotonic() + upcoming_s >= self.at:
            raise LlmTimeout(f"LLM deadline reached{' before ' + what if what else ''}")


@dataclass
class _Cursor:
    """Decoding state across the phases of one turn."""

    pending: list[int]  # sampled or fixed tokens not evaluated yet
    evaluated: int = 0
    steps: int = 0  # tokens sampled one at a time


class _Costs:
    """Running estimates of eval cost, so a deadline check can look one step ahead."""

    def __init__(self) -> None:
        self.per_decode_step = 0.0

    @staticmethod
    def _blend(old: float, new: float) -> float:
        return new if old == 0.0 else 0.7 * old + 0.3 * new

    def step(self, seconds: float) -> None:
        self.per_decode_step = self._blend(self.per_decode_step, seconds)


class LlmRouter:
    """The grammar-constrained LLM stage. Thread-safe: one call at a time."""

    def __init__(
        self,
        model_path: Path,
        router: RouterSettings,
        acts: ActsSettings,
        *,
        prefix_cache_dir: Path | None = None,
    ) -> None:
        self._settings = router
        # The evaluated prefix's KV state is kept on disk here, so a new process
        # (`mavend say`, a restarted daemon) restores it in milliseconds instead
        # of spending ~12 s re-evaluating ~1 500 identical tokens.
        self._prefix_cache_dir = prefix_cache_dir
        self._model_path = model_path
        self._acts = acts
        self._lock = threading.Lock()
        self._costs = _Costs()
        # Grammars that do not depend on the utterance, parsed once: the act
        # choice and each slot's value. Keyed by their root expression.
        self._fixed: dict[str, CompiledGrammar] = {}
        self._snapshot: bytes | None = None
        self._llm = _load(model_path, router)
        try:
            self._setup(acts)
        except Exception as exc:
            self.close()
            if isinstance(exc, LlmError):
                raise
            # tokenizer or template trouble is an LLM failure too
            raise LlmError(f"cannot prepare the router prompt: {exc}") from exc

    # ------------------------------------------------------------------ set-up

    def _setup(self, acts: ActsSettings) -> None:
        self.gbnf = build_gbnf(acts)
        # Both forms must parse: a grammar error is a start-up error, not a turn's.
        CompiledGrammar(self._llm, self.gbnf).close()
        CompiledGrammar(self._llm, build_gbnf(acts, words=["a", "b"])).close()
        # Fields are decoded in phases (see `Phase`). Reminder and fact copy
        # spans of the utterance, so their grammars are built per turn (well
        # under a millisecond); the act phases are fixed and parsed here.
        roots = [act_choice_root(acts), SOURCE_ROOT] + [
            phase.root for i, act in enumerate(acts.allow) for phase in slot_phases(act, i)
        ]
        for root in roots:
            self._fixed[root] = CompiledGrammar(self._llm, with_root(self.gbnf, root))
        self._vocab = _vocab(self._llm)
        self._template = _chat_template(self._llm)
        turns = [*prompt.messages(acts), {"role": "user", "content": ""}]
        pieces = _render(self._template, self._llm, turns)
        # [template, content, ..., template]: the last content (empty) is where
        # the utterance goes, so everything before it is the fixed prefix.
        self._prefix = self._tokens_of(pieces[:-2])
        self._suffix = self._tok(pieces[-1], special=True) + self._tok(PREFILL, special=False)
        self._heads = {i: self._tok(intent_head(i), special=False) for i in FIELDS_AFTER}
        self._candidates = _intent_candidates(self._llm)
        # The answer's fixed text is evaluated as prompt too: heads and separators.
        fixed = max(len(h) for h in self._heads.values()) + max(
            [len(self._tok(TEXT_SEP + VALUE_SEP, special=False))]
            + [sum(len(self._tok(p.literal, special=False)) for p in slot_phases(a, 0))
               for a in acts.allow]
        )
        self._user_budget = (
            self._llm.n_ctx() - len(self._prefix) - len(self._suffix) - fixed
            - self._settings.llm_max_tokens - 4
        )
        if self._user_budget < 32:
            raise LlmError(
                f"router.llm_context={self._llm.n_ctx()} is too small: the fixed prompt takes "
                f"{len(self._prefix)} tokens and the answer up to {self._settings.llm_max_tokens}"
            )

    def _tok(self, text: str, *, special: bool) -> list[int]:
        # special=False for anything the user or the examples say: a spoken
        # "<|im_end|>" must stay text, not end the turn.
        if not text:
            return []
        return list(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=special))

    def _tokens_of(self, pieces: Sequence[str]) -> list[int]:
        """Tokens of alternating [template, content, template, ...] pieces."""
        out: list[int] = []
        for i, piece in enumerate(pieces):
            out += self._tok(piece, special=(i % 2 == 0))
        return out

    @property
    def prefix_tokens(self) -> int:
        """Length of the fixed, cached prompt prefix in tokens."""
        return len(self._prefix)

    # ------------------------------------------------------------------ public

    @property
    def model_path(self) -> Path:
        return self._model_path

    @property
    def model_name(self) -> str:
        """The model's own name, from the GGUF header (general.name); "" when it has none."""
        return str((self._llm.metadata or {}).get("general.name", ""))

    def warm_up(self) -> float:
        """Evaluate the fixed prefix (and one throwaway turn); seconds taken.

        Call it at start-up: the prefix is ~1 500 tokens, ~12 s on two cores
        here, which would not fit in a turn's deadline. (Without it the first turns
        still work through the prefix chunk by chunk, timing out until done.)
        """
        start = time.monotonic()
        with self._lock:
            try:
                self._ensure_prefix(_Deadline(None))
                # One turn with fields to decode warms the grammar path and
                # measures a decode step for the deadline's look-ahead.
                with contextlib.suppress(LlmOutputError):
                    self._route_locked("remind me at noon to stretch", "", _Deadline(None))
            except LlmError:
                raise
            except Exception as exc:
                raise LlmError(f"LLM warm-up failed: {type(exc).__name__}: {exc}") from exc
        return time.monotonic() - start

    def route(self, utterance: str, *, context: str = "") -> LlmRoute:
        """Route one utterance; LlmError (LlmTimeout, LlmOutputError) if it cannot.

        `context` is an optional memory-recall block; it goes into the user
        turn, so the cached system prefix stays the same on every turn.
        """
        start = time.monotonic()
        deadline = _Deadline(self._settings.llm_timeout_s)
        with self._locked(deadline):
            try:
                route = self._route_locked(utterance, context, deadline)
            except LlmError:
                raise
            except Exception as exc:  # anything llama.cpp raises
                raise LlmError(f"LLM routing failed: {type(exc).__name__}: {exc}") from exc
        return replace(route, latency_ms=(time.monotonic() - start) * 1000.0)

    def complete_chat(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        max_tokens: int = 96,
        timeout_s: float | None = None,
    ) -> LlmReply:
        """A short free reply (chat, phrasing an answer) from the same model.

        `messages` are {"role", "content"} dicts; without a system turn,
        `prompt.CHAT_SYSTEM_TEXT` is put first. Greedy, stops at end of turn.
        The router's cached prefix is restored from a snapshot on the next turn.
        """
        start = time.monotonic()
        deadline = _Deadline(self._settings.llm_timeout_s if timeout_s is None else timeout_s)
        with self._locked(deadline):
            try:
                text, truncated = self._chat_locked(messages, max_tokens, deadline)
            except LlmError:
                raise
            except Exception as exc:
                raise LlmError(f"LLM reply failed: {type(exc).__name__}: {exc}") from exc
        return LlmReply(text, (time.monotonic() - start) * 1000.0, truncated)

    def close(self) -> None:
        with self._lock:
            for grammar in self._fixed.values():
                grammar.close()
            self._fixed.clear()
            self._llm.close()

    @contextlib.contextmanager
    def _locked(self, deadline: _Deadline) -> Iterator[None]:
        # Waiting for another turn counts against this one's deadline.
        if not self._lock.acquire(timeout=max(deadline.left(), 0.0)):
            raise LlmTimeout("the LLM was busy for the whole deadline")
        try:
            yield
        finally:
            self._lock.release()

    # ------------------------------------------------------------------ routing

    def _route_locked(self, utterance: str, context: str, deadline: _Deadline) -> LlmRoute:
        text = clean_text(utterance, MAX_UTTERANCE_CHARS)
        tokens = self._prefix + self._user_tokens(text, context) + self._suffix
        evaluated = self._eval_prompt(tokens, deadline)
        scores = self._intent_scores()
        intent = max(scores, key=scores.__getitem__)
        cursor = _Cursor(pending=list(self._heads.get(intent, [])))
        raw = PREFILL + intent_head(intent)
        if intent in FIELDS_AFTER:
            raw += self._decode_fields(intent, text, cursor, deadline)
        else:
            raw += '"}'
        parsed = parse_answer(raw, self._acts)
        if parsed.intent is not intent:  # the grammar rules this out; never trust it
            raise LlmOutputError(f"decoded {parsed.intent} after choosing {intent}")
        ranked = tuple(sorted(scores.items(), key=lambda kv: kv[1], reverse=True))
        return LlmRoute(
            intent=intent, confidence=scores[intent], fn=parsed.fn, args=parsed.args,
            time_phrase=parsed.time_phrase, key=parsed.key, value=parsed.value,
            text=parsed.text, source=parsed.source, raw=raw, latency_ms=0.0, alternatives=ranked,
            evaluated_tokens=evaluated + cursor.evaluated, decoded_tokens=cursor.steps,
        )

    def _decode_fields(
        self, intent: Intent, text: str, cursor: _Cursor, deadline: _Deadline
    ) -> str:
        """The JSON after the intent's head, decoded phase by phase."""
        if intent is Intent.ACT:
            out = self._phase(cursor, "", self._fixed[act_choice_root(self._acts)], deadline)
            index, spec = next(
                ((i, a) for i, a in enumerate(self._acts.allow) if out == a.name + '",'),
                (-1, None),
            )
            for phase in slot_phases(spec, index) if spec is not None else ():
                out += self._phase(cursor, phase.literal, self._fixed[phase.root], deadline)
            return out
        if intent is Intent.QUERY:
            return self._phase(cursor, "", self._fixed[SOURCE_ROOT], deadline)
        gbnf = build_gbnf(self._acts, words=span_words(text))
        out = ""
        for phase in FIELD_PHASES[intent]:
            grammar = CompiledGrammar(self._llm, with_root(gbnf, phase.root))
            try:
                out += self._phase(cursor, phase.literal, grammar, deadline)
            finally:
                grammar.close()
        return out

    def _user_tokens(self, text: str, context: str) -> list[int]:
        if not text:
            raise LlmError("empty utterance")
        memory = clean_text(context, MAX_CONTEXT_CHARS)
        tokens = self._tok(prompt.user_content(text, memory), special=False)
        if len(tokens) > self._user_budget:
            # Keep the end: the utterance follows the memory block.
            tokens = tokens[-self._user_budget :]
        return tokens

    def _logits(self) -> np.ndarray:
        import llama_cpp

        ptr = llama_cpp.llama_get_logits_ith(self._llm.ctx, -1)
        return np.ctypeslib.as_array(ptr, shape=(self._llm.n_vocab(),))

    def _intent_scores(self) -> dict[Intent, float]:
        """Each intent's probability at the first token after the pre-fill."""
        ids, owners = self._candidates
        picked = self._logits()[ids].astype(np.float64)
        if not np.all(np.isfinite(picked)):
            raise LlmOutputError("the model produced non-finite logits")
        weights = np.exp(picked - picked.max())
        mass = np.bincount(owners, weights=weights, minlength=len(Intent)) / weights.sum()
        return {intent: float(mass[i]) for i, intent in enumerate(Intent)}

    def _phase(
        self, cursor: _Cursor, literal: str, grammar: CompiledGrammar, deadline: _Deadline
    ) -> str:
        """Evaluate pending tokens and `literal` as one batch, then decode greedily
        under `grammar` until it is complete; the text, literal included."""
        import llama_cpp

        pending = cursor.pending + self._tok(literal, special=False)
        self._eval_chunk(pending, deadline, "decoding")
        cursor.evaluated += len(pending)
        cursor.pending = []
        grammar.reset()
        out = bytearray()
        while True:
            token = grammar.best(self._logits())
            cursor.steps += 1
            if llama_cpp.llama_vocab_is_eog(self._vocab, token):
                # The grammar only allows end-of-turn once complete, and we stop there.
                raise LlmOutputError(f"the model ended the turn inside a field: {bytes(out)!r}")
            grammar.accept(token)
            out += self._llm.detokenize([token])
            if grammar.complete():
                cursor.pending = [token]  # evaluated with the next phase's literal
                break
            if cursor.steps >= self._settings.llm_max_tokens:
                raise LlmOutputError(f"no complete answer in {cursor.steps} tokens")
            self._step(token, deadline, "the answer was complete")
        # Byte-level tokens can spell malformed UTF-8 that the grammar (which
        # reads code points) lets through; it stays text, replaced, not an error.
        return literal + out.decode("utf-8", errors="replace")

    def _step(self, token: int, deadline: _Deadline, what: str) -> None:
        # Look one step ahead, capped so that one slow step cannot lock out decoding.
        deadline.check(min(self._costs.per_decode_step, MAX_STEP_LOOKAHEAD_S), what)
        started = time.monotonic()
        self._llm.eval([token])
        self._costs.step(time.monotonic() - started)

    # ------------------------------------------------------------------ prompt eval

    def _ensure_prefix(self, deadline: _Deadline) -> int:
        """Make the KV cache start with the whole fixed prefix; tokens evaluated."""
        done = self._cached_prefix_len()
        if done == len(self._prefix):
            return 0
        if self._snapshot is None:
            self._snapshot = self._read_prefix_cache()
        if self._snapshot is not None:
            try:
                self._restore_prefix()
                return 0
            except LlmError:
                log.warning("the cached LLM prefix did not restore; evaluating it again")
                self._drop_prefix_cache()
        # Chunk edges at fixed multiples of EVAL_CHUNK, so an eval resumed after a
        # timeout batches tokens exactly as an uninterrupted one would.
        done -= done % EVAL_CHUNK
        self._llm.n_tokens = done
        for start in range(done, len(self._prefix), EVAL_CHUNK):
            self._eval_chunk(self._prefix[start : start + EVAL_CHUNK], deadline, "the prefix")
        self._take_snapshot()
        self._write_prefix_cache()
        return len(self._prefix) - done

    def _prefix_cache_path(self) -> Path | None:
        if self._prefix_cache_dir is None:
            return None
        import hashlib

        import llama_cpp

        stat = self._model_path.stat()
        key = hashlib.sha256()
        # Same weights, same prompt tokens, same context size, same llama.cpp:
        # anything else and the KV bytes would not fit.
        for part in (str(self._model_path.resolve()), stat.st_size, stat.st_mtime_ns,
                     self._llm.n_ctx(), llama_cpp.__version__):
            key.update(f"{part}\0".encode())
        key.update(np.asarray(self._prefix, dtype=np.int32).tobytes())
        return self._prefix_cache_dir / f"router-prefix-{key.hexdigest()[:24]}.kv"

    def _read_prefix_cache(self) -> bytes | None:
        path = self._prefix_cache_path()
        if path is None or not path.exists():
            return None
        try:
            return path.read_bytes()
        except OSError as exc:
            log.warning("cannot read the LLM prefix cache %s: %s", path, exc)
            return None

    def _write_prefix_cache(self) -> None:
        path = self._prefix_cache_path()
        if path is None or self._snapshot is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            for stale in path.parent.glob("router-prefix-*.kv"):
                stale.unlink(missing_ok=True)  # an older prompt or model: never valid again
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(self._snapshot)
            tmp.replace(path)
        except OSError as exc:  # a cache: losing it costs time, never a turn
            log.warning("cannot write the LLM prefix cache %s: %s", path, exc)

    def _drop_prefix_cache(self) -> None:
        self._snapshot = None
        path = self._prefix_cache_path()
        if path is not None:
            path.unlink(missing_ok=True)

    def _eval_prompt(self, tokens: list[int], deadline: _Deadline) -> int:
        """Evaluate `tokens`, reusing the cached fixed prefix; tokens evaluated."""
        evaluated = self._ensure_prefix(deadline)
        n_prefix = len(self._prefix)
        # Never reuse cache past the prefix: see "Repeatability" in the module doc.
        self._llm.n_tokens = n_prefix
        for start in range(n_prefix, len(tokens), EVAL_CHUNK):
            chunk = tokens[start : start + EVAL_CHUNK]
            self._eval_chunk(chunk, deadline, "the utterance was read")
            evaluated += len(chunk)
        return evaluated

    def _eval_chunk(self, chunk: list[int], deadline: _Deadline, what: str) -> None:
        # No look-ahead here: an estimate inflated by one slow chunk (a busy
        # box) would refuse every later turn without ever measuring again. A
        # chunk overruns the deadline by at most ~EVAL_CHUNK tokens' time.
        deadline.check(0.0, what)
        self._llm.eval(chunk)

    def _cached_prefix_len(self) -> int:
        n = min(self._llm.n_tokens, len(self._prefix))
        differ = np.nonzero(self._llm.input_ids[:n] != np.asarray(self._prefix[:n]))[0]
        return int(differ[0]) if differ.size else n

    def _take_snapshot(self) -> None:
        """Keep the prefix's KV so a chat reply can borrow the context cheaply."""
        import llama_cpp

        ctx = self._llm.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, buf, size, 0)
        self._snapshot = bytes(buf[:written]) if written else None

    def _restore_prefix(self) -> None:
        import llama_cpp

        assert self._snapshot is not None
        llm = self._llm
        llm.n_tokens = 0
        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(llm.ctx), True)
        data = (ctypes.c_uint8 * len(self._snapshot)).from_buffer_copy(self._snapshot)
        if not llama_cpp.llama_state_seq_set_data(llm.ctx, data, len(self._snapshot), 0):
            self._snapshot = None
            raise LlmError("could not restore the cached router prefix")
        llm.input_ids[: len(self._prefix)] = self._prefix
        llm.n_tokens = len(self._prefix)

    # ------------------------------------------------------------------ chat

    def _chat_locked(
        self, messages: Sequence[Mapping[str, str]], max_tokens: int, deadline: _Deadline
    ) -> tuple[str, bool]:
        import llama_cpp

        turns = [{"role": m["role"], "content": clean_text(m["content"], 4000)} for m in messages]
        if not turns or turns[0]["role"] != "system":
            turns.insert(0, {"role": "system", "content": prompt.CHAT_SYSTEM_TEXT})
        tokens = self._tokens_of(_render(self._template, self._llm, turns))
        if len(tokens) + max_tokens > self._llm.n_ctx():
            raise LlmError(f"a chat prompt of {len(tokens)} tokens does not fit the context")
        # This overwrites the router's prefix; the next route() restores it
        # from the snapshot in milliseconds.
        self._llm.n_tokens = 0
        for start in range(0, len(tokens), EVAL_CHUNK):
            self._eval_chunk(tokens[start : start + EVAL_CHUNK], deadline, "the chat prompt")
        out: list[int] = []
        while len(out) < max_tokens:
            logits = _penalised(self._logits(), out)
            token = int(np.argmax(logits))
            if llama_cpp.llama_vocab_is_eog(self._vocab, token):
                return self._text(out), False
            out.append(token)
            if len(out) < max_tokens:
                self._step(token, deadline, "the reply was complete")
        return self._text(out), True

    def _text(self, tokens: list[int]) -> str:
        return self._llm.detokenize(tokens).decode("utf-8", errors="replace").strip()


def _penalised(logits: np.ndarray, previous: list[int], penalty: float = 1.1) -> np.ndarray:
    """A mild repetition penalty, so greedy replies do not loop."""
    if not previous:
        return logits
    logits = logits.copy()
    seen = np.unique(np.asarray(previous))
    values = logits[seen]
    logits[seen] = np.where(values > 0, values / penalty, values * penalty)
    return logits


# --------------------------------------------------------------------------- helpers


def _load(model_path: Path, router: RouterSettings) -> Any:
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise LlmError(f"llama-cpp-python is not installed: {exc}") from exc
    if not Path(model_path).is_file():
        raise LlmError(f"no model file at {model_path} (run `mavend models pull`)")
    try:
        return Llama(
            model_path=str(model_path),
            n_ctx=router.llm_context,
            n_threads=router.llm_threads,
            n_threads_batch=router.llm_threads,
            n_batch=512,
            seed=0,
            verbose=False,
        )
    except Exception as exc:
        raise LlmError(f"cannot load {model_path}: {exc}") from exc


def _vocab(llm: Any) -> Any:
    import llama_cpp

    return llama_cpp.llama_model_get_vocab(llm.model)


def _intent_candidates(llm: Any) -> tuple[np.ndarray, np.ndarray]:
    """Token ids that spell a prefix of an intent name, and which intent each is.

    The grammar allows exactly these tokens right after the pre-fill; because
    the names start with different letters each token belongs to one intent.
    """
    import llama_cpp

    names = [prompt.LABELS[i] for i in Intent]
    firsts = {n[0] for n in names}
    assert len(firsts) == len(names), "intent names must start with different letters"
    vocab = _vocab(llm)
    index = {name: i for i, name in enumerate(names)}
    ids: list[int] = []
    owners: list[int] = []
    for token in range(llm.n_vocab()):
        text = llama_cpp.llama_vocab_get_text(vocab, token)
        if not text or text[:1].decode("latin-1") not in firsts:
            continue
        piece = text.decode("utf-8", errors="ignore")
        for name in names:
            if name.startswith(piece):
                ids.append(token)
                owners.append(index[name])
                break
    if sorted(set(owners)) != list(range(len(names))):
        raise LlmError("the model's vocabulary cannot spell every intent name")
    return np.asarray(ids, dtype=np.int64), np.asarray(owners, dtype=np.int64)


def _chat_template(llm: Any) -> str:
    template = (llm.metadata or {}).get("tokenizer.chat_template", "")
    if "<|im_start|>" not in template:
        # The prompt is written for ChatML (Qwen); without a template, or with a
        # template we cannot split safely, fall back to plain ChatML.
        log.info("model has no ChatML chat template; using plain ChatML")
        return CHATML_TEMPLATE
    return template


_SENTINEL = "\x00mavend-{}\x00"


def _render(
    template: str,
    llm: Any,
    messages: Sequence[Mapping[str, str]],
    *,
    add_generation_prompt: bool = True,
) -> list[str]:
    """Render the chat template; the text split into template/content pieces.

    Contents are swapped for sentinels before rendering, so the result splits
    back into [template, content, template, content, ..., template]. Template
    pieces are tokenized with special tokens on, contents with them off.
    """
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    def text_of(token: int) -> str:
        if token < 0:
            return ""
        return llm.detokenize([token], special=True).decode("utf-8", errors="ignore")

    eos, bos = text_of(llm.token_eos()), text_of(llm.token_bos())
    formatter = Jinja2ChatFormatter(
        template, eos_token=eos, bos_token=bos, add_generation_prompt=add_generation_prompt
    )
    marked = [
        {"role": m["role"], "content": _SENTINEL.format(i)} for i, m in enumerate(messages)
    ]
    rendered = formatter(messages=marked).prompt
    pieces: list[str] = []
    rest = rendered
    for i, message in enumerate(messages):
        before, sep, rest = rest.partition(_SENTINEL.format(i))
        if not sep:
            raise LlmError("the chat template dropped a message; cannot build the prompt")
        pieces += [before, message["content"]]
    pieces.append(rest)
    return pieces
