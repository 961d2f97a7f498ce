"""The chat / general-knowledge prompt: who the assistant says it is, and what it cannot know.

Real SQLite, the real router (grammar, scripted LLM stage) and the real handlers; the reply
model is `ScriptedChat`, which records every prompt it is given, except in the one `models`
test, which asks the real pulled Qwen.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mavend.config import ActsSettings, LlmSettings, RouterSettings, Settings, WakeWordSettings
from mavend.handlers.chat import NO_FACTS, ChatHandler, first_sentences, knows_facts
from mavend.handlers.common import HandlerContext
from mavend.handlers.persona import FALLBACK_NAME, Persona, claims_a_maker, wake_name
from mavend.router.decision import Intent
from mavend.state.store import Store
from tests.conftest import require_model
from tests.scripted import Route, ScriptedLlm
from tests.state_kit import TZ, WORLD_ON, MovableClock, ScriptedChat, kit_settings, make_assistant

QWEN = "qwen2.5-0.5b-instruct-q4_k_m"
# A Saturday morning in March, Berlin winter time (UTC+1).
NOW = datetime(2027, 3, 13, 9, 5, tzinfo=TZ)
CHAT_UTTERANCE = "so how's it going with you"
WORLD_QUESTION = "how tall is the eiffel tower"
SCRIPT = {
    CHAT_UTTERANCE: Route(Intent.CHAT, 0.95),
    WORLD_QUESTION: Route(Intent.QUERY, 0.95, source="general"),
}
COMPANIES = re.compile(r"open\s*ai|chat\s*gpt|alibaba|qwen|tongyi|google|microsoft", re.I)


def assistant_with(settings: Settings, chat: ScriptedChat, clock: MovableClock | None = None):
    return make_assistant(
        settings, clock=clock or MovableClock(NOW), llm=ScriptedLlm(SCRIPT), chat=chat
    )


def system_turn(chat: ScriptedChat) -> str:
    (messages,) = chat.calls
    assert [m["role"] for m in messages] == ["system", "user"]
    return messages[0]["content"]


@pytest.mark.parametrize("utterance", [CHAT_UTTERANCE, WORLD_QUESTION])
def test_chat_and_world_questions_carry_the_wake_name_and_the_clock(
    tmp_path: Path, utterance: str
) -> None:
    settings = kit_settings(tmp_path, llm=WORLD_ON,
                            router=RouterSettings(wake_words=("hey nova", "nova")))
    chat = ScriptedChat(answers=["Fine, thanks."])
    turn = assistant_with(settings, chat).handle_text(utterance)
    assert turn.reply.text == "Fine, thanks."
    system = system_turn(chat)
    assert "You are Nova," in system
    assert "Saturday 13 March 2027, 09:05 (9:05 AM), time zone Europe/Berlin" in system
    assert "no internet" in system and "I have no live data for that." in system
    assert "Jarvis" not in system and not COMPANIES.search(system)
    assert chat.calls[0][1]["content"] == utterance


def test_the_clock_in_the_prompt_is_the_moment_of_the_question(tmp_path: Path) -> None:
    settings = kit_settings(tmp_path, llm=WORLD_ON)
    clock = MovableClock(NOW)
    chat = ScriptedChat(answers=["One.", "Two."])
    assistant = assistant_with(settings, chat, clock)
    assistant.handle_text(CHAT_UTTERANCE)
    # A clock in UTC is read in the user's zone, in summer time by then (UTC+2).
    clock.at = datetime(2027, 10, 1, 14, 55, tzinfo=UTC)
    assistant.handle_text(CHAT_UTTERANCE)
    first, second = (call[0]["content"] for call in chat.calls)
    assert "Saturday 13 March 2027, 09:05" in first
    assert "Friday 1 October 2027, 16:55 (4:55 PM), time zone Europe/Berlin" in second


def test_no_personal_data_reaches_the_prompt_though_the_database_holds_some(
    tmp_path: Path,
) -> None:
    settings = kit_settings(tmp_path, llm=WORLD_ON)
    chat = ScriptedChat(answers=["It's about 330 metres."])
    assistant = assistant_with(settings, chat)
    ctx = assistant.ctx
    ctx.facts.add("water", "two glasses", NOW - timedelta(hours=2), utterance="I drank water")
    ctx.notes.add("the spare key is under the blue flower pot", NOW - timedelta(days=1))
    ctx.reminders.add("call the plumber about the boiler", NOW + timedelta(days=1), now=NOW)
    # They are there to leak: a fact, a note and a pending reminder.
    assert ctx.facts.latest("water") is not None and len(ctx.notes.recent()) == 1
    assert len(ctx.reminders.list()) == 1
    turn = assistant.handle_text(WORLD_QUESTION)
    assert turn.reply.text == "It's about 330 metres."
    prompt = " ".join(m["content"] for m in chat.calls[0]).lower()
    for private in ("glasses", "spare key", "flower pot", "plumber", "boiler", "water"):
        assert private not in prompt, private


@pytest.mark.parametrize(
    ("wake_words", "model", "name"),
    [
        (("hey jarvis", "jarvis"), "hey_jarvis", "Jarvis"),
        (("ok nova",), "hey_jarvis", "Nova"),
        (("Hey, Mister Robot!",), "hey_jarvis", "Mister Robot"),
        ((), "hey_mycroft", "Mycroft"),
        ((), "/home/me/wake/hey_computer_v0.2.onnx", "Computer"),
        (("hey",), "", FALLBACK_NAME),
    ],
)
def test_the_wake_name_comes_from_the_wake_word(
    wake_words: tuple[str, ...], model: str, name: str
) -> None:
    settings = Settings(
        router=RouterSettings(wake_words=wake_words), wakeword=WakeWordSettings(model=model)
    )
    assert wake_name(settings) == name


@pytest.mark.parametrize(
    "reply",
    [
        "I am an AI language model created by OpenAI.",
        "I'm Qwen, a large language model created by Alibaba Cloud.",
        "Im ChatGPT, how can I help?",
        "As an AI developed by OpenAI, I can't feel anything.",
        "My creators are at Alibaba. I help with questions.",
        "Yes, I am a Google assistant.",
        "I was trained by Anthropic.",
    ],
)
def test_a_reply_that_claims_a_maker_is_replaced_by_the_assistants_own_line(
    tmp_path: Path, reply: str
) -> None:
    settings = kit_settings(tmp_path, llm=WORLD_ON)
    turn = assistant_with(settings, ScriptedChat(answers=[reply])).handle_text(CHAT_UTTERANCE)
    assert turn.reply.text == "I'm Jarvis, a voice assistant running privately on this computer."
    assert claims_a_maker(reply)


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("who makes chatgpt", "ChatGPT is made by OpenAI."),
        ("who makes chatgpt", "I believe OpenAI makes ChatGPT."),
        ("what's the capital of france", "Paris is the capital of France."),
        ("tell me about llamas", "Llamas are South American camelids."),
        ("who are you", "I'm Jarvis, and I run on this computer."),
    ],
)
def test_a_reply_about_the_world_or_in_its_own_name_is_kept(question: str, reply: str) -> None:
    persona = Persona("Jarvis")
    assert persona.checked_reply(reply, question) == reply


def test_a_maker_claim_is_replaced_even_when_asked_whether_it_is_that_model() -> None:
    persona = Persona("Jarvis")
    assert persona.checked_reply("Yes, I am ChatGPT.", "are you chatgpt") == persona.own_line


@pytest.mark.models
def test_the_real_model_says_its_own_name_and_no_company(tmp_path: Path) -> None:
    from mavend.router.llm import LlmRouter

    path = require_model(QWEN)
    settings = kit_settings(tmp_path, llm=WORLD_ON,
                            router=RouterSettings(wake_words=("hey nova", "nova")))
    # Correctness, not speed: a generous deadline keeps a busy box from failing the test.
    llm = LlmRouter(path, RouterSettings(llm_timeout_s=120.0), ActsSettings())
    store = Store.open(settings)
    ctx = HandlerContext(
        settings=settings, store=store, tz=TZ, clock=MovableClock(NOW), chat_llm=lambda: llm
    )
    # "who are you" itself is answered without a model (Persona.identity_answer); the
    # prompt is what the model sees for every other question, so the model is asked
    # with it directly here.
    handler = ChatHandler(ctx)
    try:
        said = llm.complete_chat(handler.messages("who are you"), max_tokens=48, timeout_s=120)
    finally:
        llm.close()
        store.close()
    text = str(getattr(said, "text", said))
    print(text)
    assert "Nova" in text, text
    assert not COMPANIES.search(text), text


@pytest.mark.parametrize(
    ("question", "no"),
    [("who are you", False), ("are you chatgpt", True), ("who made you?", False),
     ("what's your name", False), ("are you siri", True), ("were you made by openai", True),
     # the model said "I don't know that about you." (the line for the user's own life)
     ("how old are you", False), ("so where do you live", False)],
)
def test_questions_about_itself_are_answered_without_a_model(
    tmp_path: Path, question: str, no: bool
) -> None:
    settings = kit_settings(tmp_path, llm=WORLD_ON)
    chat = ScriptedChat(answers=["Yes, I am ChatGPT, made by OpenAI."])
    store = Store.open(settings)
    ctx = HandlerContext(
        settings=settings, store=store, tz=TZ, clock=MovableClock(NOW), chat_llm=lambda: chat
    )
    try:
        reply = ChatHandler(ctx).answer(question)
    finally:
        store.close()
    assert chat.calls == []
    assert "Jarvis" in reply.text and not COMPANIES.search(reply.text)
    assert reply.text.startswith("No.") is no


@pytest.mark.parametrize(
    "question", ["who is the president", "what are you doing", "who made chatgpt"]
)
def test_other_questions_still_reach_the_model(question: str) -> None:
    assert Persona("Jarvis").identity_answer(question) is None


@pytest.mark.parametrize(
    ("said", "reply"),
    [("thank you", "You're welcome."), ("thanks nova", "You're welcome."),
     ("good night", "Good night."), ("ok cheers", "You're welcome."),
     ("thanks that's all", "You're welcome."),
     # the model said "I'm Jarvis, running on this computer."
     ("how are you", "I'm fine, thanks for asking. What can I do for you?"),
     ("hi nova how are you doing today", "I'm fine, thanks for asking. What can I do for you?")],
)
def test_a_pleasantry_gets_its_reply_without_the_model(tmp_path: Path, said: str,
                                                       reply: str) -> None:
    """The 0.5B model answered "good night" with "How can I assist you today?"."""
    settings = kit_settings(tmp_path, llm=WORLD_ON,
                            router=RouterSettings(wake_words=("hey nova", "nova")))
    chat = ScriptedChat(answers=["Good night! How can I assist you today?"])
    a = make_assistant(settings, clock=MovableClock(NOW),
                       llm=ScriptedLlm({said: Route(Intent.CHAT, 0.95)}), chat=chat)
    assert a.handle_text(said).reply.text == reply
    assert chat.calls == []


def _answered(tmp_path: Path, question: str, chat: ScriptedChat, **sections: object):
    settings = kit_settings(tmp_path, **sections)
    store = Store.open(settings)
    ctx = HandlerContext(settings=settings, store=store, tz=TZ, clock=MovableClock(NOW),
                         chat_llm=lambda: chat)
    try:
        return ChatHandler(ctx).answer(question)
    finally:
        store.close()


@pytest.mark.parametrize(
    "question",
    ["how do i boil an egg", "how do you make pancakes", "how long should i boil an egg",
     "what's the best way to clean a cast iron pan", "recipe for banana bread",
     "so how can i unblock a sink"],
)
def test_the_small_local_model_is_not_asked_for_steps(tmp_path: Path, question: str) -> None:
    """The 0.5B model began "how do i boil an egg" with "Preheat the oven to 350°F"."""
    chat = ScriptedChat(answers=["1. Preheat the oven to 350°F."])
    reply = _answered(tmp_path, question, chat)
    assert chat.calls == [] and "Preheat" not in reply.text
    assert reply.text.startswith("I can't give you reliable step-by-step instructions")


@pytest.mark.parametrize(
    "question", ["how do you say thank you in french", "how do you spell rhythm",
                 "who wrote hamlet", "how do i feel about this"])
def test_other_questions_still_go_to_the_model(tmp_path: Path, question: str) -> None:
    chat = ScriptedChat(answers=["An answer."])
    reply = _answered(tmp_path, question, chat)
    assert len(chat.calls) == 1 and reply.text == "An answer."


def test_a_server_the_owner_chose_is_asked_for_steps(tmp_path: Path) -> None:
    chat = ScriptedChat(answers=["Boil it for eight minutes."])
    server = LlmSettings(backend="openai", base_url="http://127.0.0.1:8080")
    reply = _answered(tmp_path, "how do i boil an egg", chat, llm=server)
    assert len(chat.calls) == 1 and reply.text == "Boil it for eight minutes."


# General knowledge from the shipped 0.5B model: 29 of 60 plain facts right (BENCHMARKS).
@pytest.mark.parametrize(
    ("llm", "said"),
    [
        (LlmSettings(), False),  # auto, the shipped local model: not said
        (LlmSettings(general_knowledge="on"), True),
        (LlmSettings(general_knowledge="off", backend="openai",
                     base_url="http://127.0.0.1:9"), False),
        (LlmSettings(backend="openai", base_url="http://127.0.0.1:9"), True),  # auto, a server
    ],
)
def test_the_models_own_facts_are_said_only_where_they_measured_good_enough(
    tmp_path: Path, llm: LlmSettings, said: bool
) -> None:
    chat = ScriptedChat(answers=["A spider has four legs.", "Cats are good company."])
    settings = kit_settings(tmp_path, llm=llm)
    store = Store.open(settings)
    ctx = HandlerContext(settings=settings, store=store, tz=TZ, clock=MovableClock(NOW),
                         chat_llm=lambda: chat)
    try:
        handler = ChatHandler(ctx)
        fact = handler.answer("how many legs does a spider have", factual=True)
        talk = handler.answer("what do you think about cats")
    finally:
        store.close()
    if said:
        assert fact.text == "A spider has four legs."
    else:
        assert fact.text == NO_FACTS and fact.data == {"general_knowledge": False}
    # talk is the model's either way: only facts about the world are held back
    assert talk.text == ("Cats are good company." if said else "A spider has four legs.")
    assert len(chat.calls) == (2 if said else 1)


def test_a_local_model_the_owner_picked_is_not_held_back(tmp_path: Path) -> None:
    picked = kit_settings(tmp_path, router=RouterSettings(llm_model="/models/qwen3-8b.gguf"))
    shipped = kit_settings(tmp_path, router=RouterSettings(
        llm_model="/somewhere/Qwen2.5-0.5B-Instruct-Q4_K_M.gguf"))
    assert knows_facts(picked) and not knows_facts(shipped)


def test_a_long_reply_is_cut_to_its_first_two_sentences(tmp_path: Path) -> None:
    """The 0.5B model, asked for one or two sentences, wrote five about cats."""
    chat = ScriptedChat(answers=["Cats are independent. They sleep a lot. They purr. The end."])
    settings = kit_settings(tmp_path)
    store = Store.open(settings)
    ctx = HandlerContext(settings=settings, store=store, tz=TZ, clock=MovableClock(NOW),
                         chat_llm=lambda: chat)
    try:
        reply = ChatHandler(ctx).answer("what do you think about cats")
    finally:
        store.close()
    assert reply.text == "Cats are independent. They sleep a lot."
    assert reply.data["truncated"] is True
    assert first_sentences("It was written by J.R.R. Tolkien. He was born in 1892.", 1) == (
        "It was written by J.R.R. Tolkien.", True)
