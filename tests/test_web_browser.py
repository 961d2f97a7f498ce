"""The household's page in a real browser (Debian's Chromium, headless, under Selenium)
against the real daemon: what a person sees and clicks, judged by the database."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as seen
from selenium.webdriver.support.ui import WebDriverWait

from tests.home_kit import free_port
from tests.web_kit import PHONE, Served, chromium, served_page


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


@pytest.fixture
def page(tmp_path: Path, session_bus: str) -> Iterator[Served]:
    with served_page(tmp_path) as served:
        yield served


@pytest.fixture
def browser() -> Iterator:
    driver = chromium()
    try:
        yield driver
    finally:
        driver.quit()


def button(element, label: str):
    """The button labelled `label` inside `element`."""
    return element.find_element(By.XPATH, f".//button[normalize-space()='{label}']")


def wait(driver, seconds: float = 10.0) -> WebDriverWait:
    return WebDriverWait(driver, seconds, poll_frequency=0.1)


def test_a_reminder_said_appears_without_a_reload_and_is_cancelled_by_a_click(page, browser):
    browser.get(page.url)
    wait(browser).until(seen.text_to_be_present_in_element((By.ID, "live"), "live"))
    assert "Nothing set." in browser.find_element(By.ID, "reminders").text
    page.say("remind me to book the boiler service at 4 pm")
    item = wait(browser).until(
        seen.presence_of_element_located((By.CSS_SELECTOR, "#reminders li[data-id]"))
    )
    assert "book the boiler service" in item.text
    assert browser.execute_script("return performance.getEntriesByType('navigation').length") == 1
    button(item, "Cancel").click()
    wait(browser).until(seen.text_to_be_present_in_element((By.ID, "reminders"), "Nothing set."))
    assert rows(page.db, "SELECT text, status FROM reminders") == [
        ("book the boiler service", "cancelled")
    ]
    # The cancel is on the list of changes, and its Undo puts the reminder back.
    change = wait(browser).until(
        seen.presence_of_element_located((By.CSS_SELECTOR, "#changes li[data-turn]"))
    )
    assert "cancelled the reminder to book the boiler service" in change.text
    button(change, "Undo").click()
    wait(browser).until(
        seen.text_to_be_present_in_element((By.ID, "reminders"), "book the boiler service")
    )
    assert rows(page.db, "SELECT status FROM reminders") == [("pending",)]


def test_a_delete_asks_first_and_a_no_keeps_the_note(page, browser):
    page.say("remember that the stopcock is under the kitchen sink")
    browser.get(page.url)
    note = wait(browser).until(
        seen.presence_of_element_located((By.CSS_SELECTOR, "#notes li[data-id]"))
    )
    button(note, "Delete").click()
    asked = wait(browser).until(seen.alert_is_present())
    assert "stopcock" in asked.text
    asked.dismiss()
    assert rows(page.db, "SELECT COUNT(*) FROM notes") == [(1,)]
    button(note, "Delete").click()
    wait(browser).until(seen.alert_is_present()).accept()
    wait(browser).until(seen.text_to_be_present_in_element((By.ID, "notes"), "No notes."))
    assert rows(page.db, "SELECT COUNT(*) FROM notes") == [(0,)]


class _Evil(BaseHTTPRequestHandler):
    """Another site: a form that posts to the page's cancel as soon as it loads."""

    target = ""

    def do_GET(self) -> None:
        body = (f'<form id="f" method="post" action="{self.target}"></form>'
                '<script>document.getElementById("f").submit()</script>').encode()  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:  # quiet
        return


def test_a_cross_site_post_changes_nothing(page, browser):
    page.say("remind me to feed the fish at 6 pm")
    (reminder_id,) = rows(page.db, "SELECT id FROM reminders")[0]
    _Evil.target = f"{page.url}api/reminders/{reminder_id}/cancel"
    evil = ThreadingHTTPServer(("127.0.0.1", free_port()), _Evil)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    try:
        browser.get(f"http://127.0.0.1:{evil.server_address[1]}/")
        wait(browser).until(lambda d: "api/reminders" in d.current_url)
        assert "Refused" in browser.find_element(By.TAG_NAME, "body").text
    finally:
        evil.shutdown()
    assert rows(page.db, "SELECT status FROM reminders") == [("pending",)]


def test_the_page_is_readable_on_a_phone(page, tmp_path):
    page.say("add flour and yeast to the shopping list")
    page.say("set a timer for 25 minutes")
    driver = chromium(PHONE)
    try:
        driver.get(page.url)
        wait(driver).until(seen.text_to_be_present_in_element((By.ID, "lists"), "yeast"))
        inner, width = driver.execute_script(
            "return [window.innerWidth, document.documentElement.scrollWidth]"
        )
        assert inner == PHONE[0]
        assert width <= PHONE[0], "the page scrolls sideways on a phone"
        assert driver.save_screenshot(str(tmp_path / "phone.png"))
        assert (tmp_path / "phone.png").stat().st_size > 10_000
    finally:
        driver.quit()


def test_a_wrong_token_gets_401_in_the_browser(tmp_path: Path, session_bus: str):
    from mavend.config import WebSettings
    from tests.state_kit import daemon_serving, kit_router, kit_settings, real_clock
    from tests.web_kit import free_port as port_for

    port = port_for()
    web = WebSettings(enabled=True, listen=f"0.0.0.0:{port}", allow=("127.0.0.1",))
    settings = kit_settings(tmp_path, web=web)
    with daemon_serving(settings, kit_router(settings, real_clock())):
        token = (tmp_path / "data" / "web-token").read_text().strip()
        driver = chromium()
        try:
            driver.get(f"http://127.0.0.1:{port}/?token=wrong")
            assert "Log in with the link" in driver.find_element(By.TAG_NAME, "body").text
            driver.get(f"http://127.0.0.1:{port}/?token={token}")
            wait(driver).until(seen.text_to_be_present_in_element((By.ID, "live"), "live"))
            assert driver.current_url == f"http://127.0.0.1:{port}/"
        finally:
            driver.quit()


def test_that_was_wrong_on_the_page_changes_the_next_identical_turn(tmp_path, session_bus):
    from selenium.webdriver.support.ui import Select

    said = "my nephew loves dinosaurs"  # this file's own words; the classifier asks
    with served_page(tmp_path, classifier=True) as served:
        first = served.say(said)
        assert rows(served.db, "SELECT COUNT(*) FROM notes") == [(0,)], first
        driver = chromium()
        try:
            driver.get(served.url)
            turn = wait(driver).until(
                seen.presence_of_element_located((By.CSS_SELECTOR, "#turns li[data-id]"))
            )
            assert said in turn.text
            Select(turn.find_element(By.TAG_NAME, "select")).select_by_value("note")
            wait(driver).until(seen.text_to_be_present_in_element((By.ID, "status"), "Learned"))
        finally:
            driver.quit()
        served.say(said)
        assert rows(served.db, "SELECT text FROM notes") == [(said,)]
        with sqlite3.connect(served.db) as conn:
            intents = [r[0] for r in conn.execute("SELECT intent FROM turns ORDER BY id")]
        assert intents[0] != "note" and intents[-1] == "note"
