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
import logging
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from mavend import paths
from mavend.config import ActsSettings, RouterSettings
from mavend.router import prompt
from mavend.router.decision import Intent
from mavend.router.llm.answer import parse_answer
from mavend.router.llm.common import (
    MAX_CONTEXT_CHARS,
    MAX_UTTERANCE_CHARS,
    Deadline,
    LlmError,
    LlmOutputError,
    LlmReply,
    LlmRoute,
    LlmTimeout,
    PromptTooLong,
    clean_text,
    whole_sentences,
)
from mavend.router.llm.cores import ThreadChooser
from mavend.router.llm.gbnf import (
    FIELD_PHASES,
    FIELDS_AFTER,
    PREFILL,
    SOURCE_ROOT,
    TEXT_SEP,
    VALUE_SEP,
    act_choice_root,
    build_gbnf,
    intent_head,
    slot_phases,
    span_words,
    with_root,
)
from mavend.router.llm.llamacpp import (
    CompiledGrammar,
    chat_template,
    intent_candidates,
    load_model,
    penalised,
    render,
    vocab_of,
)

log = logging.getLogger(__name__)

# Tokens evaluated per llama_decode call for prompts. Deadline checks happen
# between chunks (and refuse a chunk predicted to overrun), so this bounds how
# far a prompt eval can overrun; chunk edges are fixed so results repeat (see
# above). Chunk size hardly changes throughput on CPU (~125 tok/s here).
EVAL_CHUNK = 64
PREFIX_CACHES_KEPT = 3  # router prefix snapshots kept, the most recently used
# A decode step is ~45 ms on two cores; never assume more than this ahead.
MAX_STEP_LOOKAHEAD_S = 0.2

# Tokens left for the utterance and the recall block, at the least: below this the stage
# could route nothing but the shortest commands.
MIN_USER_TOKENS = 32


