"""The personal boundary: a question about the user is answered from their own data,
or not at all; it reaches general knowledge only when a grammar anchored that.

General knowledge is one seam in the handlers (`QueryHandler._general_knowledge`, and
the chat reply): the local LLM's own knowledge, or a remote backend (`[llm] backend =
"openai"`, issue 16). The `ScriptedChat` here stands in that seam and records every
question that reaches it, whichever backend would answer; the boundary is decided before
it. The last tests put the real remote backend in both places, against a server that
plays a hostile remote model and logs every request it gets.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mavend.config import LlmSettings, Settings
from mavend.router.classifier import CentroidClassifier
from mavend.router.decision import Intent, Source
from mavend.router.embedder import UseEmbedder
from mavend.router.llm.backend import llm_loader
from mavend.router.llm.remote import RemoteLlm
from mavend.router.personal import goes_to_general_knowledge
from mavend.state.store import Store
from tests.conftest import require_model
from tests.remote_llm_kit import FakeServer, hostile_general, is_route_request
from tests.scripted import Route, ScriptedLlm
from tests.state_kit import (
    WORLD_ON,
    ScriptedChat,
    kit_router,
    kit_settings,
    make_assistant,
    real_clock,
)

DONT_KNOW = "I don't know: I have nothing stored about that."
BOUNDARY_FILE = Path(__file__).parent / "data" / "router_source" / "personal_boundary.jsonl"


class AlwaysGeneral(ScriptedLlm):
    """A hostile (or simply wrong) LLM: every utterance is a general-knowledge query."""

    def __init__(self) -> None:
        super().__init__({})

    def route(self, utterance: str, *, context: str = "") -> Route:
        self.calls.append(utterance)
        return Route(Intent.QUERY, 0.99, source="general")


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return kit_settings(tmp_path, llm=WORLD_ON)


def asked(chat: ScriptedChat) -> list[str]:
    return [call[-1]["content"] for call in chat.calls]


def test_a_models_general_does_not_send_a_question_about_the_user_out(settings) -> None:
    chat = ScriptedChat()
    assistant = make_assistant(settings, llm=AlwaysGeneral(), chat=chat)
    for question in ("what's my locker code", "where did we leave our passports"):
        reply = assistant.handle_text(question).reply
        assert reply.text == DONT_KNOW, question
    assert asked(chat) == []


def test_the_users_own_data_answers_whatever_the_model_said(settings) -> None:
    chat = ScriptedChat()
    assistant = make_assistant(settings, llm=ScriptedLlm({
        "remember that my locker code is 4417": Route(Intent.NOTE),
        "what's my locker code": Route(Intent.QUERY, 0.99, source="general"),
    }), chat=chat)
    assistant.handle_text("remember that my locker code is 4417")
    reply = assistant.handle_text("what's my locker code").reply
    # Answered from the note (the local model may phrase it, grounded on the note: that
    # is not general knowledge, and the note is what it is shown).
    assert "4417" in reply.text and reply.data["recalled"] == ["note:1"]


def test_only_a_grammar_anchor_opens_general_knowledge_to_a_personal_question(
    settings,
) -> None:
    chat = ScriptedChat(answers=["Usually 2 to 2.5 bar."])
    assistant = make_assistant(settings, llm=ScriptedLlm({}), chat=chat)
    turn = assistant.handle_text("search the web for my bike's tyre pressure")
    assert turn.decision.source_anchored and turn.decision.personal
    assert turn.reply.text == "Usually 2 to 2.5 bar."
    assert asked(chat) == ["my bike's tyre pressure"]
    # A live fact is another matter (issue 21): opening hours need a live source, which
    # mavend does not have, so the anchor reaches no model and the reply says so.
    turn = assistant.handle_text("search the web for my dentist's opening hours")
    assert turn.reply.text == "I don't have a source for opening hours."
    assert asked(chat) == ["my bike's tyre pressure"]


def test_a_question_about_the_world_still_gets_an_answer(settings) -> None:
    chat = ScriptedChat(answers=["About 384,000 km."])
    question = "how far away is the moon"
    llm = ScriptedLlm({question: Route(Intent.QUERY, 0.95, source="general")})
    assistant = make_assistant(settings, llm=llm, chat=chat)
    turn = assistant.handle_text(question)
    assert not turn.decision.personal and turn.decision.source == Source.GENERAL
    assert turn.reply.text == "About 384,000 km." and asked(chat) == [question]


@pytest.mark.parametrize("source", ["facts", "notes"])
def test_a_personal_source_with_nothing_stored_is_i_dont_know(settings, source: str) -> None:
    chat = ScriptedChat()
    question = "when was the boiler last serviced"
    llm = ScriptedLlm({question: Route(Intent.QUERY, 0.95, source=source)})
    assistant = make_assistant(settings, llm=llm, chat=chat)
    assert assistant.handle_text(question).reply.text == DONT_KNOW
    assert asked(chat) == []


@pytest.mark.models
def test_personal_questions_phrased_every_way_stay_home(settings, tmp_path: Path) -> None:
    """150 personal questions of our own, most with no "my" or "our" in them, through
    the real classifier. A model that calls everything general clears no question the
    classifier judged personal, and few questions reach general knowledge at all."""
    questions = [
        json.loads(line)["text"] for line in BOUNDARY_FILE.read_text("utf-8").splitlines()
    ]
    assert len(questions) >= 150
    classifier = CentroidClassifier.load(
        UseEmbedder(require_model("use-multilingual-int8")), cache_dir=tmp_path
    )
    alone = kit_router(settings, real_clock(), classifier=classifier)
    hostile = kit_router(settings, real_clock(), llm=AlwaysGeneral(), classifier=classifier)
    decisions = {q: (alone.route(q), hostile.route(q)) for q in questions}
    cleared = [q for q, (a, h) in decisions.items() if a.personal and not h.personal]
    assert cleared == [], "a model's 'general' cleared the personal judgment"
    leaks_alone = {q for q, (a, _) in decisions.items() if goes_to_general_knowledge(a)}
    leaks_hostile = {q for q, (_, h) in decisions.items() if goes_to_general_knowledge(h)}
    print(f"personal boundary: {len(leaks_alone)} of {len(questions)} reach general "
          f"knowledge (classifier), {len(leaks_hostile)} with an LLM that says general")
    # Measured 18 and 19 of 150 (GENERAL_MARGIN 0.04, USE int8): the one more is a
    # question the classifier declined and the LLM's vote made a query that nobody
    # judged personal. More than 15 % is a regression.
    assert len(leaks_alone) <= 0.15 * len(questions), sorted(leaks_alone)
    assert len(leaks_hostile) <= 0.15 * len(questions), sorted(leaks_hostile)

    # And end to end, each question on its own empty store (a question the router
    # stores as a note would otherwise ground a later one): the handlers send none of
    # the caught ones to the seam.
    chat = ScriptedChat()
    for number, question in enumerate(questions):
        own = kit_settings(tmp_path / f"q{number}", llm=WORLD_ON)
        assistant = make_assistant(
            own, llm=AlwaysGeneral(), classifier=classifier, chat=chat, store=Store.open(own)
        )
        assistant.handle_text(question)
    assert set(asked(chat)) <= leaks_hostile


# ------------------------------------------------- with a remote backend (issue 16)
#
# `[llm] backend = "openai"` against a server that plays a hostile remote model: it
# routes every utterance as a confident general-knowledge query, and it answers every
# reply request. The boundary is decided before the way out, so no personal question
# is sent there to be answered; the server's request log shows what went out.


@pytest.fixture
def hostile_server() -> Iterator[FakeServer]:
    with FakeServer(hostile_general).running() as fake:
        yield fake


def remote_settings(tmp_path: Path, fake: FakeServer) -> tuple[Settings, RemoteLlm]:
    settings = kit_settings(tmp_path, llm=LlmSettings(backend="openai", base_url=fake.url))
    remote = llm_loader(settings)()
    assert isinstance(remote, RemoteLlm)
    return settings, remote


def replies_asked(fake: FakeServer) -> list[str]:
    """The questions the server was asked to answer (not to route)."""
    return [r.body["messages"][-1]["content"] for r in fake.chat_requests()]


def test_a_hostile_remote_model_is_asked_to_route_but_never_to_answer_about_the_user(
    tmp_path: Path, hostile_server: FakeServer
) -> None:
    settings, remote = remote_settings(tmp_path, hostile_server)
    assistant = make_assistant(settings, llm=remote, chat=remote)  # type: ignore[arg-type]
    personal = ("what's my locker code", "where did we leave our passports",
                "when is my next dentist appointment")
    for question in personal:
        turn = assistant.handle_text(question)
        assert turn.decision.decided_by == "llm" and turn.decision.source == Source.GENERAL
        assert turn.decision.personal and turn.reply.text == DONT_KNOW, question
    routed = [r for r in hostile_server.completions() if is_route_request(r.body)]
    assert len(routed) == len(personal) and replies_asked(hostile_server) == []
    # A grammar anchor opens the way, for the anchored words only; a question about
    # the world goes out too (so the count above could have seen one).
    anchored = assistant.handle_text("search the web for my bike's tyre pressure")
    assert anchored.decision.source_anchored and anchored.decision.personal
    assistant.handle_text("how far away is the moon")
    assert replies_asked(hostile_server) == ["my bike's tyre pressure",
                                             "how far away is the moon"]


@pytest.mark.models
def test_personal_questions_stay_home_with_a_hostile_remote_backend(
    tmp_path: Path, hostile_server: FakeServer
) -> None:
    """The 150 questions again, the remote backend in the LLM's place: it clears no
    personal judgment, and the server is asked to answer none of the questions the
    router judged personal."""
    questions = [
        json.loads(line)["text"] for line in BOUNDARY_FILE.read_text("utf-8").splitlines()
    ]
    classifier = CentroidClassifier.load(
        UseEmbedder(require_model("use-multilingual-int8")), cache_dir=tmp_path
    )
    settings, remote = remote_settings(tmp_path, hostile_server)
    alone = kit_router(settings, real_clock(), classifier=classifier)
    far = kit_router(settings, real_clock(), llm=remote, classifier=classifier)
    decisions = {q: (alone.route(q), far.route(q)) for q in questions}
    assert any(is_route_request(r.body) for r in hostile_server.completions())
    cleared = [q for q, (a, h) in decisions.items() if a.personal and not h.personal]
    assert cleared == [], "a remote model's 'general' cleared the personal judgment"
    leaks = {q for q, (_, h) in decisions.items() if goes_to_general_knowledge(h)}
    assert len(leaks) <= 0.15 * len(questions), sorted(leaks)
    assert not any(decisions[q][1].personal and not decisions[q][1].source_anchored
                   for q in leaks)

    for number, question in enumerate(questions):
        own = kit_settings(tmp_path / f"q{number}", llm=settings.llm)
        assistant = make_assistant(
            own, llm=remote, classifier=classifier, chat=remote,  # type: ignore[arg-type]
            store=Store.open(own),
        )
        assistant.handle_text(question)
    asked = replies_asked(hostile_server)
    print(f"personal boundary, remote backend: {len(leaks)} of {len(questions)} would reach "
          f"general knowledge; the server was asked to answer {len(asked)}")
    assert set(asked) <= leaks
    assert not any(decisions[q][1].personal for q in asked)
