"""What every settings block shares: frozen, strict pydantic dataclasses and the value types."""

from __future__ import annotations

import logging
from typing import Annotated

from pydantic import (
    ConfigDict,
    Field,
)
from pydantic.dataclasses import dataclass

log = logging.getLogger(__name__)

# Settings are frozen, reject unknown keys, and never coerce "5" into 5.
_STRICT = ConfigDict(extra="forbid", strict=True)


def _settings(cls):
    return dataclass(frozen=True, config=_STRICT)(cls)


Probability = Annotated[float, Field(ge=0.0, le=1.0)]
Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]
Name = Annotated[str, Field(pattern=r"^[a-z][a-z0-9_]*$", max_length=64)]


SpokenName = Annotated[str, Field(pattern=r"^[a-z0-9]+(?: [a-z0-9']+)*$", max_length=48)]
