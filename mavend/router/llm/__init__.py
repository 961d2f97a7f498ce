"""Stage 1 of the router: an LLM constrained to the router's answer grammar.

Two backends behind one interface (`LlmBackend`): the in-process GGUF model
(`local.LlmRouter`, the default) and an OpenAI-compatible model server
(`remote.RemoteLlm`, `[llm] backend = "openai"`). `backend.llm_loader` picks one
from the config. Both send the same prompt, are held to the same answer
grammar, parse with the same checks and fail with the same `LlmError` family,
so the cascade falls through to the classifier the same way for either.

    common.py    errors, LlmRoute / LlmReply, bounds, the deadline
    gbnf.py      the answer grammar (GBNF) built from the act allowlist
    schema.py    the same answer as a JSON schema, for servers without GBNF
    answer.py    parsing and checking an answer (one parser for every backend)
    llamacpp.py  llama.cpp plumbing of the in-process model
    cores.py     how many threads the in-process model uses while others hold cores
    local.py     the in-process router
    remote.py    the HTTP backend; transport.py its deadline-bound HTTP
    backend.py   picking a backend from the config; the address policy
"""

from __future__ import annotations

from mavend.router.llm.answer import ParsedAnswer, parse_answer
from mavend.router.llm.common import (
    MAX_CONTEXT_CHARS,
    MAX_UTTERANCE_CHARS,
    Deadline,
    LlmBackend,
    LlmError,
    LlmOutputError,
    LlmReply,
    LlmRoute,
    LlmTimeout,
    PromptTooLong,
    clean_text,
)
from mavend.router.llm.gbnf import (
    FIELD_PHASES,
    FIELDS_AFTER,
    PREFILL,
    Phase,
    act_choice_root,
    build_gbnf,
    gbnf_literal,
    intent_head,
    slot_phases,
    span_words,
    with_root,
)
from mavend.router.llm.llamacpp import CHATML_TEMPLATE, CompiledGrammar
from mavend.router.llm.local import LlmRouter

__all__ = [
    "CHATML_TEMPLATE",
    "FIELDS_AFTER",
    "FIELD_PHASES",
    "MAX_CONTEXT_CHARS",
    "MAX_UTTERANCE_CHARS",
    "PREFILL",
    "CompiledGrammar",
    "Deadline",
    "LlmBackend",
    "LlmError",
    "LlmOutputError",
    "LlmReply",
    "LlmRoute",
    "LlmRouter",
    "LlmTimeout",
    "ParsedAnswer",
    "Phase",
    "PromptTooLong",
    "act_choice_root",
    "build_gbnf",
    "clean_text",
    "gbnf_literal",
    "intent_head",
    "parse_answer",
    "slot_phases",
    "span_words",
    "with_root",
]
