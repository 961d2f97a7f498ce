"""The lists and their items in SQLite (migration 6): each call is one transaction.

A multi-item add is one transaction: it adds all or (on any error) none. An item taken off
is deleted; one ticked off keeps its row with `done` = 1 and is read back apart.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo

from mavend.lists.items import Item, clean_text, core_of, item_problem, make_item, make_key
from mavend.lists.names import DEFAULT_LIST, spoken_name
from mavend.state.store import Store, iso

# Bounds that keep a runaway loop (or a misheard paragraph, repeated) from growing the file
# without end; far above what a household keeps.
MAX_ITEMS_PER_LIST = 500
MAX_LISTS = 50


@dataclass(frozen=True)
class ListItem:
    id: int
    text: str
    key: str
    done: bool
    added_at: str

    @property
    def core(self) -> str:
        return core_of(self.key)


@dataclass(frozen=True)
class ListSummary:
    name: str
    open: int
    done: int


@dataclass(frozen=True)
class AddResult:
    """What an add did: `added` new rows, `reopened` ticked ones put back, `already` there,
    `updated` ones said again with a new quantity (the row's text replaced)."""

    added: tuple[ListItem, ...] = ()
    reopened: tuple[ListItem, ...] = ()
    already: tuple[ListItem, ...] = ()
    updated: tuple[ListItem, ...] = ()

    @property
    def touched(self) -> tuple[ListItem, ...]:
        return self.added + self.reopened + self.updated + self.already


class ListBook:
    def __init__(self, store: Store, tz: tzinfo, *, clock: Callable[[], datetime] | None = None):
        self.store = store
        self.tz = tz
        self.clock = clock or (lambda: datetime.now(tz))

    def _now(self) -> str:
        return iso(self.clock().astimezone(self.tz))

    # reading -------------------------------------------------------------
    def lists(self) -> list[ListSummary]:
        with self.store.read() as conn:
            rows = conn.execute(
                "SELECT l.name, COALESCE(SUM(i.done = 0), 0) AS open,"
                " COALESCE(SUM(i.done = 1), 0) AS done"
                " FROM lists l LEFT JOIN list_items i ON i.list_id = l.id"
                " GROUP BY l.id ORDER BY l.id"
            ).fetchall()
        return [ListSummary(r["name"], int(r["open"]), int(r["done"])) for r in rows]

    def exists(self, name: str) -> bool:
        with self.store.read() as conn:
            return _list_id(conn, name) is not None

    def resolve(self, name: str) -> str:
        """The list an unnamed "my list" means: the only one, else DEFAULT_LIST."""
        if name:
            return name
        names = [s.name for s in self.lists()]
        return names[0] if len(names) == 1 else DEFAULT_LIST

    def items(self, name: str) -> list[ListItem] | None:
        """The list's items in the order added (open and ticked), or None: no such list."""
        with self.store.read() as conn:
            list_id = _list_id(conn, name)
            if list_id is None:
                return None
            return _items(conn, list_id)

    def holding(self, key: str, core: str) -> list[str]:
        """The lists with an item of this key or core (for an unnamed "tick off eggs")."""
        with self.store.read() as conn:
            rows = conn.execute(
                "SELECT DISTINCT l.name, i.key FROM list_items i JOIN lists l ON l.id = i.list_id"
                " ORDER BY l.id"
            ).fetchall()
        names: list[str] = []
        for row in rows:
            if (row["key"] == key or core_of(row["key"]) == core) and row["name"] not in names:
                names.append(row["name"])
        return names

    # writing -------------------------------------------------------------
    def create(self, name: str) -> bool:
        """Make an empty list; False when it already exists."""
        with self.store.write("making a list") as conn:
            if _list_id(conn, name) is not None:
                return False
            _new_list(conn, name, self._now())
            return True

    def add(self, name: str, texts: Sequence[str]) -> AddResult:
        """Add the items, all in one transaction (the list is made by its first add). An
        item already open is not added twice; one ticked off is put back. Bad items
        (ListInputError) or a bound hit (ListLimitError) write nothing, not even the list."""
        cleaned = [t for t in (clean_text(t) for t in texts) if t]
        problem = item_problem(cleaned)
        if problem:
            raise ListInputError(problem)
        items = [make_item(t) for t in cleaned]
        now = self._now()
        with self.store.write("adding to a list") as conn:
            list_id = _list_id(conn, name)
            existing = _items(conn, list_id) if list_id is not None else []
            known = {i.key for i in existing}
            fresh = {i.key for i in items} - known
            if len(existing) + len(fresh) > MAX_ITEMS_PER_LIST:
                raise ListLimitError(
                    f"Your {spoken_name(name)} is full ({MAX_ITEMS_PER_LIST} items); nothing "
                    "was added. Take some off or clear it first."
                )
            if list_id is None:
                list_id = _new_list(conn, name, now)
            return _add_items(conn, list_id, existing, items, now)

    def rename_item(self, name: str, item_id: int, text: str) -> ListItem | None:
        """New words for an item (the page's edit); None when it is not on the list."""
        text = clean_text(text)
        if not text:
            raise ListInputError("an item needs some words")
        with self.store.write("changing a list item") as conn:
            list_id = _list_id(conn, name)
            if list_id is None or not conn.execute(
                "UPDATE list_items SET text = ?, key = ? WHERE id = ? AND list_id = ?",
                (text, make_key(text), item_id, list_id),
            ).rowcount:
                return None
        return next((i for i in self.items(name) or [] if i.id == item_id), None)

    def remove(self, name: str, ids: Iterable[int]) -> list[int]:
        """Delete the items; the ids that were there (and are now gone)."""
        with self.store.write("taking items off a list") as conn:
            return _delete(conn, name, ids)

    def tick(self, name: str, ids: Iterable[int], *, done: bool = True) -> list[int]:
        """Tick the items off (or, `done=False`, back on); the ids that changed."""
        with self.store.write("ticking items off a list") as conn:
            list_id = _list_id(conn, name)
            if list_id is None:
                return []
            changed: list[int] = []
            done_at = self._now() if done else None
            for item_id in ids:
                if conn.execute(
                    "UPDATE list_items SET done = ?, done_at = ?"
                    " WHERE id = ? AND list_id = ? AND done = ?",
                    (int(done), done_at, int(item_id), list_id, int(not done)),
                ).rowcount:
                    changed.append(int(item_id))
            return changed

    def drop(self, name: str) -> bool:
        """Delete the list and its items; False when there is no such list."""
        with self.store.write("deleting a list") as conn:
            list_id = _list_id(conn, name)
            if list_id is None:
                return False
            conn.execute("DELETE FROM list_items WHERE list_id = ?", (list_id,))
            conn.execute("DELETE FROM lists WHERE id = ?", (list_id,))
            return True

    def clear(self, name: str, ids: Iterable[int]) -> list[int]:
        """Delete these items (the ones there when the clear was asked), nothing else."""
        with self.store.write("clearing a list") as conn:
            return _delete(conn, name, ids)


class ListLimitError(Exception):
    """A bound (MAX_LISTS, MAX_ITEMS_PER_LIST) stops the write; its message is the
    sentence to say. Nothing was written."""


class ListInputError(ValueError):
    """The items cannot be added as given (none, too many, too long): the sentence to
    say. Nothing was written."""


def _list_id(conn: sqlite3.Connection, name: str) -> int | None:
    row = conn.execute("SELECT id FROM lists WHERE name = ?", (name,)).fetchone()
    return None if row is None else int(row["id"])


def _new_list(conn: sqlite3.Connection, name: str, now: str) -> int:
    if int(conn.execute("SELECT COUNT(*) FROM lists").fetchone()[0]) >= MAX_LISTS:
        raise ListLimitError(
            f"You have {MAX_LISTS} lists already, the most I keep; nothing was added."
        )
    cursor = conn.execute("INSERT INTO lists (name, created_at) VALUES (?, ?)", (name, now))
    return int(cursor.lastrowid or 0)


def _add_items(
    conn: sqlite3.Connection,
    list_id: int,
    existing: list[ListItem],
    items: Sequence[Item],
    now: str,
) -> AddResult:
    current = list(existing)
    added: list[ListItem] = []
    reopened: list[ListItem] = []
    updated: list[ListItem] = []
    already: list[ListItem] = []
    for item in items:
        same = _same_thing(current, item)
        fresh_ids = {i.id for i in added}
        if same is not None and same.id in fresh_ids and same.key != item.key:
            same = None  # "a bag of carrots and a tin of carrots": two things, both kept
        if same is None:
            new = _insert(conn, list_id, item, now)
            added.append(new)
            current.append(new)
            continue
        # The same thing said again: a new quantity replaces the old ("milk" -> "two pints
        # of milk"); a ticked one comes back; otherwise it is already there, once.
        requantified = item.key != same.key and item.key != item.core
        text, key = (item.text, item.key) if requantified else (same.text, same.key)
        if same.done or requantified:
            conn.execute(
                "UPDATE list_items SET text = ?, key = ?, done = 0, done_at = NULL WHERE id = ?",
                (text, key, same.id),
            )
        now_item = ListItem(same.id, text, key, False, same.added_at)
        current[current.index(same)] = now_item
        touched = [i.id for i in added + reopened + updated + already]
        if same.id in touched:
            continue  # "eggs and eggs" in one breath
        if same.done:
            reopened.append(now_item)
        elif requantified:
            updated.append(now_item)
        else:
            already.append(now_item)
    return AddResult(tuple(added), tuple(reopened), tuple(already), tuple(updated))


def _same_thing(items: list[ListItem], item: Item) -> ListItem | None:
    """The item already on the list that this one is: the same key, else the one item of
    the same core ("milk" for "two pints of milk"); open ones before ticked ones."""
    ordered = [i for i in items if not i.done] + [i for i in items if i.done]
    for candidate in ordered:
        if candidate.key == item.key:
            return candidate
    same_core = [i for i in ordered if i.core == item.core]
    return same_core[0] if len({i.key for i in same_core}) == 1 else None


def _items(conn: sqlite3.Connection, list_id: int) -> list[ListItem]:
    rows = conn.execute(
        "SELECT id, text, key, done, added_at FROM list_items WHERE list_id = ? ORDER BY id",
        (list_id,),
    ).fetchall()
    return [ListItem(r["id"], r["text"], r["key"], bool(r["done"]), r["added_at"]) for r in rows]


def _insert(conn: sqlite3.Connection, list_id: int, item: Item, now: str) -> ListItem:
    cursor = conn.execute(
        "INSERT INTO list_items (list_id, text, key, added_at) VALUES (?, ?, ?, ?)",
        (list_id, item.text, item.key, now),
    )
    return ListItem(int(cursor.lastrowid or 0), item.text, item.key, False, now)


def _delete(conn: sqlite3.Connection, name: str, ids: Iterable[int]) -> list[int]:
    list_id = _list_id(conn, name)
    if list_id is None:
        return []
    deleted: list[int] = []
    for item_id in ids:
        if conn.execute(
            "DELETE FROM list_items WHERE id = ? AND list_id = ?", (int(item_id), list_id)
        ).rowcount:
            deleted.append(int(item_id))
    return deleted
