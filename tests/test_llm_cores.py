"""The in-process LLM on a shared box: fewer threads while others hold cores, the same
decisions either way, and a reply cut off by its deadline keeps its finished sentences."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mavend.config import ActsSettings, RouterSettings
from mavend.router.llm import LlmRouter, LlmTimeout
from mavend.router.llm.common import whole_sentences
from mavend.router.llm.cores import (
    CpuReading,
    ThreadChooser,
    others_busy_cores,
    read_cpu,
    threads_for,
    usable_cores,
)
from tests.tiny_gguf import write_tiny_qwen2_gguf

UTTERANCES = (
    "remind me at noon to stretch",
    "turn off the kitchen light",
    "what's the weather like",
    "i drank two glasses of water",
    "remember the spare key is under the blue pot",
)


# ------------------------------------------------------------------ the arithmetic


@pytest.mark.parametrize(
    ("others", "threads"),
    [(0.0, 2), (0.2, 2), (0.34, 2), (0.4, 1), (1.0, 1), (1.9, 1), (3.0, 1)],
)
def test_one_thread_fewer_for_each_core_others_hold(others: float, threads: int) -> None:
    assert threads_for(2, 2, others) == threads


def test_a_bigger_box_keeps_the_threads_its_free_cores_allow() -> None:
    assert threads_for(4, 8, 1.0) == 4  # seven free cores: all four threads
    assert threads_for(4, 4, 1.0) == 3
    assert threads_for(4, 4, 2.5) == 1
    assert threads_for(1, 2, 0.0) == 1  # never more than configured


def test_others_are_the_box_less_this_process() -> None:
    old = CpuReading(at=10.0, box_busy=100.0, own=5.0)
    new = CpuReading(at=11.0, box_busy=101.8, own=5.7)  # 1.8 s busy, 0.7 of it ours
    assert others_busy_cores(old, new) == pytest.approx(1.1)
    assert others_busy_cores(new, new) == 0.0
    # A process that ended between readings cannot make the share negative.
    assert others_busy_cores(old, CpuReading(11.0, 100.1, 5.5)) == 0.0


def test_the_chooser_follows_what_others_use() -> None:
    clock = {"t": 0.0, "busy": 0.0, "own": 0.0}
    rate = {"others": 0.0}

    def reader() -> CpuReading:
        clock["t"] += 0.25
        clock["busy"] += 0.25 * rate["others"]
        return CpuReading(clock["t"], clock["busy"], clock["own"])

    chooser = ThreadChooser(2, cores=2, reader=reader, background=False)  # readings by hand
    assert chooser.choose() == 2
    rate["others"] = 1.0  # a build starts on one core
    for _ in range(5):
        chooser._sample()
    assert chooser.choose() == 1
    rate["others"] = 0.0
    for _ in range(6):
        chooser._sample()
    assert chooser.choose() == 2


def test_without_proc_or_adaptation_the_configured_count_stands() -> None:
    def unreadable() -> CpuReading:
        raise OSError("no /proc here")

    assert ThreadChooser(2, reader=unreadable).choose() == 2
    assert not ThreadChooser(2, reader=unreadable).adaptive
    assert ThreadChooser(2, adaptive=False).choose() == 2
    assert not ThreadChooser(1).adaptive  # one thread has nothing to give up


def test_proc_is_read_for_real() -> None:
    first = read_cpu()
    spin_until = time.monotonic() + 0.3
    while time.monotonic() < spin_until:  # this process's own work, not others'
        pass
    second = read_cpu()
    assert second.own - first.own >= 0.2
    assert others_busy_cores(first, second) < usable_cores()


def test_a_real_competing_process_takes_a_thread() -> None:
    """A busy process beside us is seen within about a second; our own work is not."""
    cores = usable_cores()
    chooser = ThreadChooser(cores, cores=cores)
    if not chooser.adaptive:
        pytest.fail("this box has one core or no /proc: the adaptation cannot be tested")
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(1.5)
        with_hog = chooser.others_busy()
        assert with_hog >= 0.7, with_hog
        assert chooser.choose() <= cores - 1
    finally:
        hog.kill()
        hog.wait()
    time.sleep(1.5)
    assert chooser.others_busy() <= with_hog - 0.6
    chooser.close()
    assert chooser._thread is not None and not chooser._thread.is_alive()
    assert chooser.choose() == cores


def test_a_closed_router_leaves_no_sampling_thread(tiny_gguf: Path) -> None:
    """A reload builds a new router; the old one's sampler must not live on."""
    import threading

    def samplers() -> int:
        return sum(t.name == "mavend-cpu-share" for t in threading.enumerate())

    before = samplers()
    router = LlmRouter(tiny_gguf, RouterSettings(llm_threads=2, llm_context=8192),
                       ActsSettings())
    assert samplers() == before + 1
    router.close()
    assert samplers() == before


