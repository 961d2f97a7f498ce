"""Answers that are worked out reach the user through the whole turn, never a model.

The deciders are hostile: a scripted LLM answers every question with a confident guess,
and its chat seam would say the wrong thing; the turn must give the computed fact and
never ask the model.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from mavend.router.decision import Intent
from tests.scripted import Route, ScriptedLlm
from tests.state_kit import TZ, MovableClock, ScriptedChat, kit_settings, make_assistant

NOW = datetime(2026, 12, 2, 15, 30, tzinfo=TZ)  # a Wednesday


def _assistant(tmp_path: Path, questions: list[str]):
    guess = Route(Intent.CHAT, 0.99)
    llm = ScriptedLlm({q: guess for q in questions})
    chat = ScriptedChat(answers=["It's 10:30 AM and sunny."] * len(questions))
    return make_assistant(kit_settings(tmp_path), clock=MovableClock(NOW), llm=llm, chat=chat), chat


@pytest.mark.parametrize(
    ("question", "fact"),
    [
        ("what's 17 times 23", "391"),
        ("hey jarvis what is fifteen percent of eighty", "12"),
        ("convert 10 miles to kilometres", "16.09"),
        ("how many days until christmas", "23 days"),
        ("what day of the week is the 25th of december", "Friday"),
        ("what time is it in tokyo", f"{NOW.astimezone(ZoneInfo('Asia/Tokyo')):%H:%M}"),
        # the 0.5B model, asked, listed the date and the time zone as "words to spell"
        ("spell necessary", "Necessary: N, E, C, E, S, S, A, R, Y."),
        ("how do you spell rhythm", "R, H, Y, T, H, M"),
        # the clock answered "what's the date next friday" with today's date
        ("what's the date next friday", "Next Friday is 11 December 2026."),
        # the resolver reads ahead: "yesterday" got the clock, "last friday" the next one
        ("what day was yesterday", "Yesterday was Tuesday, 1 December 2026."),
        ("what was the date last friday", "Last Friday was 27 November 2026."),
        ("what day was it the day before yesterday", "was Monday, 30 November 2026."),
        # the clock moved by a span: "I have no live data for that", and the first set a
        # reminder "to what's"
        ("what's 15 minutes from now", "In 15 minutes it will be 15:45."),
        ("what time will it be in 9 hours", "In 9 hours it will be 00:30 tomorrow."),
        ("what time is it going to be in an hour and a half",
         "In an hour and a half it will be 17:00."),
        ("what time was it 2 hours ago", "2 hours ago it was 13:30."),
        # the 0.5B model said 2027 "is divisible by 4 but not by 100"
        ("is 2027 a leap year", "No, 2027 won't be a leap year."),
        ("was 2000 a leap year", "Yes, 2000 was a leap year."),
        ("when is the next leap year", "The next leap year is 2028."),
        # worked out, not the model's: primes, rounding, days in a month (units said
        # "365.25 days in a year")
        ("is 91 a prime number", "No, 91 is not prime: 7 times 13."),
        ("is 97 prime", "Yes, 97 is a prime number."),
        ("round 2.675 to two decimal places", "2.675 rounded is 2.68."),
        ("round 1234 to the nearest hundred", "1234 rounded is 1200."),
        ("how many days are in february", "February 2027 has 28 days (29 in a leap year)."),
        ("how many days in a year", "A year has 365 days, or 366 in a leap year."),
        # the model said "20% off 45 pounds is $9"
        ("what's 20 percent off 45 pounds", "That's 36 pounds."),
        # an age from a birth date said in the question (the model: "I don't know")
        ("how old am i if i was born in 1985", "Someone born in 1985 is 40 or 41"),
        ("how old is someone born on the 3rd of march 1985", "Someone born 3 March 1985 is 41."),
        ("if i was born on 4 july 1990 how old will i be in 2030",
         "Someone born 4 July 1990 turns 40 on 4 July 2030."),
        ("how old would you be if you were born in 2030", "Someone born in 2030 isn't born yet."),
        # the clock said the time to these
        ("what week of the year is it", "It's week 49 of 2026."),
        ("what day of the year is it", "Today is day 336 of 365 in 2026."),
        ("how many days are left in the year", "There are 29 days left in 2026 after today."),
        ("how many weeks left in the year", "There are 4 weeks and 1 day left in 2026"),
        ("what quarter are we in", "It's the fourth quarter of 2026."),
        # "I don't know a place called Two Weeks" / "London When It's 9 Am Here"
        ("what's the date in two weeks", "In 2 weeks it will be Wednesday, 16 December 2026."),
        ("what is the time in three hours", "In 3 hours it will be 18:30."),
        ("what time will it be in london when it's 9 am here",
         "When it's 09:00 here, it's 08:00 in London, 1 hour behind you."),
        ("if it's 6 pm here what time is it in tokyo",
         "When it's 18:00 here, it's 02:00 the next day in Tokyo, 8 hours ahead of you."),
        # the clock said the time; the model said "Yes, Christmas is a weekend"
        ("how many hours until midnight", "8 hours and 30 minutes until 00:00 tomorrow."),
        ("how long till 6 pm", "2 hours and 30 minutes until 18:00."),
        ("is christmas on a weekend", "No: Christmas is on a Friday, 25 December 2026."),
        # the model said 12
        ("how many days between christmas and new year",
         "There are 7 days between Christmas (25 December 2026) and New Year's Day "
         "(1 January 2027)."),
        ("how many days between the 1st of march and the 15th of april",
         "There are 45 days between 1 March 2027 and 15 April 2027."),
        # the model said "$120"; money is said to the penny
        ("how much is 3 pounds 50 times 4", "3.50 times 4 is 14 pounds."),
        ("what is a 15 percent tip on 42 dollars", "That's 6.30 dollars."),
    ],
)
def test_a_computed_answer_is_the_reply(tmp_path: Path, question: str, fact: str) -> None:
    a, chat = _assistant(tmp_path, [question])
    turn = a.handle_text(question)
    assert turn.decision.decided_by.startswith("answers:"), turn.decision
    assert fact in turn.reply.text and turn.reply.outcome == "done", turn.reply.text
    assert chat.calls == []


@pytest.mark.parametrize(
    "question",
    ["what's the weather", "will it rain tomorrow", "what's the score of the game",
     "how much is bitcoin worth", "what's in the news today",
     "how far is it to london",  # and "approximately 1,500 kilometers"
     "who is the president of the united states", "who's the prime minister"],
)
def test_a_live_fact_without_a_source_is_said_plainly(tmp_path: Path, question: str) -> None:
    a, chat = _assistant(tmp_path, [question])
    turn = a.handle_text(question)
    assert "don't have a" in turn.reply.text and "source" in turn.reply.text, turn.reply.text
    assert not turn.reply.data["available"] and chat.calls == []


def test_a_question_routed_to_chat_by_a_model_is_still_computed(tmp_path: Path) -> None:
    """No recognizer at stage 0 (a router built without it): the handler still computes."""
    question = "what's 12 divided by 4"
    a, chat = _assistant(tmp_path, [question])
    a.router.answers = None
    turn = a.handle_text(question)
    assert turn.decision.intent is Intent.CHAT and turn.decision.decided_by == "llm"
    assert "3" in turn.reply.text and chat.calls == []


@pytest.mark.parametrize("question", ["spell my name", "how do you spell your name"])
def test_a_word_of_the_users_is_not_spelled_from_the_question(
    tmp_path: Path, question: str
) -> None:
    a, _chat = _assistant(tmp_path, [question])
    turn = a.handle_text(question)
    assert not turn.decision.decided_by.startswith("answers:"), turn.decision
    assert "Y, O, U, R" not in turn.reply.text and "M, Y" not in turn.reply.text
