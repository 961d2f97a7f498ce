"""A home served by the Home Assistant stand-in (`standin.py`; Home Assistant itself cannot
run here) and the real assistant over it: say a request, read the state it left."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from mavend.config import parse_settings
from tests.ha_home.standin import StandIn
from tests.state_kit import make_assistant


def entity(eid: str, name: str, state: str, **attributes: Any) -> dict[str, Any]:
    """A Home Assistant entity as its REST API lists it."""
    return {"entity_id": eid, "device_id": None, "area_id": None, "state": state,
            "attributes": {"friendly_name": name, **attributes}}


class StandInHome:
    """The assistant configured with `table` (its `[[devices]]`) over `standin`."""

    def __init__(
        self, tmp_path: Path, standin: StandIn, table: str, *,
        clock: Callable[[], datetime] | None = None, classifier: object = None,
    ):
        token = tmp_path / "ha-token"
        token.write_text(standin.token + "\n")
        self.standin = standin
        self.before = copy.deepcopy(standin.states)
        self.assistant = make_assistant(parse_settings(
            f'[homeassistant]\nurl = "{standin.url}"\ntoken_file = "{token}"\n'
            f'timeout_s = 5.0\n[storage]\ndata_dir = "{tmp_path / "data"}"\n' + table),
            clock=clock, classifier=classifier)

    def say(self, text: str, session: str = "test"):
        return self.assistant.handle_text(text, session=session).reply

    def state(self, eid: str) -> str:
        return self.standin.states[eid]["state"]

    def changed(self) -> set[str]:
        """The entities whose state or attributes the turns so far changed."""
        return {e for e, s in self.standin.states.items()
                if (s["state"], s["attributes"]) != (self.before[e]["state"],
                                                     self.before[e]["attributes"])}

    def close(self) -> None:
        self.assistant.store.close()


@contextlib.contextmanager
def serving(home: dict[str, Any], make: Callable[[StandIn], StandInHome]) -> Iterator[Any]:
    """A stand-in serving a copy of `home`, and the home `make` builds over it; closed
    after."""
    with StandIn(copy.deepcopy(home)) as served:
        house = make(served)
        try:
            yield house
        finally:
            house.close()
