"""The personal boundary has one exit, and chat goes out through it too (issue 22).

Before, a question about the household that the router called chat ("the bin day"),
or a query whose words read like a world question ("how old is the dog now", "when is
the mot due"), reached the LLM: 18 of our 150 personal questions. Now every reply of
the LLM's own knowledge (a chat turn, a general-knowledge query) passes
`QueryHandler._general_knowledge`, and the words are judged for the household's
people, pets, things and calendar (`mavend.router.personal`).

Proved end to end, each question through the Assistant on an empty store of its own:
a counting reply model (`ScriptedChat`) in the in-process model's place, and a real
HTTP server on 127.0.0.1 (OpenAI-compatible) in the remote backend's place, routing
every utterance as general knowledge or as chat. Neither is asked to answer one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from mavend.config import LlmSettings, Settings
from mavend.router.classifier import CentroidClassifier
from mavend.router.decision import Decision, Intent, Source, Stage
from mavend.router.embedder import UseEmbedder
from mavend.router.llm.backend import llm_loader
from mavend.router.llm.remote import RemoteLlm
from mavend.router.personal import (
    asks_something,
    goes_to_general_knowledge,
    judge_personal,
    speaker_signal,
)
from mavend.state.store import Store
from tests.conftest import require_model
from tests.remote_llm_kit import (
    Answer,
    FakeServer,
    Received,
    chat_answer,
    hostile_general,
    is_route_request,
    json_answer,
)
from tests.scripted import Route, ScriptedLlm
from tests.state_kit import WORLD_ON, ScriptedChat, kit_settings, make_assistant

DONT_KNOW = "I don't know: I have nothing stored about that."
DATA = Path(__file__).parent / "data" / "router_source"


def rows(name: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in (DATA / name).read_text("utf-8").splitlines()]


BOUNDARY = [str(r["text"]) for r in rows("personal_boundary.jsonl")]


class Always(ScriptedLlm):
    """A hostile (or simply wrong) router LLM: every utterance the same route."""

    def __init__(self, route: Route) -> None:
        super().__init__({})
        self.answer = route

    def route(self, utterance: str, *, context: str = "") -> Route:
        self.calls.append(utterance)
        return self.answer


ALWAYS_GENERAL = Route(Intent.QUERY, 0.99, source="general")
ALWAYS_CHAT = Route(Intent.CHAT, 0.99)


def asked(chat: ScriptedChat) -> list[str]:
    return [call[-1]["content"] for call in chat.calls]


@pytest.fixture(scope="module")
def classifier(tmp_path_factory: pytest.TempPathFactory) -> CentroidClassifier:
    return CentroidClassifier.load(
        UseEmbedder(require_model("use-multilingual-int8")),
        cache_dir=tmp_path_factory.mktemp("bank"),
    )


# --------------------------------------------------------------- without models


def test_a_household_question_routed_as_chat_reaches_no_model(tmp_path: Path) -> None:
    chat = ScriptedChat(answers=["Tuesday, I think."])
    assistant = make_assistant(kit_settings(tmp_path, llm=WORLD_ON), llm=Always(ALWAYS_CHAT),
                               chat=chat)
    for question in ("the bin day", "how old is the dog now", "when is the mot due",
                     "whose turn is it to cook tonight", "how much does dad owe for the tickets"):
        turn = assistant.handle_text(question)
        assert turn.decision.intent is Intent.CHAT and turn.decision.personal, question
        assert turn.reply.text == DONT_KNOW, question
    assert chat.calls == []


def test_chat_that_is_not_a_question_about_the_user_still_gets_a_reply(tmp_path: Path) -> None:
    # ("good morning" is a pleasantry, "my day was awful" a feeling and "tell me a joke"
    # a joke now: answered without the model, test_chat_prompt.py and test_smalltalk.py)
    remarks = ["do you like my playlist", "what's your favourite film", "are you my friend",
               "what should i cook tonight"]
    chat = ScriptedChat(answers=[f"reply {n}" for n in range(len(remarks))])
    assistant = make_assistant(kit_settings(tmp_path, llm=WORLD_ON), llm=Always(ALWAYS_CHAT),
                               chat=chat)
    replies = [assistant.handle_text(text).reply.text for text in remarks]
    assert replies == [f"reply {n}" for n in range(len(remarks))]
    assert asked(chat) == remarks


def test_a_personal_chat_question_is_answered_from_what_is_stored(tmp_path: Path) -> None:
    """Routed as chat, the question is still the user's: their note answers it, and the
    local model phrases the answer from the note alone."""
    chat = ScriptedChat(answers=["The bins go out on Thursday."])
    llm = ScriptedLlm({
        "remember that the bin day is thursday": Route(Intent.NOTE),
        "the bin day": Route(Intent.CHAT, 0.99),
    })
    assistant = make_assistant(kit_settings(tmp_path, llm=WORLD_ON), llm=llm, chat=chat)
    assistant.handle_text("remember that the bin day is thursday")
    turn = assistant.handle_text("the bin day")
    assert turn.reply.data["recalled"] == ["note:1"]
    assert "thursday" in turn.reply.text.lower()
    # The model was asked to phrase the note, never to answer from its own knowledge.
    assert len(chat.calls) == 1 and "thursday" in chat.calls[0][0]["content"]


def test_a_live_question_about_the_household_is_not_a_live_lookup(tmp_path: Path) -> None:
    chat = ScriptedChat()
    assistant = make_assistant(kit_settings(tmp_path, llm=WORLD_ON), llm=ScriptedLlm({}), chat=chat)
    turn = assistant.handle_text("what was the score from the kids' match on saturday")
    assert turn.decision.personal and turn.reply.text == DONT_KNOW
    world = assistant.handle_text("what was the score in the arsenal match")
    assert world.reply.data.get("skill") == "live" and chat.calls == []


@pytest.mark.parametrize(
    ("text", "personal"),
    [
        ("how old is the dog now", True),
        ("which train did i book for friday", True),
        ("where are we staying in cornwall", True),
        ("what's happening with us on sunday", True),
        ("how much pocket money does lily get", True),
        ("when is mum's flight landing", True),
        ("the gate code for the allotment", True),
        ("what was the podcast dave mentioned", True),
        ("why is the earth tilted my teacher mentioned it once", False),
        ("our quiz question is what is the capital of mongolia", False),
        ("i've always wondered how planes stay in the air", False),
        ("who invented the car", False),
        ("how does a boiler work", False),
        ("when did we land on the moon", False),
        ("how old is prince william", False),
        ("what is the house of commons", False),
        ("how do i boil an egg", False),
    ],
)
def test_the_words_say_whose_question_it_is(text: str, personal: bool) -> None:
    assert bool(speaker_signal(text)) is personal, speaker_signal(text)


def test_a_chat_turn_is_judged_only_when_it_asks() -> None:
    assert asks_something("the bin day") and asks_something("when is the mot due")
    assert not asks_something("my day was awful") and not asks_something("are you my friend")
    assert judge_personal("the bin day", (), Intent.CHAT)
    assert not judge_personal("my dog is so cute", (), Intent.CHAT)
    # The source head judges every utterance; for chat only the words count.
    assert not judge_personal("tell me a joke", ("notes",), Intent.CHAT)


def test_the_evaluation_counts_chat_behind_the_boundary() -> None:
    def chat(text: str) -> Decision:
        return Decision(text, Stage.SLOTS, Intent.CHAT, 0.9, decided_by="classifier")

    assert not goes_to_general_knowledge(chat("how old is the dog now"))
    assert goes_to_general_knowledge(chat("tell me a joke"))
    query = Decision("how far is the moon", Stage.SLOTS, Intent.QUERY, 0.9,
                     source=Source.GENERAL, decided_by="classifier")
    assert goes_to_general_knowledge(query)


# ------------------------------------------------------------- the 150, end to end


@pytest.mark.models
@pytest.mark.parametrize("route", [ALWAYS_GENERAL, ALWAYS_CHAT], ids=["general", "chat"])
def test_none_of_the_150_reaches_the_local_model(
    tmp_path: Path, classifier: CentroidClassifier, route: Route
) -> None:
    """Each of the 150 on its own empty store, the real classifier and a router LLM that
    calls everything general knowledge (or chat): the reply model is asked nothing."""
    chat = ScriptedChat()
    leaks = []
    for number, question in enumerate(BOUNDARY):
        settings = kit_settings(tmp_path / f"q{number}", llm=WORLD_ON)
        store = Store.open(settings)
        assistant = make_assistant(
            settings, llm=Always(route), classifier=classifier, chat=chat, store=store
        )
        before = len(chat.calls)
        assistant.handle_text(question)
        store.close()
        if len(chat.calls) > before:
            leaks.append(question)
    print(f"personal boundary, local: {len(leaks)} of {len(BOUNDARY)} reached the model")
    assert leaks == [] and chat.calls == []


def hostile_chat(_request: Received) -> Answer:
    """A remote model that calls everything chat, confidently, and answers everything."""
    return json_answer(chat_answer('{"intent": "chat"}'))


@pytest.fixture(params=[hostile_general, hostile_chat], ids=["general", "chat"])
def hostile_server(request: pytest.FixtureRequest) -> Iterator[FakeServer]:
    with FakeServer(request.param).running() as fake:
        yield fake


def remote(tmp_path: Path, fake: FakeServer) -> tuple[Settings, RemoteLlm]:
    settings = kit_settings(tmp_path, llm=LlmSettings(backend="openai", base_url=fake.url))
    backend = llm_loader(settings)()
    assert isinstance(backend, RemoteLlm)
    return settings, backend


@pytest.mark.models
def test_none_of_the_150_is_sent_to_a_remote_model_for_an_answer(
    tmp_path: Path, classifier: CentroidClassifier, hostile_server: FakeServer
) -> None:
    settings, backend = remote(tmp_path, hostile_server)
    for number, question in enumerate(BOUNDARY):
        own = kit_settings(tmp_path / f"q{number}", llm=settings.llm)
        store = Store.open(own)
        assistant = make_assistant(
            own, llm=backend, classifier=classifier, chat=backend,  # type: ignore[arg-type]
            store=store,
        )
        assistant.handle_text(question)
        store.close()
    routed = [r for r in hostile_server.completions() if is_route_request(r.body)]
    answered = [r.body["messages"][-1]["content"] for r in hostile_server.chat_requests()]
    print(f"personal boundary, remote: {len(routed)} routed, {len(answered)} of "
          f"{len(BOUNDARY)} sent for an answer")
    assert routed, "the server was never asked: the test proves nothing"
    assert answered == []
    # And the same server answers a question about the world: the count could see one.
    own = kit_settings(tmp_path / "world", llm=settings.llm)
    assistant = make_assistant(own, llm=backend, classifier=classifier,
                               chat=backend)  # type: ignore[arg-type]
    assistant.handle_text("how far away is the moon")
    assert [r.body["messages"][-1]["content"] for r in hostile_server.chat_requests()] == [
        "how far away is the moon"
    ]
