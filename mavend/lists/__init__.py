"""Lists: shopping, to-do and any other the user names, kept in SQLite (migration 6).

`parse_list_command` reads the exact phrasings (stage 0, no LLM); `ListBook` is the
tables; `ListHandler` turns a command into a reply (and a clear into a yes/no first).

`ListHandler` is loaded on first use (PEP 562): it imports `mavend.handlers.common`, whose
package imports this one, so importing it here eagerly would make a cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mavend.lists.book import ListBook, ListInputError, ListItem, ListLimitError, ListSummary
from mavend.lists.names import DEFAULT_LIST, SHOPPING, TODO
from mavend.lists.parse import (
    ListCommand,
    ListSplit,
    more_items,
    parse_list_command,
    split_list_command,
)

if TYPE_CHECKING:
    from mavend.lists.handler import ListHandler

__all__ = [
    "DEFAULT_LIST",
    "SHOPPING",
    "TODO",
    "ListBook",
    "ListCommand",
    "ListHandler",
    "ListInputError",
    "ListItem",
    "ListLimitError",
    "ListSplit",
    "ListSummary",
    "more_items",
    "parse_list_command",
    "split_list_command",
]


def __getattr__(name: str) -> Any:
    if name == "ListHandler":
        import mavend.handlers  # noqa: F401  (first: it may import mavend.lists.handler)
        from mavend.lists.handler import ListHandler

        return ListHandler
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
