"""The router's settings and where its LLM runs (in process or an OpenAI-compatible server)."""

from __future__ import annotations

from typing import Literal

from pydantic import (
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from mavend import addresses
from mavend.config.base import (
    Positive,
    Probability,
    _settings,
)


@_settings
class RouterSettings:
    wake_words: tuple[str, ...] = ("hey jarvis", "jarvis")
    # A command the grammar misses by one misheard word ("lock the scream") is taken as
    # the grammar command one small edit away, when only one command is (router/snap.py).
    grammar_snap: bool = True
    llm_enabled: bool = True
    llm_model: str = "qwen2.5-0.5b-instruct-q4_k_m"  # a model name, or a path to a .gguf
    llm_threads: int = Field(default=2, ge=1, le=64)
    # Use fewer of llm_threads while other processes keep cores busy (llama.cpp's threads
    # wait on each other at every step; one that lost its core holds the rest up).
    llm_adaptive_threads: bool = True
    # 4096: the fixed prompt of a whole home (27 device acts) is ~2,300 tokens (BENCHMARKS).
    llm_context: int = Field(default=4096, ge=512, le=32768)
    llm_timeout_s: Positive = 3.0
    llm_max_tokens: int = Field(default=96, ge=16, le=1024)
    classifier_model: str = "use-multilingual-int8"
    # A second sentence embedding joined to the first (issue 24): a model name or a folder
    # that `mavend models pull` made, or "" for the first alone. On by default: +2.8 points
    # on dev and +1.3 on our own held-out rows (BENCHMARKS "e5 as a model").
    classifier_e5_model: str = "multilingual-e5-small"
    # Who decides the route: "auto" (the policy measured best for llm_model), "classifier",
    # "llm-first" (the LLM, the classifier when it fails), "vote", "tie-break".
    policy: Literal["auto", "classifier", "llm-first", "vote", "tie-break"] = "auto"
    # Below this routing probability (0-1) the assistant asks instead of guessing.
    clarify_threshold: Probability = 0.35
    # policy "vote": when the classifier's probability is at least this, the LLM is not asked.
    classifier_confident: Probability = 0.9
    # policy "vote": the classifier's share of the vote with the LLM (the rest is the LLM's).
    classifier_weight: Probability = 0.7
    # policy "tie-break": the LLM chooses when the classifier's best two are this close.
    tie_margin: Probability = 0.15


@_settings
class LlmSettings:
    """Where the router's LLM runs. [router] llm_* keep their meaning: llm_enabled turns
    it off, llm_timeout_s is the deadline of a route for either backend, llm_max_tokens
    bounds an answer; llm_model, llm_threads and llm_context are the local model's."""

    # "local": the GGUF in this process; "openai": an OpenAI-compatible server at base_url.
    backend: Literal["local", "openai"] = "local"
    # Send to a base_url outside loopback, private and link-local addresses.
    allow_remote: bool = False
    base_url: str = ""  # "http://192.168.1.20:8080" (with or without /v1)
    model: str = ""  # the server's model name; "" = the server's default
    api_key_file: str = ""  # a file holding the API key, sent as a bearer token
    api_key_env: str = ""  # or the environment variable holding it
    # How the answer is held to the router's grammar: "grammar" (GBNF in the `grammar`
    # field: llama.cpp servers) or "json_schema" (response_format, for other servers).
    constrain: Literal["grammar", "json_schema"] = "grammar"
    # Ask for the intent token's top logprobs: the route's confidence, as the local model
    # reads it from its logits. Off, or a server that sends none: a fixed 0.6 (README).
    logprobs: bool = True
    # With backend = "openai": may what you stored (facts, notes, memory's recalled lines,
    # the corrected examples of a tie-break) be put in the server's prompts? Off (the
    # default): the server sees the utterance and fixed text only, and answers from your
    # own data are phrased here (plain_answer). On: they are sent, sanitised (control
    # characters stripped, bounded by [memory] recall_*, marked as data, not instructions).
    share_personal: bool = False
    # Questions about the world ("who wrote hamlet") answered from the model's own
    # knowledge: "auto" answers them with a server you chose (backend = "openai") or a
    # local model not measured too weak; the shipped 0.5B model got 29 of 60 plain facts
    # right (BENCHMARKS "General knowledge"), so with it mavend says it cannot answer
    # them reliably. "on": always the model's answer; "off": never.
    general_knowledge: Literal["auto", "on", "off"] = "auto"

    @field_validator("base_url")
    @classmethod
    def _own_network(cls, url: str, info: ValidationInfo) -> str:
        if not url:
            return url
        host = addresses.url_host(url)
        if not url.startswith(("http://", "https://")) or not host:
            raise ValueError("must be an http:// or https:// URL with a host")
        if "@" in url.split("://", 1)[1].split("/", 1)[0]:
            raise ValueError("must not carry credentials: use api_key_file or api_key_env")
        addresses.require_own_network(
            host,
            info.data.get("allow_remote", False),  # declared before base_url: already read
            "send the router's prompts and your questions to it",
        )
        return url

    @model_validator(mode="after")
    def _complete(self) -> LlmSettings:
        if self.backend == "openai" and not self.base_url:
            raise ValueError('backend = "openai" needs a base_url')
        if self.api_key_file and self.api_key_env:
            raise ValueError("set api_key_file or api_key_env, not both")
        return self
