"""Errors a user can act on, each with the exit code the CLI returns for it.

Exit codes (documented in the README and in `mavend --help`):
  0  success
  1  a runtime failure (a handler failed, an act exited non-zero)
  2  usage error (bad flags or arguments)
  3  configuration error (malformed TOML, unknown key, bad value)
  4  a model is missing or fails verification
  5  a required device or service is missing (microphone, session bus)
"""

from __future__ import annotations


class MavendError(Exception):
    """Base class: a message fit to show the user, and an exit code."""

    exit_code = 1


class UsageError(MavendError):
    exit_code = 2


class ConfigError(MavendError):
    exit_code = 3


class ModelError(MavendError):
    exit_code = 4


class ModelMissingError(ModelError):
    """A model file is absent: the message names `mavend models pull`."""


class ModelVerifyError(ModelError):
    """A model file's sha256 does not match its pin."""


class DeviceError(MavendError):
    exit_code = 5


class StorageError(MavendError):
    """The state database cannot be used; the message says what was not saved."""


class StorageLockedError(StorageError):
    """Another process held the database for longer than the busy timeout."""


class StorageCorruptError(StorageError):
    """The database file is not a readable SQLite database."""


class NotFoundError(MavendError):
    """A named thing (a reminder id, say) does not exist."""


# A storage failure, by its kind: the error class a turn logs, and why, said in a reply.
_STORAGE_FAILURES: tuple[tuple[type[StorageError], str, str], ...] = (
    (StorageLockedError, "storage_locked", "the database is locked by another program"),
    (StorageCorruptError, "storage_corrupt", "the database file is damaged"),
    (StorageError, "storage", "the database failed"),
)


def storage_class(exc: StorageError) -> str:
    """The error class a turn logs for a storage failure."""
    return next(c for kind, c, _ in _STORAGE_FAILURES if isinstance(exc, kind))


def storage_reason(exc: StorageError) -> str:
    """Why the database could not be used, said in a reply."""
    return next(why for kind, _, why in _STORAGE_FAILURES if isinstance(exc, kind))
