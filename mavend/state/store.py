"""The state database: one SQLite file (WAL) shared by the daemon and the CLI.

Tables: facts (key, value, time), notes (text, embedding, time), turns (the log
of utterance, decision, outcome), act_runs (what an act did and how it failed),
reminders and their firings (see `mavend.scheduler`), and a small session table
(a pending confirmation, the listening flag). The classes that read and write the
assistant's records are in `mavend.state.records`; this module is the file itself: its
connections, transactions, migrations and errors.

Each thread gets its own connection (sqlite3 connections must not be shared
between threads mid-transaction). Writes run in `BEGIN IMMEDIATE` transactions,
so two processes (`mavend say` and the daemon) never interleave a
read-modify-write. SQLite errors become `StorageError`s whose message names the
file and says what to do; nothing here fails silently.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from mavend.config import Settings
from mavend.errors import StorageCorruptError, StorageError, StorageLockedError

log = logging.getLogger("mavend.store")  # the name its journal lines have always had

# How long a writer waits for another process's transaction before giving up.
# Transactions here last milliseconds; seconds of waiting means something is stuck.
DEFAULT_TIMEOUT_S = 5.0
# Per-connection SQLite page cache, in KiB (a negative cache_size is KiB).
PAGE_CACHE_KIB = 1024

# Each migration is a list of statements, applied once, in order, in one
# transaction; `PRAGMA user_version` records how many have been applied.
# Never edit a released migration: append a new one.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE facts (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            at TEXT NOT NULL,           -- ISO 8601 in the user's time zone
            at_ts REAL NOT NULL,        -- the same instant, Unix seconds (for ranges)
            utterance TEXT NOT NULL DEFAULT '',
            embedding BLOB,             -- float32, filled in when an embedder is at hand
            embedder TEXT NOT NULL DEFAULT ''
        )""",
        "CREATE INDEX facts_key_at ON facts (key, at_ts)",
        """CREATE TABLE notes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            text TEXT NOT NULL,
            at TEXT NOT NULL,
            at_ts REAL NOT NULL,
            embedding BLOB,
            embedder TEXT NOT NULL DEFAULT ''
        )""",
        """CREATE TABLE turns (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,
            at_ts REAL NOT NULL,
            utterance TEXT NOT NULL,
            intent TEXT NOT NULL DEFAULT '',
            decision TEXT,              -- Decision.to_json(), as JSON
            reply TEXT NOT NULL DEFAULT '',
            outcome TEXT NOT NULL,
            error_class TEXT NOT NULL DEFAULT '',
            duration_ms REAL NOT NULL DEFAULT 0
        )""",
        """CREATE TABLE act_runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at TEXT NOT NULL,
            at_ts REAL NOT NULL,
            name TEXT NOT NULL,
            argv TEXT NOT NULL,         -- JSON list
            exit_code INTEGER,
            error_class TEXT NOT NULL DEFAULT '',
            stdout TEXT NOT NULL DEFAULT '',
            stderr TEXT NOT NULL DEFAULT '',
            duration_ms REAL NOT NULL DEFAULT 0
        )""",
        """CREATE TABLE reminders (
            id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: job ids derive from it
            text TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'reminder',
            fire_at TEXT NOT NULL,      -- absolute, ISO 8601 in the user's zone; never a phrase
            fire_ts REAL NOT NULL,
            tz TEXT NOT NULL,
            created_at TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'fired', 'done', 'cancelled', 'missed')),
            snoozes INTEGER NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX reminders_status ON reminders (status, fire_ts)",
        # One row per firing. The key (reminder, due time) is what makes a double
        # fire impossible: a second attempt to fire the same due time conflicts.
        """CREATE TABLE firings (
            reminder_id INTEGER NOT NULL REFERENCES reminders (id),
            due TEXT NOT NULL,
            fired_at TEXT NOT NULL,
            late INTEGER NOT NULL DEFAULT 0,
            delivered_at TEXT,
            notification_id INTEGER,
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (reminder_id, due)
        )""",
        "CREATE INDEX firings_undelivered ON firings (delivered_at)",
        """CREATE TABLE session (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL,        -- JSON
            expires_ts REAL             -- NULL: until replaced
        )""",
    ),
    # 2: memory (mavend.memory): phrasing habits and repairs. Only rows whose
    # `marker` the memory module wrote are ever read back into routing.
    (
        """CREATE TABLE memory (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,         -- habit | repair (anything else is ignored)
            name TEXT NOT NULL,         -- habit::<intent>, repair::<signature key>
            scope TEXT NOT NULL,        -- whose it is: the owner's, a guest's, private
            utterance TEXT NOT NULL DEFAULT '',
            intent TEXT NOT NULL DEFAULT '',
            fn TEXT NOT NULL DEFAULT '',
            args TEXT NOT NULL DEFAULT '{}',  -- JSON object
            confidence REAL NOT NULL DEFAULT 0,
            source TEXT NOT NULL DEFAULT '',  -- routed | confirmed | corrected
            marker TEXT,                -- JSON, the writer's structured marker
            successes INTEGER NOT NULL DEFAULT 0,
            failures INTEGER NOT NULL DEFAULT 0,
            at TEXT NOT NULL,
            at_ts REAL NOT NULL,
            updated_ts REAL NOT NULL
        )""",
        "CREATE INDEX memory_kind_scope ON memory (kind, scope, at_ts)",
        "CREATE INDEX memory_name ON memory (name)",
    ),
    # 3: APScheduler's SQLAlchemy job store is gone (the reminders table is the
    # truth and is rebuilt into in-memory jobs at start); its table goes too.
    ("DROP TABLE IF EXISTS apscheduler_jobs",),
    # 4: where a reminder was set from: a Wyoming satellite's name, announced there when
    # it fires (mavend/wyoming/satellite.py); NULL: this box (its speaker, if any).
    ("ALTER TABLE reminders ADD COLUMN origin TEXT",),
    # 5: reminders as people use them (mavend/recurrence/, mavend/scheduler/). A series is
    # one row: `fire_at` is its next occurrence, `rule` the RFC 5545 RRULE (UNTIL/COUNT
    # included, no DTSTART) and `rule_start` the series' first occurrence; NULL rule: once.
    # A kitchen timer may have a `name` ("pasta"); a paused one keeps status 'pending' with
    # `paused_left` seconds and no job (ReminderBook.pending() leaves it out).
    (
        "ALTER TABLE reminders ADD COLUMN rule TEXT",
        "ALTER TABLE reminders ADD COLUMN rule_start TEXT",
        "ALTER TABLE reminders ADD COLUMN name TEXT",
        "ALTER TABLE reminders ADD COLUMN paused_left REAL",
    ),
    # 6: lists (mavend/lists/): shopping, to-do and any other the user names. An item
    # taken off is deleted; ticked off is `done` (read back apart, cleared with the list).
    (
        """CREATE TABLE lists (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            name TEXT NOT NULL UNIQUE,  -- normalized: "shopping", "to-do", "hardware store"
            created_at TEXT NOT NULL
        )""",
        """CREATE TABLE list_items (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            list_id INTEGER NOT NULL REFERENCES lists (id) ON DELETE CASCADE,
            text TEXT NOT NULL,         -- as said, tidied ("oat milk")
            key TEXT NOT NULL,          -- normalized, for matching and de-duplication
            done INTEGER NOT NULL DEFAULT 0,
            added_at TEXT NOT NULL,
            done_at TEXT
        )""",
        "CREATE INDEX list_items_list ON list_items (list_id, done)",
    ),
    # 7: recall searches every note and fact (mavend/search/): FTS5 word indexes over the
    # rows themselves (external content: the text is stored once, in notes/facts), kept
    # by triggers, so no insert, edit or delete (forget included) can leave them behind;
    # the existing rows are indexed here. The embedder index finds rows whose stored
    # vector is another model's (re-embedded in the background) and counts current ones.
    (
        "CREATE VIRTUAL TABLE notes_fts USING fts5(text, content='notes', content_rowid='id',"
        " tokenize='porter unicode61 remove_diacritics 2')",
        """CREATE TRIGGER notes_fts_insert AFTER INSERT ON notes BEGIN
            INSERT INTO notes_fts (rowid, text) VALUES (new.id, new.text);
        END""",
        """CREATE TRIGGER notes_fts_delete AFTER DELETE ON notes BEGIN
            INSERT INTO notes_fts (notes_fts, rowid, text) VALUES ('delete', old.id, old.text);
        END""",
        """CREATE TRIGGER notes_fts_update AFTER UPDATE OF text ON notes BEGIN
            INSERT INTO notes_fts (notes_fts, rowid, text) VALUES ('delete', old.id, old.text);
            INSERT INTO notes_fts (rowid, text) VALUES (new.id, new.text);
        END""",
        "INSERT INTO notes_fts (rowid, text) SELECT id, text FROM notes",
        "CREATE VIRTUAL TABLE facts_fts USING fts5(key, value, utterance, content='facts',"
        " content_rowid='id', tokenize='porter unicode61 remove_diacritics 2')",
        """CREATE TRIGGER facts_fts_insert AFTER INSERT ON facts BEGIN
            INSERT INTO facts_fts (rowid, key, value, utterance)
                VALUES (new.id, new.key, new.value, new.utterance);
        END""",
        """CREATE TRIGGER facts_fts_delete AFTER DELETE ON facts BEGIN
            INSERT INTO facts_fts (facts_fts, rowid, key, value, utterance)
                VALUES ('delete', old.id, old.key, old.value, old.utterance);
        END""",
        """CREATE TRIGGER facts_fts_update AFTER UPDATE OF key, value, utterance ON facts BEGIN
            INSERT INTO facts_fts (facts_fts, rowid, key, value, utterance)
                VALUES ('delete', old.id, old.key, old.value, old.utterance);
            INSERT INTO facts_fts (rowid, key, value, utterance)
                VALUES (new.id, new.key, new.value, new.utterance);
        END""",
        "INSERT INTO facts_fts (rowid, key, value, utterance)"
        " SELECT id, key, value, utterance FROM facts",
        "CREATE INDEX notes_embedder ON notes (embedder)",
        "CREATE INDEX facts_embedder ON facts (embedder)",
    ),
    # 8: what each turn changed and how to take it back (mavend/undo/). One row per
    # change; a turn's changes share `turn`, numbered per database. `undo_of` is the turn
    # a row's turn took back (so "undo that" after an undo is a redo).
    (
        """CREATE TABLE changes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            turn INTEGER NOT NULL,
            session TEXT NOT NULL,
            at TEXT NOT NULL,
            at_ts REAL NOT NULL,
            said TEXT NOT NULL DEFAULT '',
            kind TEXT NOT NULL,
            summary TEXT NOT NULL,
            ref TEXT NOT NULL DEFAULT '{}',   -- JSON: what the inverse needs
            undoable INTEGER NOT NULL DEFAULT 1,
            undone_at TEXT,                   -- set when taken back
            undo_of INTEGER                   -- the turn this row's turn took back
        )""",
        "CREATE INDEX changes_session_turn ON changes (session, turn)",
    ),
    # 9: the household's enrolled voices (mavend/voices/): one voiceprint per name, the
    # normed mean of its enrollment embeddings (float32 bytes), and which encoder made it.
    (
        """CREATE TABLE voices (
            name TEXT PRIMARY KEY,
            vector BLOB NOT NULL,
            encoder TEXT NOT NULL,
            utterances INTEGER NOT NULL,
            seconds REAL NOT NULL,
            enrolled_at TEXT NOT NULL
        )""",
    ),
    # 10: who said it (mavend/voices/, [voices] enabled): the enrolled voice a fact or a
    # note is kept for and a turn was heard from; '' = nobody in particular (typed, the
    # voice unknown, or [voices] off): a household row, as every row before this.
    (
        "ALTER TABLE facts ADD COLUMN speaker TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE notes ADD COLUMN speaker TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE turns ADD COLUMN speaker TEXT NOT NULL DEFAULT ''",
    ),
    # 11: an act mavend runs itself at a time (mavend.scheduler.ScheduledAct): "lock the
    # screen in ten minutes", the unmute after "mute for an hour". A reminder row of kind
    # 'act' whose `act` is {"fn", "args", "room"} (JSON); NULL for every other row. Its
    # firing's `act_result`: NULL not started, '' started (a crash then: never run twice),
    # else the sentence that says how it went.
    (
        "ALTER TABLE reminders ADD COLUMN act TEXT",
        "ALTER TABLE firings ADD COLUMN act_result TEXT",
    ),
    # 12: occurrences of a series taken out one by one ("turn off my alarm on friday",
    # "... for the weekend" said midweek): RFC 5545 EXDATEs, ISO 8601 in the user's zone,
    # space-separated; NULL: none.
    ("ALTER TABLE reminders ADD COLUMN rule_skips TEXT",),
)


def schema_version() -> int:
    return len(MIGRATIONS)


class Store:
    """The database file, its migrations and one connection per thread."""

    def __init__(self, path: Path, *, timeout_s: float = DEFAULT_TIMEOUT_S):
        self.path = Path(path)
        self.timeout_s = timeout_s
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(
                f"cannot create the data directory {self.path.parent}: {exc}"
            ) from exc
        self._check_writable()
        self._migrate()

    def _check_writable(self) -> None:
        # SQLite's own error here is "unable to open database file": say which and why.
        folder = self.path.parent
        if os.access(folder, os.W_OK) and (
            not self.path.exists() or os.access(self.path, os.W_OK)
        ):
            return
        where = folder if not os.access(folder, os.W_OK) else self.path
        raise StorageError(
            f"{where} is read-only: mavend keeps its reminders, notes and facts in "
            f"{self.path} and must be able to write there. Make it writable, or point "
            "[storage] data_dir (or MAVEND_DATA_DIR) at a writable folder."
        )

    @classmethod
    def open(cls, settings: Settings, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> Store:
        return cls(settings.storage.database_path(), timeout_s=timeout_s)

    # connections ---------------------------------------------------------
    def connection(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            with self.translate():
                conn = self._connect()
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: no implicit transactions; `write()` opens them.
        conn = sqlite3.connect(
            self.path, timeout=self.timeout_s, isolation_level=None, check_same_thread=False
        )
        try:
            conn.row_factory = sqlite3.Row
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                log.warning(
                    "%s: SQLite kept journal mode %r (WAL unsupported here)", self.path, mode
                )
            # FULL: a committed firing survives a power cut, not just a crash.
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
            # Each thread's connection keeps its own page cache, 2 MiB by default,
            # filled as the file grows: with ~9 connections that was a slow climb
            # in the long soak (issue 22). The hot pages of a turn fit in 1 MiB;
            # the rest comes from the OS page cache.
            conn.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KIB}")
        except BaseException:
            conn.close()
            raise
        return conn

    @contextmanager
    def translate(self, doing: str = "") -> Iterator[None]:
        """Turn sqlite3 errors into StorageErrors that say what happened and what to do."""
        try:
            yield
        except sqlite3.Error as exc:
            raise storage_error(self.path, exc, doing) from exc

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        conn = self.connection()
        with self.translate():
            yield conn

    @contextmanager
    def write(self, doing: str = "") -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: committed when the block ends, rolled back on any
        failure, the COMMIT's own included (a full disk fails there). Either way the
        connection is left outside any transaction, so the thread's next write starts
        clean: one failed write never poisons the ones after it."""
        conn = self.connection()
        with self.translate(doing):
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                self._roll_back(conn)
                raise

    def _roll_back(self, conn: sqlite3.Connection) -> None:
        """ROLLBACK if a transaction is still open (SQLite ends some itself: a full disk,
        an I/O error). A ROLLBACK that fails too leaves no half-open transaction behind:
        the connection is dropped, and the thread's next use opens a new one."""
        if not conn.in_transaction:
            return
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error as exc:
            log.error("%s: ROLLBACK failed (%s); the connection is reopened", self.path, exc)
        if conn.in_transaction:
            self._drop(conn)

    def _drop(self, conn: sqlite3.Connection) -> None:
        with self._lock:
            if conn in self._connections:
                self._connections.remove(conn)
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None
        try:
            conn.close()
        except sqlite3.Error:
            log.debug("closing a broken connection failed", exc_info=True)

    def data_version(self) -> int:
        """Changes whenever another connection commits (PRAGMA data_version)."""
        with self.read() as conn:
            return int(conn.execute("PRAGMA data_version").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            try:
                conn.close()
            except sqlite3.Error:  # closing is best effort
                log.debug("closing a connection failed", exc_info=True)
        self._local = threading.local()

    # migrations ----------------------------------------------------------
    def _migrate(self) -> None:
        # Read first: an up-to-date file (every start but the first) needs no write lock.
        with self.read() as conn:
            if int(conn.execute("PRAGMA user_version").fetchone()[0]) == len(MIGRATIONS):
                return
        with self.write("upgrading the database schema") as conn:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if version > len(MIGRATIONS):
                raise StorageError(
                    f"{self.path} has schema version {version}, newer than this mavend "
                    f"understands ({len(MIGRATIONS)}): upgrade mavend, or point "
                    "[storage] database at another file"
                )
            for number in range(version + 1, len(MIGRATIONS) + 1):
                for statement in MIGRATIONS[number - 1]:
                    conn.execute(statement)
                # PRAGMA takes no parameters; `number` is an int from range().
                conn.execute(f"PRAGMA user_version = {number}")
                log.info("%s: schema migrated to version %d", self.path, number)

    def version(self) -> int:
        with self.read() as conn:
            return int(conn.execute("PRAGMA user_version").fetchone()[0])


class StorageFullError(StorageError):
    """The disk (or the file system's quota) holding the database is full. Nothing of the
    failed write was kept; the next write, once there is room, succeeds."""

    reason = "the disk is full"


def _disk_full(exc: sqlite3.Error) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code == sqlite3.SQLITE_FULL:
        return True
    text = str(exc).lower()
    return "database or disk is full" in text or "no space left" in text


def storage_error(path: Path, exc: sqlite3.Error, doing: str = "") -> StorageError:
    text = str(exc)
    lowered = text.lower()
    what = f" while {doing}" if doing else ""
    if _disk_full(exc):
        return StorageFullError(
            f"the disk holding the database {path} is full{what} ({text}); nothing was "
            "saved: free some space there and say it again"
        )
    if "locked" in lowered or "busy" in lowered:
        return StorageLockedError(
            f"the database {path} is locked by another process{what} ({text}); nothing was "
            "saved: try again, and check that no other program holds it open"
        )
    if isinstance(exc, sqlite3.DatabaseError) and (
        "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered
    ):
        return StorageCorruptError(
            f"the database {path} is damaged ({text}){what}; nothing was saved. Move the file "
            "aside (mavend starts a new one) or restore it from a backup"
        )
    return StorageError(f"the database {path} failed{what}: {text}")


# rows ----------------------------------------------------------------------
def iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text)