def _next_power_of_two(n: int) -> int:
    return 1 << max(n - 1, 1).bit_length()


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
        self._llm = load_model(model_path, router)
        self._threads = ThreadChooser(router.llm_threads, adaptive=router.llm_adaptive_threads)
        self._threads_now = router.llm_threads
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
        self._vocab = vocab_of(self._llm)
        self._template = chat_template(self._llm)
        turns = [*prompt.messages(acts), {"role": "user", "content": ""}]
        pieces = render(self._template, self._llm, turns)
        # [template, content, ..., template]: the last content (empty) is where
        # the utterance goes, so everything before it is the fixed prefix.
        self._prefix = self._tokens_of(pieces[:-2])
        self._suffix = self._tok(pieces[-1], special=True) + self._tok(PREFILL, special=False)
        self._heads = {i: self._tok(intent_head(i), special=False) for i in FIELDS_AFTER}
        self._candidates = intent_candidates(self._llm)
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
        if self._user_budget < MIN_USER_TOKENS:
            needed = self._llm.n_ctx() - self._user_budget + MIN_USER_TOKENS
            raise PromptTooLong(
                f"[router] llm_context = {self._llm.n_ctx()} is too small for this "
                f"configuration: the router's fixed prompt ({len(acts.allow)} acts, devices "
                f"included) takes {len(self._prefix)} tokens and the answer up to "
                f"{self._settings.llm_max_tokens}; it needs at least {needed}. Set [router] "
                f"llm_context = {_next_power_of_two(needed)}, or [router] llm_enabled = false"
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

    @property
    def remote(self) -> bool:
        """Prompts stay in this process (`router.personal.may_share_personal`)."""
        return False

    def warm_up(self) -> float:
        """Evaluate the fixed prefix (and one throwaway turn); seconds taken.

        Call it at start-up: the prefix is ~1 500 tokens, ~12 s on two cores
        here, which would not fit in a turn's deadline. (Without it the first turns
        still work through the prefix chunk by chunk, timing out until done.)
        """
        start = time.monotonic()
        with self._lock:
            try:
                self._fit_threads()
                self._ensure_prefix(Deadline(None))
                # One turn with fields to decode warms the grammar path and
                # measures a decode step for the deadline's look-ahead.
                with contextlib.suppress(LlmOutputError):
                    self._route_locked("remind me at noon to stretch", "", Deadline(None))
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
        deadline = Deadline(self._settings.llm_timeout_s)
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
        deadline = Deadline(self._settings.llm_timeout_s if timeout_s is None else timeout_s)
        with self._locked(deadline):
            try:
                text, truncated = self._chat_locked(messages, max_tokens, deadline)
            except LlmError:
                raise
            except Exception as exc:
                raise LlmError(f"LLM reply failed: {type(exc).__name__}: {exc}") from exc
        return LlmReply(text, (time.monotonic() - start) * 1000.0, truncated)

    def close(self) -> None:
        self._threads.close()
        with self._lock:
            for grammar in self._fixed.values():
                grammar.close()
            self._fixed.clear()
            self._llm.close()

    @contextlib.contextmanager
    def _locked(self, deadline: Deadline) -> Iterator[None]:
        # Waiting for another turn counts against this one's deadline.
        if not self._lock.acquire(timeout=max(deadline.left(), 0.0)):
            raise LlmTimeout("the LLM was busy for the whole deadline")
        try:
            self._fit_threads()
            yield
        finally:
            self._lock.release()

    def _fit_threads(self) -> None:
        """Fewer threads while other processes hold cores (see `cores`); speed only."""
        import llama_cpp

        wanted = self._threads.choose()
        if wanted != self._threads_now:
            llama_cpp.llama_set_n_threads(self._llm.ctx, wanted, wanted)
            log.debug("LLM threads %d -> %d", self._threads_now, wanted)
            self._threads_now = wanted

    @property
    def threads_now(self) -> int:
        """The thread count of the last call (benches and logs)."""
        return self._threads_now

    # ------------------------------------------------------------------ routing

    def _route_locked(self, utterance: str, context: str, deadline: Deadline) -> LlmRoute:
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
        self, intent: Intent, text: str, cursor: _Cursor, deadline: Deadline
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
        tokens = self._tok(prompt.user_content(text, memory, self._acts), special=False)
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
        self, cursor: _Cursor, literal: str, grammar: CompiledGrammar, deadline: Deadline
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

    def _step(self, token: int, deadline: Deadline, what: str) -> None:
        # Look one step ahead, capped so that one slow step cannot lock out decoding.
        deadline.check(min(self._costs.per_decode_step, MAX_STEP_LOOKAHEAD_S), what)
        started = time.monotonic()
        self._llm.eval([token])
        self._costs.step(time.monotonic() - started)

    # ------------------------------------------------------------------ prompt eval

    def _ensure_prefix(self, deadline: Deadline) -> int:
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
            snapshot = path.read_bytes()
        except OSError as exc:
            log.warning("cannot read the LLM prefix cache %s: %s", path, exc)
            return None
        with contextlib.suppress(OSError):  # used now: among the newest kept
            os.utime(path)
        return snapshot

    def _write_prefix_cache(self) -> None:
        path = self._prefix_cache_path()
        if path is None or self._snapshot is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # The newest few are kept: two configs used in turn (a home's acts and none,
            # as the tests and `mavend eval` do) each found theirs gone and spent the
            # prompt's whole evaluation again. Older ones go: their prompt may never return.
            paths.keep_recent(path, "router-prefix-*.kv", PREFIX_CACHES_KEPT)
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

    def _eval_prompt(self, tokens: list[int], deadline: Deadline) -> int:
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

    def _eval_chunk(self, chunk: list[int], deadline: Deadline, what: str) -> None:
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
        self, messages: Sequence[Mapping[str, str]], max_tokens: int, deadline: Deadline
    ) -> tuple[str, bool]:
        import llama_cpp

        turns = [{"role": m["role"], "content": clean_text(m["content"], 4000)} for m in messages]
        if not turns or turns[0]["role"] != "system":
            turns.insert(0, {"role": "system", "content": prompt.CHAT_SYSTEM_TEXT})
        tokens = self._tokens_of(render(self._template, self._llm, turns))
        if len(tokens) + max_tokens > self._llm.n_ctx():
            raise LlmError(f"a chat prompt of {len(tokens)} tokens does not fit the context")
        # This overwrites the router's prefix; the next route() restores it
        # from the snapshot in milliseconds.
        self._llm.n_tokens = 0
        for start in range(0, len(tokens), EVAL_CHUNK):
            self._eval_chunk(tokens[start : start + EVAL_CHUNK], deadline, "the chat prompt")
        out: list[int] = []
        while len(out) < max_tokens:
            logits = penalised(self._logits(), out)
            token = int(np.argmax(logits))
            if llama_cpp.llama_vocab_is_eog(self._vocab, token):
                return self._text(out), False
            out.append(token)
            if len(out) < max_tokens:
                try:
                    self._step(token, deadline, "the reply was complete")
                except LlmTimeout:
                    # A slow box costs the reply its tail, not its whole: the sentences
                    # already written are said; with none, the caller's timeout stands.
                    said = whole_sentences(self._text(out))
                    if not said:
                        raise
                    return said, True
        return self._text(out), True

    def _text(self, tokens: list[int]) -> str:
        return self._llm.detokenize(tokens).decode("utf-8", errors="replace").strip()
