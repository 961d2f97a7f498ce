"""llama.cpp plumbing for the in-process router: a grammar compiled once against
the model's vocabulary, loading a GGUF, the intent tokens, chat-template rendering.
"""

from __future__ import annotations

import ctypes
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mavend.config import RouterSettings
from mavend.router import prompt
from mavend.router.decision import Intent
from mavend.router.llm.common import LlmError, LlmOutputError

log = logging.getLogger(__name__)

CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

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
        self._ptr = llama_cpp.llama_sampler_init_grammar(vocab_of(llm), gbnf.encode(), b"root")
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


def penalised(logits: np.ndarray, previous: list[int], penalty: float = 1.1) -> np.ndarray:
    """A mild repetition penalty, so greedy replies do not loop."""
    if not previous:
        return logits
    logits = logits.copy()
    seen = np.unique(np.asarray(previous))
    values = logits[seen]
    logits[seen] = np.where(values > 0, values / penalty, values * penalty)
    return logits



def load_model(model_path: Path, router: RouterSettings) -> Any:
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


def vocab_of(llm: Any) -> Any:
    import llama_cpp

    return llama_cpp.llama_model_get_vocab(llm.model)


def intent_candidates(llm: Any) -> tuple[np.ndarray, np.ndarray]:
    """Token ids that spell a prefix of an intent name, and which intent each is.

    The grammar allows exactly these tokens right after the pre-fill; because
    the names start with different letters each token belongs to one intent.
    """
    import llama_cpp

    names = [prompt.LABELS[i] for i in Intent]
    firsts = {n[0] for n in names}
    assert len(firsts) == len(names), "intent names must start with different letters"
    vocab = vocab_of(llm)
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


def chat_template(llm: Any) -> str:
    template = (llm.metadata or {}).get("tokenizer.chat_template", "")
    if "<|im_start|>" not in template:
        # The prompt is written for ChatML (Qwen); without a template, or with a
        # template we cannot split safely, fall back to plain ChatML.
        log.info("model has no ChatML chat template; using plain ChatML")
        return CHATML_TEMPLATE
    return template


_SENTINEL = "\x00mavend-{}\x00"


def render(
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
