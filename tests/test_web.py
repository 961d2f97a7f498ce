"""The household's page (mavend/web/) served by the real daemon: over HTTP from this test,
as a browser would use it. End state read from the SQLite file; live updates read off the
server-sent event stream; `mavend say` run as its own process, through the session bus."""

from __future__ import annotations

import http.client
import json
import queue
import re
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mavend.config import ConfigError, WebSettings, parse_settings
from tests.home_kit import free_port
from tests.state_kit import daemon_serving, kit_router, kit_settings, real_clock

ROOT = Path(__file__).resolve().parents[1]
MAVEND = [sys.executable, "-m", "mavend"]


class Page:
    """A browser's view of the page: its CSRF value, its cookie, its requests."""

    def __init__(self, port: int, source: str = "127.0.0.1") -> None:
        self.port, self.source, self.cookie = port, source, ""
        self.csrf = ""

    def request(self, method: str, path: str, headers: dict[str, str] | None = None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10,
                                          source_address=(self.source, 0))  # fmt: skip
        sent = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
        if self.cookie:
            sent["Cookie"] = self.cookie
        conn.request(method, path, body=b"{}" if method == "POST" else None, headers=sent)
        response = conn.getresponse()
        body = response.read()
        conn.close()
        return response, body

    def open(self) -> str:
        response, body = self.request("GET", "/")
        assert response.status == 200, (response.status, body)
        html = body.decode()
        self.csrf = re.search(r'name="mavend-csrf" content="([^"]+)"', html)[1]
        return html

    def state(self) -> dict:
        response, body = self.request("GET", "/api/state")
        assert response.status == 200, body
        return json.loads(body)

    def post(self, path: str, **headers: str):
        sent = {"X-Mavend-CSRF": self.csrf, "Content-Type": "application/json", **headers}
        response, body = self.request("POST", path, sent)
        return response.status, json.loads(body) if body.startswith(b"{") else body.decode()


def events(port: int) -> tuple[queue.Queue[str], threading.Event]:
    """Event names from /api/events, read by a thread until `stop` is set."""
    names: queue.Queue[str] = queue.Queue()
    stop = threading.Event()

    def read() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/api/events")
        response = conn.getresponse()
        while not stop.is_set():
            line = response.fp.readline()
            if not line:
                return
            if line.startswith(b"event: "):
                names.put(line[7:].strip().decode())
            elif line.startswith(b": connected"):
                names.put("connected")

    threading.Thread(target=read, daemon=True).start()
    return names, stop


@pytest.fixture
def served(tmp_path: Path, session_bus: str) -> Iterator[tuple[Page, Path, Path]]:
    port = free_port()
    settings = kit_settings(tmp_path, web=WebSettings(enabled=True, listen=f"127.0.0.1:{port}"))
    config = tmp_path / "config.toml"  # what `mavend say` reads: the same data directory
    config.write_text(f'[storage]\ndata_dir = "{tmp_path / "data"}"\n')
    with daemon_serving(settings, kit_router(settings, real_clock())):
        yield Page(port), settings.storage.database_path(), config