# ------------------------------------------------------------------ the model


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_qwen2_gguf(tmp_path_factory.mktemp("tiny") / "tiny-qwen2.gguf")


def routes_with(gguf: Path, settings: RouterSettings) -> list[tuple[str, float]]:
    router = LlmRouter(gguf, settings, ActsSettings())
    try:
        return [(r.raw, r.confidence) for r in map(router.route, UTTERANCES)]
    finally:
        router.close()


def test_one_thread_or_two_decide_the_same(tiny_gguf: Path) -> None:
    common = {"llm_context": 8192, "llm_max_tokens": 1024, "llm_timeout_s": 30.0}
    two = routes_with(tiny_gguf, RouterSettings(llm_threads=2, llm_adaptive_threads=False,
                                                **common))
    one = routes_with(tiny_gguf, RouterSettings(llm_threads=1, **common))
    assert one == two


@pytest.fixture
def busy_box_router(tiny_gguf: Path) -> Iterator[LlmRouter]:
    settings = RouterSettings(llm_threads=2, llm_context=8192, llm_max_tokens=1024,
                              llm_timeout_s=30.0)
    router = LlmRouter(tiny_gguf, settings, ActsSettings())
    at = {"t": 0.0, "busy": 0.0}

    def one_core_taken() -> CpuReading:
        at["t"] += 0.25
        at["busy"] += 0.25
        return CpuReading(at["t"], at["busy"], 0.0)

    router._threads = ThreadChooser(2, cores=2, reader=one_core_taken, background=False)
    router._threads._sample()
    yield router
    router.close()


def test_the_router_uses_one_thread_while_a_core_is_taken(busy_box_router: LlmRouter) -> None:
    import llama_cpp

    busy_box_router.route("turn off the kitchen light")
    assert busy_box_router.threads_now == 1
    assert llama_cpp.llama_n_threads(busy_box_router._llm.ctx) == 1


# ------------------------------------------------------------------ a reply past its deadline


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("Paris is the capital of France. It has about two", "Paris is the capital of France."),
        ("Bees make honey from nectar! They store it in", "Bees make honey from nectar!"),
        ("It costs 3.5 euros and", ""),
        ("Yes. And then", ""),
        ('He said "go." Then he', 'He said "go."'),
        ("One sentence. Two sentences? Three", "One sentence. Two sentences?"),
    ],
)
def test_a_cut_reply_keeps_its_finished_sentences(text: str, kept: str) -> None:
    assert whole_sentences(text) == kept


def slow_reply(router: LlmRouter, monkeypatch: pytest.MonkeyPatch, written: str) -> None:
    """Every decode step takes 30 ms and the reply so far reads `written`."""
    real_eval = router._llm.eval

    def slow_eval(tokens: list[int]) -> None:
        time.sleep(0.03)
        real_eval(tokens)

    monkeypatch.setattr(router._llm, "eval", slow_eval)
    monkeypatch.setattr(router, "_text", lambda tokens: written if tokens else "")
    # The random tiny model never ends its turn, so every reply runs into the deadline.
    monkeypatch.setattr("llama_cpp.llama_vocab_is_eog", lambda *_: False)


def test_a_reply_cut_by_its_deadline_says_its_finished_sentences(
    tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    router = LlmRouter(tiny_gguf, RouterSettings(llm_threads=1, llm_context=8192,
                                                 llm_timeout_s=30.0), ActsSettings())
    try:
        slow_reply(router, monkeypatch, "The sky looks blue because air scatters blue light."
                   " The sun")
        reply = router.complete_chat([{"role": "user", "content": "why is the sky blue"}],
                                     max_tokens=1000, timeout_s=0.5)
        assert reply.text == "The sky looks blue because air scatters blue light."
        assert reply.truncated
        assert reply.latency_ms < 1000
    finally:
        router.close()


def test_a_reply_cut_before_any_sentence_ended_is_a_timeout(
    tiny_gguf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    router = LlmRouter(tiny_gguf, RouterSettings(llm_threads=1, llm_context=8192,
                                                 llm_timeout_s=30.0), ActsSettings())
    try:
        slow_reply(router, monkeypatch, "The sky looks blue because air")
        with pytest.raises(LlmTimeout):
            router.complete_chat([{"role": "user", "content": "why is the sky blue"}],
                                 max_tokens=1000, timeout_s=0.5)
    finally:
        router.close()
