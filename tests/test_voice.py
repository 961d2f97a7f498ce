"""The daemon's voice plumbing without audio: routing started early from a partial.

The router here is a counting stand-in for the cascade (a seam: what is tested
is when the real router would be called, and with what).
"""

from __future__ import annotations

import threading
import time

from mavend.daemon.voice import PrefetchingRouter


class CountingRouter:
    grammar = "the grammar"

    def __init__(self, delay_s: float = 0.0):
        self.calls: list[tuple[str, str]] = []
        self.delay_s = delay_s
        self.busy = threading.Lock()
        self.overlapped = False

    def route(self, text: str, *, context: str = "") -> str:
        if not self.busy.acquire(blocking=False):
            self.overlapped = True
            self.busy.acquire()
        try:
            time.sleep(self.delay_s)
            self.calls.append((text, context))
            return f"decision for {text!r} with {context!r}"
        finally:
            self.busy.release()


def test_a_prefetched_decision_is_reused_for_the_same_text() -> None:
    inner = CountingRouter(delay_s=0.05)
    router = PrefetchingRouter(inner)
    router.prefetch(" lock the screen ")
    assert router.route("lock the screen") == "decision for 'lock the screen' with ''"
    assert inner.calls == [("lock the screen", "")]
    router.route("lock the screen")  # consumed: a second turn routes again
    assert len(inner.calls) == 2


def test_different_text_or_context_routes_again_and_calls_never_overlap() -> None:
    inner = CountingRouter(delay_s=0.05)
    router = PrefetchingRouter(inner)
    router.prefetch("set a timer for ten")
    assert "fifteen" in router.route("set a timer for fifteen minutes")
    router.prefetch("what is on my list")
    assert "recalled" in router.route("what is on my list", context="recalled")
    assert inner.calls[-1] == ("what is on my list", "recalled")
    assert not inner.overlapped  # the LLM is never shared between threads


def test_the_prefetch_uses_the_context_the_turn_will_use() -> None:
    inner = CountingRouter()
    router = PrefetchingRouter(inner, context_for=lambda _router, text: f"memory of {text}")
    router.prefetch("call mom")
    decision = router.route("call mom", context="memory of call mom")
    assert decision == "decision for 'call mom' with 'memory of call mom'"
    assert inner.calls == [("call mom", "memory of call mom")]


def test_remember_hands_over_a_decision_made_elsewhere_and_the_rest_is_the_router() -> None:
    inner = CountingRouter()
    router = PrefetchingRouter(inner)
    router.remember("next track", "made by mavend listen")
    assert router.route("next track") == "made by mavend listen"
    assert inner.calls == []
    assert router.grammar == "the grammar"
