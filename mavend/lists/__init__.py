"""Lists: shopping, to-do and any other the user names, kept in SQLite (migration 6).

`parse_list_command` reads the exact phrasings (stage 0, no LLM); `ListBook` is the
tables; `mavend.lists.handler.ListHandler` turns a command into a reply (and a clear into a
yes/no first). The handler sits on `mavend.handlers.common` (the Reply, the context), so it
is imported from its module by the assistant, above both, and not from here: this package
stays below the handlers.
"""

from __future__ import annotations

from mavend.lists.book import ListBook, ListInputError, ListItem, ListLimitError, ListSummary
from mavend.lists.joined import ListSplit, split_list_command
from mavend.lists.names import DEFAULT_LIST, SHOPPING, TODO
from mavend.lists.parse import (
    ListCommand,
    done_tasks,
    for_list_in_focus,
    items_for_it,
    more_items,
    parse_list_command,
)

__all__ = [
    "DEFAULT_LIST",
    "SHOPPING",
    "TODO",
    "ListBook",
    "ListCommand",
    "ListInputError",
    "ListItem",
    "ListLimitError",
    "ListSplit",
    "ListSummary",
    "done_tasks",
    "for_list_in_focus",
    "items_for_it",
    "more_items",
    "parse_list_command",
    "split_list_command",
]

