"""Russian reminders end to end: time phrases ("через десять минут", "во вторник в 9
утра", "без четверти восемь") resolve as their English counterparts do, the reminder
keeps its own words, "не ..." runs nothing, timers and reminders are listed, cancelled
(all of them only after "да") and asked about in Russian, and the reply says plainly
that replies are English-only.

The phrases are our own (not Home Assistant's Russian tests, not bench/data rows)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mavend.assistant import Assistant
from mavend.handlers.reminder_commands_ru import as_english
from mavend.language.script import ENGLISH_ONLY, EnglishOnlyNotice, is_russian
from mavend.language.timeparse import find_time, resolve_time
from mavend.language.timeparse.lexing import _raw_tokens
from mavend.language.timeparse.russian import from_russian
from mavend.router import Router, build_router
from mavend.router.grammar import normalize
from mavend.router.negation import withdrawal
from mavend.router.slots import reminder_task
from mavend.state.store import Store
from tests.conftest import require_model
from tests.state_kit import TZ, MovableClock, kit_settings, local_fire_at, reminder_rows

NOW = datetime(2026, 12, 2, 14, 0, tzinfo=TZ)  # a Wednesday afternoon

# (said, when it resolves to)
PHRASES = [
    ("напомни мне через десять минут позвонить маме", "2026-12-02 14:10"),
    ("через 5 минут", "2026-12-02 14:05"),
    ("через полчаса проверить духовку", "2026-12-02 14:30"),
    ("через полтора часа", "2026-12-02 15:30"),
    ("через два с половиной часа", "2026-12-02 16:30"),
    ("через час выключить плиту", "2026-12-02 15:00"),
    ("через неделю", "2026-12-09 14:00"),
    ("через пару минут", "2026-12-02 14:02"),
    ("через двадцать одну минуту", "2026-12-02 14:21"),
    ("через 3 дня", "2026-12-05 14:00"),
    ("через минуту", "2026-12-02 14:01"),
    ("во вторник в 9 утра", "2026-12-08 09:00"),
    ("в пятницу в 6 вечера забрать посылку", "2026-12-04 18:00"),
    ("в 11 ночи", "2026-12-02 23:00"),
    ("в два часа ночи", "2026-12-03 02:00"),
    ("в 5 утра", "2026-12-03 05:00"),
    ("к пяти вечера", "2026-12-02 17:00"),
    ("в 7 часов 15 минут", "2026-12-02 19:15"),
    ("разбуди меня в семь", "2026-12-03 07:00"),  # an alarm: a morning
    ("поставь будильник на 7 утра", "2026-12-03 07:00"),
    ("поставь будильник на семь тридцать", "2026-12-03 07:30"),
    ("завтра в половине седьмого", "2026-12-03 18:30"),
    ("в полседьмого", "2026-12-02 18:30"),
    ("четверть восьмого", "2026-12-02 19:15"),
    ("десять минут девятого", "2026-12-02 20:10"),
    ("без четверти восемь", "2026-12-02 19:45"),
    ("без пяти девять", "2026-12-02 20:55"),
    ("без десяти минут шесть", "2026-12-02 17:50"),
    ("сегодня в 9 вечера", "2026-12-02 21:00"),
    ("завтра утром в 8", "2026-12-03 08:00"),
    ("послезавтра в 10 утра", "2026-12-04 10:00"),
    ("двадцать пятого декабря", "2026-12-25 09:00"),
    ("25-го декабря в 10", "2026-12-25 10:00"),
    ("пятого числа", "2026-12-05 09:00"),
    ("3 января 2027 года в 10", "2027-01-03 10:00"),
    ("в следующий вторник", "2026-12-08 09:00"),
    ("на следующей неделе в понедельник", "2026-12-07 09:00"),
    ("в эту субботу", "2026-12-05 09:00"),
    ("в полдень", "2026-12-03 12:00"),
    ("в полночь", "2026-12-03 00:00"),
    ("в 3 часа дня", "2026-12-02 15:00"),
    ("в час дня", "2026-12-03 13:00"),
    ("в 7:30", "2026-12-02 19:30"),
    ("про встречу в среду в 15:00", "2026-12-02 15:00"),
]


@pytest.mark.parametrize(("said", "expected"), PHRASES)
def test_russian_time_phrases_resolve(said: str, expected: str) -> None:
    found = find_time(said, NOW)
    assert found is not None, said
    assert found.when.astimezone(TZ).strftime("%Y-%m-%d %H:%M") == expected


def test_the_span_is_the_russian_words() -> None:
    """The span maps back to what was said, so the task keeps everything else."""
    found = find_time("напомни мне через десять минут позвонить маме", NOW)
    assert found is not None and found.phrase == "через десять минут"
    assert found.duration == timedelta(minutes=10)
    timer = resolve_time("на 5 минут", NOW)
    assert timer is not None and timer.kind == "duration"
    assert timer.duration == timedelta(minutes=5)


def test_english_text_is_left_alone() -> None:
    for text in ("remind me in ten minutes", "at 7 on friday", "half seven", "25 to 9"):
        raw = _raw_tokens(text)
        assert from_russian(raw) is raw
    found = find_time("remind me in ten minutes", NOW)
    assert found is not None and found.when == NOW + timedelta(minutes=10)


def test_words_that_are_not_times_stay_none() -> None:
    for text in ("напомни купить молоко", "в магазине купить хлеб", "позвони маме"):
        assert find_time(text, NOW) is None, text
    assert find_time("через " + "9" * 5000 + " минут", NOW) is None  # no crash on it


@pytest.mark.parametrize(
    ("said", "task"),
    [
        ("напомни мне через десять минут позвонить маме", "позвонить маме"),
        ("напомни про встречу в среду в 15:00", "встречу"),
        ("пожалуйста напомни что завтра в 9 утра придёт сантехник", "придёт сантехник"),
        ("поставь напоминание полить цветы в 6 вечера", "полить цветы"),
        ("напомни мне забрать детей из школы в 3 часа дня", "забрать детей из школы"),
        ("можешь напомнить через час проверить духовку", "проверить духовку"),
        ("ну напомни пожалуйста в субботу про вечеринку", "вечеринку"),
        ("не забудь напомнить мне на следующей неделе заплатить за свет", "заплатить за свет"),
        ("эээ напомни мне через минут десять выключить воду", "выключить воду"),
    ],
)
def test_the_russian_lead_and_time_are_cut_from_the_task(said: str, task: str) -> None:
    found = find_time(said, NOW)
    assert found is not None, said
    assert reminder_task(said, found.phrase) == task


def test_a_russian_request_is_told_once_that_replies_are_english() -> None:
    assert is_russian("напомни мне через 10 минут")
    assert not is_russian("remind me to buy кефир")
    notice = EnglishOnlyNotice(every_s=3600)
    assert notice.due("напомни через 10 минут", "kitchen", now=0.0)
    assert not notice.due("поставь таймер на 5 минут", "kitchen", now=60.0)
    assert notice.due("поставь таймер на 5 минут", "study", now=60.0)  # another place
    assert not notice.due("set a timer for 5 minutes", "bedroom", now=60.0)
    assert notice.due("разбуди меня в семь", "kitchen", now=3700.0)  # an hour later


# --- the end state: the real router (grammar and classifier), SQLite -----------------


@pytest.fixture(scope="module")
def router(tmp_path_factory: pytest.TempPathFactory) -> Router:
    settings = kit_settings(tmp_path_factory.mktemp("router"))
    require_model(settings.router.classifier_model)
    return build_router(settings, clock=lambda: NOW, use_llm=False)


@pytest.fixture
def assistant(tmp_path: Path, router: Router) -> Iterator[Assistant]:
    settings = kit_settings(tmp_path)
    store = Store.open(settings)
    yield Assistant(settings, store, router, clock=MovableClock(NOW), tz=TZ)
    store.close()


@pytest.mark.parametrize(
    ("said", "kind", "when", "task"),
    [
        ("напомни мне через десять минут позвонить маме", "reminder", "2026-12-02 14:10",
         "позвонить маме"),
        ("поставь таймер на 5 минут", "timer", "2026-12-02 14:05", None),
        ("разбуди меня завтра в семь", "alarm", "2026-12-03 07:00", None),
        ("напомни в пятницу в 6 вечера забрать посылку", "reminder", "2026-12-04 18:00",
         "забрать посылку"),
    ],
)
def test_a_russian_request_leaves_the_right_row(
    assistant: Assistant, said: str, kind: str, when: str, task: str | None
) -> None:
    turn = assistant.handle_text(said)
    assert turn.reply.outcome == "done", turn.reply.text
    assert turn.reply.text.endswith(ENGLISH_ONLY)
    [row] = reminder_rows(assistant)
    assert (row["kind"], local_fire_at(row)) == (kind, when)
    if task is not None:
        assert row["text"] == task


def test_a_russian_series_and_the_notice_said_once(assistant: Assistant) -> None:
    first = assistant.handle_text("напоминай мне каждый день в 8 утра пить таблетки")
    assert first.reply.outcome == "done", first.reply.text
    [row] = reminder_rows(assistant)
    assert row["rule"] and "FREQ=DAILY" in row["rule"]
    assert (local_fire_at(row), row["text"]) == ("2026-12-03 08:00", "пить таблетки")
    again = assistant.handle_text("поставь таймер на 10 минут")
    assert again.reply.outcome == "done", again.reply.text
    assert ENGLISH_ONLY not in again.reply.text  # told once this session, not every turn
    english = assistant.handle_text("set a timer for 3 minutes")
    assert ENGLISH_ONLY not in english.reply.text


def test_a_russian_series_keeps_its_evening_hour(assistant: Assistant) -> None:
    turn = assistant.handle_text("напоминай по вторникам в 8 вечера поливать кактус")
    assert turn.reply.outcome == "done", turn.reply.text
    [row] = reminder_rows(assistant)
    assert row["rule"] == "FREQ=WEEKLY;BYDAY=TU"
    assert (local_fire_at(row), row["text"]) == ("2026-12-08 20:00", "поливать кактус")


# --- "не ...": the opposite of what was said must never run ------------------------


@pytest.mark.parametrize(
    ("said", "kind"),
    [
        ("не напоминай мне в субботу про стрижку", "negated"),
        ("не ставь будильник на шесть", "negated"),
        ("не надо заводить таймер", "negated"),
        ("ну не буди меня в воскресенье", "negated"),
        ("отмена не напоминай про аптеку", "negated"),
        ("поставь таймер на 3 минуты ой нет не надо", "withdrawn"),
        ("напомни полить фикус в семь забудь", "withdrawn"),
        ("ладно не надо", "withdrawn"),
        ("я передумала", "withdrawn"),
        ("разбуди меня в шесть хотя нет в семь", "repair"),
        ("включи чайник и не включай радио", "mixed"),
    ],
)
def test_russian_negations_and_take_backs(said: str, kind: str) -> None:
    found = withdrawal(normalize(said))
    assert found is not None and found.kind == kind, said
    assert found.what == ""  # not said back in an English sentence


@pytest.mark.parametrize(
    "said",
    [
        "не забудь напомнить мне про отчёт в понедельник",  # a reminder
        "не могли бы вы поставить таймер на десять минут",  # a polite request
        "не подскажешь сколько градусов на улице",  # a question
        "включи режим не беспокоить",  # a mode
        "напомни мне не опаздывать завтра в 8",  # a reminder not to be late
    ],
)
def test_russian_requests_that_only_contain_a_not(said: str) -> None:
    assert withdrawal(normalize(said)) is None


@pytest.mark.parametrize(
    "said",
    [
        "не ставь таймер на 5 минут",
        "не напоминай мне завтра в 9 про встречу",
        "не буди меня завтра в шесть",
        "поставь таймер на 5 минут, хотя нет, не надо",
    ],
)
def test_a_negated_russian_request_leaves_no_row(assistant: Assistant, said: str) -> None:
    turn = assistant.handle_text(said)
    assert reminder_rows(assistant) == []
    assert turn.reply.text.startswith(("OK, I won't do that.", "OK, never mind."))


# --- managing them in Russian -----------------------------------------------------


def test_russian_timers_are_asked_about_listed_and_cancelled(assistant: Assistant) -> None:
    assistant.handle_text("поставь таймер на 10 минут")
    assistant.handle_text("напомни мне про окулиста завтра в 9")
    left = assistant.handle_text("сколько осталось на таймере").reply.text
    assert left == "The timer for 10 minutes has 10 minutes left, until 14:10:00."
    listed = assistant.handle_text("какие у меня напоминания").reply.text
    assert listed.startswith("You have 2 reminders:") and "окулиста at 09:00 tomorrow" in listed
    assert assistant.handle_text("отмени таймер").reply.text == (
        "Cancelled the timer for 10 minutes."
    )
    statuses = {(row["kind"], row["status"]) for row in reminder_rows(assistant)}
    assert statuses == {("timer", "cancelled"), ("reminder", "pending")}
    assert assistant.handle_text("удали напоминание про окулиста").reply.outcome == "done"
    assert {row["status"] for row in reminder_rows(assistant)} == {"cancelled"}


def test_cancelling_all_russian_timers_waits_for_da(assistant: Assistant) -> None:
    for said in ("поставь таймер на 5 минут", "поставь таймер на 7 минут"):
        assistant.handle_text(said)
    asked = assistant.handle_text("отмени все таймеры").reply
    assert asked.outcome == "confirm"
    assert assistant.handle_text("нет").reply.text == "OK, I won't."
    assert {row["status"] for row in reminder_rows(assistant)} == {"pending"}
    assistant.handle_text("отмени все таймеры")
    assert assistant.handle_text("да").reply.text == "Cancelled 2 timers."
    assert {row["status"] for row in reminder_rows(assistant)} == {"cancelled"}


@pytest.mark.parametrize(
    ("said", "english"),
    [
        ("покажи мои будильники", "list my alarms"),
        ("есть ли у меня таймеры", "list my timers"),
        ("выключи будильник", "cancel the alarm"),
        ("убери все напоминания", "cancel all my reminders"),
        ("сбрось таймеры", "cancel all my timers"),
        ("отмени напоминание про полив", "cancel the полив reminder"),
        ("сколько осталось", "how long is left"),
        ("сколько ещё осталось до будильника", "how long is left on the alarm"),
        ("отложи на пять минут", "snooze it for пять минут"),
        ("выключи свет", None),  # no reminder word: the lights, not here
        ("отмени подписку", None),
    ],
)
def test_russian_management_commands_read_as_english(said: str, english: str | None) -> None:
    assert as_english(normalize(said)) == english