def say(config: Path, text: str) -> str:
    done = subprocess.run([*MAVEND, "--config", str(config), "say", text], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def status(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT text, status FROM reminders ORDER BY id").fetchall()


def test_a_reminder_said_appears_live_and_is_cancelled_from_the_page(served) -> None:
    page, db, config = served
    html = page.open()
    assert "<script src=\"/static/app.js\">" in html
    names, stop = events(page.port)
    try:
        assert names.get(timeout=10) == "connected"
        say(config, "remind me to call the vet at 5 pm")
        seen = [names.get(timeout=10)]
        assert "turn" in seen
    finally:
        stop.set()
    (reminder,) = page.state()["reminders"]
    assert reminder["text"] == "call the vet" and reminder["status"] == "pending"
    # A write without the page's CSRF value, or from another origin, changes nothing.
    cancel = f"/api/reminders/{reminder['id']}/cancel"
    assert page.post(cancel, **{"X-Mavend-CSRF": "x"})[0] == 403
    other = page.post(f"/api/reminders/{reminder['id']}/cancel", Origin="http://evil.example")
    assert other[0] == 403
    assert status(db) == [("call the vet", "pending")]
    code, body = page.post(f"/api/reminders/{reminder['id']}/cancel")
    assert (code, body["text"]) == (200, "Cancelled the reminder to call the vet.")
    assert status(db) == [("call the vet", "cancelled")]
    assert page.state()["reminders"] == []
    # The cancel is a change like a spoken one: undone from the page, it is back.
    (change, *_) = page.state()["changes"]
    assert change["did"] == ["cancelled the reminder to call the vet"]
    assert change["session"] == "web"
    code, body = page.post(f"/api/changes/{change['turn']}/undo")
    assert code == 200, body
    assert status(db) == [("call the vet", "pending")]
    assert page.post(f"/api/changes/{change['turn']}/undo")[0] == 404  # already undone


def test_notes_and_list_items_are_deleted_from_the_page(served) -> None:
    page, db, config = served
    say(config, "remember that the wifi box is behind the sofa")
    say(config, "add lentils and rice to the shopping list")
    page.open()
    state = page.state()
    (note,) = state["notes"]
    (shopping,) = state["lists"]
    assert [i["text"] for i in shopping["items"]] == ["lentils", "rice"]
    assert page.post(f"/api/notes/{note['id']}/delete")[0] == 200
    rice = shopping["items"][1]["id"]
    assert page.post(f"/api/lists/shopping/items/{rice}/delete")[0] == 200
    assert page.post(f"/api/lists/shopping/items/{rice}/delete")[0] == 404
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM notes").fetchone() == (0,)
        assert conn.execute("SELECT text FROM list_items").fetchall() == [("lentils",)]
    # What was heard, with its decision, is on the page too.
    turns = {t["heard"]: t for t in page.state()["turns"]}
    assert "add lentils and rice to the shopping list" in turns
    noted = turns["remember that the wifi box is behind the sofa"]["decision"]
    assert noted["decided_by"] == "grammar" and noted["stage_ms"]["grammar"] >= 0
    assert "llm" not in noted  # no LLM was asked


@pytest.fixture
def exposed(tmp_path: Path, session_bus: str) -> Iterator[tuple[int, str]]:
    """The page listening beyond loopback, for 127.0.0.1 only (127.0.0.3 is refused)."""
    port = free_port()
    web = WebSettings(enabled=True, listen=f"0.0.0.0:{port}", allow=("127.0.0.1",))
    settings = kit_settings(tmp_path, web=web)
    with daemon_serving(settings, kit_router(settings, real_clock())):
        token = (tmp_path / "data" / "web-token").read_text().strip()
        yield port, token


def test_beyond_loopback_every_request_needs_the_token(exposed) -> None:
    port, token = exposed
    page = Page(port)
    assert page.request("GET", "/")[0].status == 401
    assert page.request("GET", "/api/state")[0].status == 401
    assert page.request("GET", "/?token=wrong")[0].status == 401
    page.cookie = "mavend_token=wrong"
    assert page.request("GET", "/api/state")[0].status == 401
    page.cookie = ""
    login, _ = page.request("GET", f"/?token={token}")
    assert login.status == 303 and login.getheader("Location") == "/"
    page.cookie = login.getheader("Set-Cookie").split(";")[0]
    assert "HttpOnly" in login.getheader("Set-Cookie")
    page.open()
    assert page.state()["reminders"] == []
    bearer = Page(port)
    response, _ = bearer.request("GET", "/api/state", {"Authorization": f"Bearer {token}"})
    assert response.status == 200


def test_a_peer_outside_allow_is_refused_before_anything(exposed) -> None:
    port, token = exposed
    page = Page(port, source="127.0.0.3")
    response, body = page.request("GET", "/api/state", {"Authorization": f"Bearer {token}"})
    assert response.status == 403 and b"Not allowed" in body


def test_mavend_web_token_prints_the_login_link(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'[storage]\ndata_dir = "{tmp_path / "data"}"\n[web]\nenabled = true\n'
        'listen = "0.0.0.0:8765"\nallow = ["192.168.1.0/24"]\n'
    )
    done = subprocess.run([*MAVEND, "--config", str(config), "web", "token"], capture_output=True,
                          text=True, timeout=60, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    token = (tmp_path / "data" / "web-token").read_text().strip()
    assert done.stdout.splitlines()[0] == f"http://0.0.0.0:8765/?token={token}"
    assert (tmp_path / "data" / "web-token").stat().st_mode & 0o777 == 0o600


def test_a_page_beyond_loopback_without_allow_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"web.*listen = '0\.0\.0\.0:8765' reaches beyond"):
        parse_settings('[web]\nenabled = true\nlisten = "0.0.0.0:8765"\n')
    with pytest.raises(ConfigError, match="listen"):
        parse_settings('[web]\nlisten = "localhost"\n')


def test_every_asset_ships_in_the_package() -> None:
    static = ROOT / "mavend" / "data" / "web"
    for path in static.iterdir():
        text = path.read_text()
        assert not re.search(r"https?://", text), f"{path.name} reaches outside the box"
        assert "cdn" not in text.lower()


def test_the_units_open_ip_only_when_the_page_is_on() -> None:
    from mavend.system import unit

    assert unit.page_host(parse_settings("")) == ""
    on = parse_settings("[web]\nenabled = true\n")
    assert unit.page_host(on) == "127.0.0.1"
    command = ("/usr/local/bin/mavend",)
    closed = unit.render_unit(unit.UnitPlan("system", command))
    assert "RestrictAddressFamilies=AF_UNIX\n" in closed
    local = unit.render_unit(unit.UnitPlan("system", command, page="127.0.0.1"))
    assert "AF_INET AF_INET6" in local and "IPAddressAllow=localhost\n" in local
    assert "serves the page on 127.0.0.1" in local
    lan = unit.render_unit(unit.UnitPlan("system", command, page="0.0.0.0"))
    assert "192.168.0.0/16" in lan
    user = unit.render_unit(
        unit.UnitPlan("user", ("/bin/mavend",), data_dirs=(Path("/tmp/d"),), page="127.0.0.1")
    )
    assert "RestrictAddressFamilies=AF_UNIX AF_NETLINK AF_INET AF_INET6" in user


def test_memory_is_shown_and_forgotten_only_for_the_owner(served) -> None:
    from datetime import datetime

    from mavend.config import Settings
    from mavend.memory.records import MemoryTable
    from mavend.state.store import Store

    page, db, _config = served
    owner = Settings().memory.scope
    table = MemoryTable(Store(db))
    now = datetime.now().astimezone()
    for scope, said in ((owner, "kill the lights"), ("guest", "lights off mate")):
        table.add_habit(scope=scope, utterance=said, intent="act", fn="lights_off", args={},
                        confidence=1.0, source="corrected", now=now, keep=100)  # fmt: skip
    table.store.close()
    page.open()
    state = page.state()
    assert state["satellites"] == []
    said = [h["said"] for h in state["memory"]["habits"]]
    assert said == ["kill the lights"]  # another scope's memory is not the page's
    mine = state["memory"]["habits"][0]["id"]
    assert page.post(f"/api/memory/{mine}/forget")[0] == 200
    with sqlite3.connect(db) as conn:
        left = conn.execute("SELECT scope FROM memory ORDER BY id").fetchall()
        guest = conn.execute("SELECT id FROM memory WHERE scope = 'guest'").fetchone()[0]
    assert left == [("guest",)]
    assert page.post(f"/api/memory/{guest}/forget")[0] == 404


def test_a_reminder_is_snoozed_and_edited_and_a_note_edited_from_the_page(served) -> None:
    page, db, config = served
    say(config, "remind me to call the plumber at 5 pm")
    say(config, "remember that the boiler code is 1234")
    page.open()
    (reminder,) = page.state()["reminders"]
    fire = "SELECT text, fire_at FROM reminders"
    with sqlite3.connect(db) as conn:
        (text, before), = conn.execute(fire).fetchall()
    assert page.post(f"/api/reminders/{reminder['id']}/snooze/10")[0] == 200
    with sqlite3.connect(db) as conn:
        (_, snoozed), = conn.execute(fire).fetchall()
    assert snoozed[11:16] == "17:10" and before[11:16] == "17:00"
    code, body = page.post(f"/api/reminders/{reminder['id']}/edit")  # nothing to change
    assert code == 400 and "say what to change" in body["error"]
    edited = json.dumps({"text": "call the electrician", "when": "tomorrow at 9 am"})
    conn = http.client.HTTPConnection("127.0.0.1", page.port, timeout=10)
    conn.request("POST", f"/api/reminders/{reminder['id']}/edit", body=edited,
                 headers={"X-Mavend-CSRF": page.csrf, "Content-Type": "application/json"})
    assert conn.getresponse().status == 200
    with sqlite3.connect(db) as db_conn:
        (text, moved), = db_conn.execute(fire).fetchall()
    assert text == "call the electrician" and moved[11:16] == "09:00"
    # The edit is one change: undone from the page, the words and the time go back.
    change = page.state()["changes"][0]
    assert page.post(f"/api/changes/{change['turn']}/undo")[0] == 200
    with sqlite3.connect(db) as db_conn:
        assert db_conn.execute(fire).fetchall() == [("call the plumber", snoozed)]
    (note,) = page.state()["notes"]
    conn = http.client.HTTPConnection("127.0.0.1", page.port, timeout=10)
    conn.request("POST", f"/api/notes/{note['id']}/edit",
                 body=json.dumps({"text": "the boiler code is 4321"}),
                 headers={"X-Mavend-CSRF": page.csrf, "Content-Type": "application/json"})
    assert conn.getresponse().status == 200
    assert [n["text"] for n in page.state()["notes"]] == ["the boiler code is 4321"]


def test_the_page_runs_the_doctors_checks_without_loading_a_second_llm(served) -> None:
    page, _db, _config = served
    page.open()
    response, body = page.request("GET", "/api/doctor")
    assert response.status == 200
    checks = {c["check"]: c for c in json.loads(body)}
    assert checks["data dir"]["ok"] is True
    # The test's own bus has no notification server: the check says so, with the fix.
    bus = checks["session bus"]
    assert bus["ok"] is False and bus["detail"].startswith("connected, but no notification")
    assert "dunst" in bus["fix"]
    assert checks["llm"] == {"check": "llm", "ok": True, "fix": "",
                             "detail": "not loaded again here: `mavend doctor` checks it"}


def _post_json(page: Page, path: str, body: dict) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", page.port, timeout=10)
    conn.request("POST", path, body=json.dumps(body),
                 headers={"X-Mavend-CSRF": page.csrf, "Content-Type": "application/json"})
    return conn.getresponse().status


def test_a_list_item_and_a_fact_are_edited_and_the_edit_undone(served) -> None:
    page, db, config = served
    say(config, "add oat milk to the shopping list")
    page.open()
    (item,) = page.state()["lists"][0]["items"]
    path = f"/api/lists/shopping/items/{item['id']}/edit"
    assert _post_json(page, path, {"text": "soy milk"}) == 200
    assert _post_json(page, path, {"text": "   "}) == 400
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT text FROM list_items").fetchall() == [("soy milk",)]
    (change, *_) = page.state()["changes"]
    assert page.post(f"/api/changes/{change['turn']}/undo")[0] == 200
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT text FROM list_items").fetchall() == [("oat milk",)]
        conn.execute("INSERT INTO facts (key, value, at, at_ts, utterance) VALUES"
                     " ('weight', '81 kg', '2026-12-03T08:00:00+01:00', 0, 'i weigh 81 kg')")
    (fact,) = page.state()["facts"]
    assert _post_json(page, f"/api/facts/{fact['id']}/edit", {"value": "80 kg"}) == 200
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM facts").fetchall() == [("80 kg",)]
    assert _post_json(page, "/api/facts/99999/edit", {"value": "1"}) == 404


def test_a_page_on_loopback_refuses_another_host_name(served) -> None:
    page, _db, _config = served
    page.open()
    for host in (f"localhost:{page.port}", f"127.0.0.1:{page.port}"):
        assert page.request("GET", "/api/state", {"Host": host})[0].status == 200
    # DNS rebinding: a site whose name resolves to 127.0.0.1 is not this box's page.
    response, body = page.request("GET", "/api/state", {"Host": f"evil.example:{page.port}"})
    assert response.status == 421 and b"127.0.0.1" in body


def test_a_reload_turns_the_page_on_moves_it_and_turns_it_off(tmp_path: Path) -> None:
    import asyncio

    from mavend.daemon.lifecycle import Daemon, DaemonOptions

    config = tmp_path / "config.toml"
    data = tmp_path / "data"
    base = f'[storage]\ndata_dir = "{data}"\n[notifications]\nenabled = false\n'
    config.write_text(base)
    first, second = free_port(), free_port()

    def reachable(port: int) -> int:
        try:
            return Page(port).request("GET", "/api/state")[0].status
        except OSError:
            return 0

    async def scenario() -> list[int]:
        from mavend.config import load_settings

        daemon = Daemon(
            load_settings(config),
            router=kit_router(load_settings(config), real_clock()),
            options=DaemonOptions(stdin_turns=False, notify_replies=False, dbus_api=False,
                                  config_path=config),
        )  # fmt: skip
        await daemon.start()
        seen: list[int] = []
        try:
            seen.append(await asyncio.to_thread(reachable, first))  # off: nothing listens
            config.write_text(base + f'[web]\nenabled = true\nlisten = "127.0.0.1:{first}"\n')
            assert await daemon.reload()
            await asyncio.sleep(0.5)
            seen.append(await asyncio.to_thread(reachable, first))
            config.write_text(base + f'[web]\nenabled = true\nlisten = "127.0.0.1:{second}"\n')
            assert await daemon.reload()
            await asyncio.sleep(0.5)
            seen += [await asyncio.to_thread(reachable, p) for p in (first, second)]
            config.write_text(base)
            assert await daemon.reload()
            await asyncio.sleep(0.5)
            seen.append(await asyncio.to_thread(reachable, second))
        finally:
            await daemon.stop()
        return seen

    assert asyncio.run(scenario()) == [0, 200, 0, 200, 0]
