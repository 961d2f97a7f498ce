"""`mavend home import`: Home Assistant's entities -> a `[[devices]]` table to review.

What a REST client can see (developers.home-assistant.io/docs/api/rest):
- `GET /api/states`: every entity's id, state and attributes (`friendly_name`,
  `supported_color_modes`, `device_class`), exposed to Assist or not;
- `POST /api/template` (an administrator's token): areas through `areas()`,
  `area_name()` and `area_entities()` (an entity's own area, else its device's).
What it cannot see: the entity registry (aliases, hidden entities) and "expose to
Assist" (`homeassistant/expose_entity/list` is a WebSocket command, admin only). So the
exposure is read from an exported file when one is given (`read_exposed`), and aliases
are derived from the names (the name without its room: "ceiling light").

Every name is made a valid spoken name (mavend.config.base.SpokenName) and unique; the
result is checked against the same rules the config applies (check_devices) before it
is shown or written. `DOMAIN_TYPES` is the one table of what can be imported.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mavend.config import DeviceSpec, HomeAssistantSettings
from mavend.errors import ConfigError, MavendError
from mavend.home import classes, templates
from mavend.home import homeassistant as ha

log = logging.getLogger(__name__)

# Home Assistant domain -> `[[devices]] type`. Every other domain is counted as "cannot
# control yet". A switch whose device_class is "outlet" is a plug (PLUG_CLASSES).
DOMAIN_TYPES: dict[str, str] = {
    "light": "light",
    "switch": "switch",
    "input_boolean": "switch",
    "cover": "cover",
    "valve": "valve",
    "lock": "lock",
    "fan": "fan",
    "climate": "climate",
    "media_player": "media_player",
    "vacuum": "vacuum",
    "sensor": "sensor",
    "binary_sensor": "binary_sensor",
    "scene": "scene",
    "script": "script",
    "todo": "todo",
}
PLUG_CLASSES = frozenset({"outlet"})
# Sensors are many (batteries, signal strengths, energy); the ones people ask about by
# room are imported, the rest counted. binary_sensor: the kinds the classes table says.
SENSOR_CLASSES = frozenset(classes.QUANTITIES)
BINARY_CLASSES = frozenset(classes.BINARY_SENSOR.kinds)
# Types whose supported_features decide what a device can do (classes.supported_ops).
FEATURED = frozenset(
    {"cover", "valve", "lock", "fan", "climate", "media_player", "vacuum", "todo"}
)
COLOUR_MODES = frozenset({"hs", "xy", "rgb", "rgbw", "rgbww"})
# supported_color_modes that mean "no brightness" (HA's ColorMode ONOFF and UNKNOWN).
NOT_DIMMABLE_MODES = frozenset({"onoff", "unknown"})
SUPPORT_BRIGHTNESS = 1  # the deprecated supported_features bit, for HA before 2021.4
NAME_MAX = 48  # SpokenName's max_length
_SPOKEN = re.compile(r"[a-z0-9]+(?: [a-z0-9']+)*")
AREAS_TEMPLATE = (
    "[{% for a in areas() %}"
    "{{ {'id': a, 'name': area_name(a), 'entities': area_entities(a)} | tojson }}"
    "{{ ',' if not loop.last }}{% endfor %}]"
)

# Home Assistant's floors (2024.4 on): each one's name and the areas on it.
FLOORS_TEMPLATE = (
    "[{% for f in floors() %}"
    "{{ {'name': floor_name(f), 'areas': floor_areas(f) | map('area_name') | list} | tojson }}"
    "{{ ',' if not loop.last }}{% endfor %}]"
)


class HomeImportError(MavendError):
    """Home Assistant could not be read: one sentence, and nothing was written."""


@dataclass(frozen=True)
class ImportedDevice:
    entity_id: str
    name: str
    type: str
    room: str = ""
    aliases: tuple[str, ...] = ()
    dimmable: bool = False
    colour: bool = False
    device_class: str = ""
    supports: tuple[str, ...] = ()
    presets: tuple[str, ...] = ()

    def spec(self) -> DeviceSpec:
        return DeviceSpec(
            name=self.name,
            aliases=self.aliases,
            room=self.room,
            type=self.type,  # type: ignore[arg-type]
            dimmable=self.dimmable,
            colour=self.colour,
            device_class=self.device_class,
            supports=self.supports,
            presets=self.presets,
            homeassistant=self.entity_id,
        )


@dataclass
class HomeImport:
    """The table and what was left out of it, and why."""

    devices: list[ImportedDevice] = field(default_factory=list)
    entities: int = 0  # everything /api/states listed
    not_controllable: Counter[str] = field(default_factory=Counter)  # domain -> entities
    not_exposed: int = 0  # left out by the exported exposure list
    exposure_known: bool = False
    unnamed: list[str] = field(default_factory=list)  # no sayable name: entity ids
    renamed: list[tuple[str, str, str]] = field(default_factory=list)  # id, said, given
    floors: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # name, rooms
    place: tuple[float, float] | None = None  # Home Assistant's home: latitude, longitude

    def summary(self) -> list[str]:
        """One line per fact, for the terminal and the file's header."""
        lines = [f"{len(self.devices)} devices from {self.entities} Home Assistant entities."]
        if self.not_controllable:
            total = sum(self.not_controllable.values())
            kinds = sorted(self.not_controllable.items(), key=lambda kv: (-kv[1], kv[0]))
            shown = ", ".join(f"{n} {domain}" for domain, n in kinds[:12])
            more = f", and {len(kinds) - 12} more types" if len(kinds) > 12 else ""
            what = "entity of a type" if total == 1 else "entities of types"
            lines.append(f"{total} {what} mavend cannot control yet: {shown}{more}.")
        if self.exposure_known:
            what = "entity" if self.not_exposed == 1 else "entities"
            were = "was" if self.not_exposed == 1 else "were"
            lines.append(f"{self.not_exposed} {what} not exposed to Assist {were} left out.")
        else:
            lines.append(
                "Exposure to Assist is not visible through the REST API: every device mavend "
                "can control was imported (--exposed FILE keeps only the exposed ones)."
            )
        if self.unnamed:
            lines.append(
                f"{len(self.unnamed)} entities have no name mavend can say and were left "
                f"out: {', '.join(self.unnamed[:5])}{' ...' if len(self.unnamed) > 5 else ''}."
            )
        if self.renamed:
            shown = "; ".join(
                f"{eid} '{said}' -> '{given}'" for eid, said, given in self.renamed[:5]
            )
            more = f" (and {len(self.renamed) - 5} more)" if len(self.renamed) > 5 else ""
            lines.append(
                f"{len(self.renamed)} names were shared or clashed with a room and were made "
                f"unique: {shown}{more}."
            )
        if self.floors:
            shown = "; ".join(f"{name} ({', '.join(rooms)})" for name, rooms in self.floors)
            lines.append(
                f"{len(self.floors)} floors: {shown}. Add what you call them as aliases "
                '("downstairs" for the ground floor).'
            )
        if self.place is not None:
            # said, not written as a table: the config may hold [place] already
            lines.append(
                f"Home Assistant's home is at latitude {self.place[0]}, longitude "
                f"{self.place[1]}: set them in [place] for sunrise and sunset (they never "
                "leave the box)."
            )
        return lines


# names ---------------------------------------------------------------------------------
def spoken_name(text: str) -> str:
    """'Kitchen Ceiling-Light #2' -> 'kitchen ceiling light 2'; '' when nothing sayable is
    left. Accents are dropped (é -> e), '&' is 'and', at most 48 characters (whole words)."""
    text = str(text).replace("\u2019", "'").replace("&", " and ")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    words = [w.strip("'") for w in re.sub(r"[^a-z0-9']+", " ", text).split()]
    words = [w for w in words if w]
    if words:
        words[0] = words[0].replace("'", "")  # a name cannot start with an apostrophe word
    # "Garage garage door": an area's name put before an entity's that already holds it
    words = [w for i, w in enumerate(words) if w and (i == 0 or w != words[i - 1])]
    name = ""
    for word in words:
        longer = f"{name} {word}" if name else word
        if len(longer) > NAME_MAX:
            break
        name = longer
    return name if _SPOKEN.fullmatch(name) else ""


def _joined(friendly: str) -> str:
    """The name with hyphenated words joined ("wi-fi plug" -> "wifi plug"), as people and
    speech recognisers often write them."""
    return spoken_name(re.sub(r"(?<=\w)-(?=\w)", "", str(friendly)))


# the table -----------------------------------------------------------------------------
def build_table(
    states: list[dict[str, Any]],
    areas: dict[str, str],
    exposed: set[str] | None = None,
) -> HomeImport:
    """`states`: /api/states; `areas`: entity id -> area name; `exposed`: the entity ids
    exposed to Assist, or None when unknown (everything importable is imported)."""
    result = HomeImport(entities=len(states), exposure_known=exposed is not None)
    rooms_of: dict[str, str] = {}
    picked: list[tuple[str, str, str, bool, str]] = []  # id, friendly, type, dimmable, base
    # entity id -> device_class, colour, supports, presets
    details: dict[str, tuple[str, bool, tuple[str, ...], tuple[str, ...]]] = {}
    for state in sorted(states, key=lambda s: str(s.get("entity_id", ""))):
        entity_id = str(state.get("entity_id", ""))
        domain = entity_id.partition(".")[0]
        kind = DOMAIN_TYPES.get(domain)
        if kind is None:
            result.not_controllable[domain or "(no entity id)"] += 1
            continue
        if exposed is not None and entity_id not in exposed:
            result.not_exposed += 1
            continue
        attributes = state.get("attributes") or {}
        if not isinstance(attributes, dict):
            attributes = {}
        friendly = str(attributes.get("friendly_name") or "")
        base = spoken_name(friendly) or spoken_name(entity_id.partition(".")[2].replace("_", " "))
        if not base or not templates.ENTITY_ID.fullmatch(entity_id):
            result.unnamed.append(entity_id)
            continue
        if kind == "switch" and attributes.get("device_class") in PLUG_CLASSES:
            kind = "plug"
        device_class = _device_class(attributes)
        if (kind == "sensor" and device_class not in SENSOR_CLASSES) or (
            kind == "binary_sensor" and device_class not in BINARY_CLASSES
        ):
            result.not_controllable[f"{domain} ({device_class or 'no device class'})"] += 1
            continue
        rooms_of[entity_id] = spoken_name(areas.get(entity_id) or "")
        picked.append((entity_id, friendly or base, kind, _dimmable(kind, attributes), base))
        details[entity_id] = (
            device_class,
            _colour(kind, attributes),
            _supports(kind, attributes),
            _presets(kind, attributes),
        )
    rooms = {room for room in rooms_of.values() if room}
    names = _unique_names(picked, rooms_of, rooms, result)
    all_names = set(names.values())
    for entity_id, friendly, kind, dimmable, base in picked:
        name, room = names[entity_id], rooms_of[entity_id]
        device_class, colour, supports, presets = details[entity_id]
        result.devices.append(
            ImportedDevice(
                entity_id=entity_id,
                name=name,
                type=kind,
                room=room,
                aliases=_aliases(name, base, friendly, room, all_names | rooms),
                dimmable=dimmable,
                colour=colour,
                device_class=device_class,
                supports=supports,
                presets=presets,
            )
        )
    check_table(result.devices)
    return result


def _device_class(attributes: dict[str, Any]) -> str:
    value = attributes.get("device_class")
    return value if isinstance(value, str) and re.fullmatch(r"[a-z_]+", value) else ""


def _colour(kind: str, attributes: dict[str, Any]) -> bool:
    modes = attributes.get("supported_color_modes")
    return kind == "light" and isinstance(modes, list) and bool(set(map(str, modes)) & COLOUR_MODES)


def _presets(kind: str, attributes: dict[str, Any]) -> tuple[str, ...]:
    """A fan's or thermostat's preset_modes that can be said (a name, not a sentence)."""
    modes = attributes.get("preset_modes")
    if kind not in ("fan", "climate") or not isinstance(modes, list):
        return ()
    return tuple(m for m in modes if isinstance(m, str) and _SPOKEN.fullmatch(m.lower()))[:12]


def _supports(kind: str, attributes: dict[str, Any]) -> tuple[str, ...]:
    """What supported_features says it can do, for the types where it decides."""
    features = attributes.get("supported_features")
    if kind not in FEATURED or not isinstance(features, int) or isinstance(features, bool):
        return ()
    return classes.supported_ops(kind, features)


def _dimmable(kind: str, attributes: dict[str, Any]) -> bool:
    if kind != "light":
        return False
    modes = attributes.get("supported_color_modes")
    if isinstance(modes, list):
        return bool(set(map(str, modes)) - NOT_DIMMABLE_MODES)
    features = attributes.get("supported_features", 0)
    return isinstance(features, int) and bool(features & SUPPORT_BRIGHTNESS)


def _unique_names(
    picked: list[tuple[str, str, str, bool, str]],
    rooms_of: dict[str, str],
    rooms: set[str],
    result: HomeImport,
) -> dict[str, str]:
    """Entity id -> a name no other device and no room has. A name said once keeps it;
    a shared one takes its room ("bedroom lamp"), then its entity id's words, then a
    number. Deterministic: entities in entity-id order."""
    counts = Counter(base for _, _, _, _, base in picked)
    names: dict[str, str] = {}
    taken = set(rooms)
    for entity_id, _, _, _, base in picked:
        if counts[base] == 1 and base not in rooms:
            names[entity_id] = base
            taken.add(base)
    for entity_id, friendly, kind, _, base in picked:
        if entity_id in names:
            continue
        room = rooms_of[entity_id]
        first = (
            f"{room} {base}" if room and not base.startswith(f"{room} ") and base != room else "",
            f"{base} {kind}" if base == room else "",
            spoken_name(entity_id.partition(".")[2].replace("_", " ")),
        )
        numbered = (f"{base[: NAME_MAX - 6].rstrip()} {n}" for n in itertools.count(2))
        candidates = itertools.chain(first, numbered)
        name = next(c for c in candidates if c and len(c) <= NAME_MAX and c not in taken)
        names[entity_id] = name
        taken.add(name)
        result.renamed.append((entity_id, friendly, name))
    return names


def _aliases(
    name: str, base: str, friendly: str, room: str, forbidden: set[str]
) -> tuple[str, ...]:
    """Other ways to say it: the name it was given in Home Assistant (when it had to
    change), hyphens joined, and the name without its room ("ceiling light" in the
    living room). An alias may be shared; it is never a device's name or a room."""
    found: list[str] = []
    for candidate in (base, _joined(friendly)):
        found.append(candidate)
        if room and candidate.startswith(f"{room} "):
            found.append(candidate[len(room) + 1 :])
        if room and candidate.endswith(f" {room}"):
            found.append(candidate[: -len(room) - 1])
    out: list[str] = []
    for alias in found:
        fits = alias and _SPOKEN.fullmatch(alias) and alias not in (name, *out)
        if fits and alias not in forbidden:
            out.append(alias)
    return tuple(out)


def check_table(devices: list[ImportedDevice]) -> None:
    """The config's own rules (DeviceSpec, check_devices): a table that fails is a bug here."""
    from mavend.config.devices import check_devices

    check_devices([device.spec() for device in devices])


# reading Home Assistant ----------------------------------------------------------------
def fetch_home(
    settings: HomeAssistantSettings, *, with_areas: bool = True
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """(/api/states, entity id -> area name). Raises HomeImportError or ConfigError."""
    states = _answer(settings, ha.get_states(settings), "GET /api/states")
    if not isinstance(states, list) or not all(isinstance(s, dict) for s in states):
        raise HomeImportError(
            f"Home Assistant at {settings.url} answered GET /api/states with something other "
            "than a list of states; nothing was written."
        )
    if not with_areas:
        return states, {}
    result = ha.render_template(settings, AREAS_TEMPLATE)
    if result.error == ha.AUTH:
        raise HomeImportError(
            f"Home Assistant at {settings.url} refused the area template ({result.status}): "
            "POST /api/template needs an administrator's token (or use --no-areas to import "
            "without rooms); nothing was written."
        )
    listed = _answer(settings, result, "the area template (POST /api/template)")
    areas: dict[str, str] = {}
    try:
        for area in listed:
            for entity_id in area["entities"]:
                areas[str(entity_id)] = str(area["name"] or area["id"])
    except (TypeError, KeyError) as exc:
        raise HomeImportError(
            f"Home Assistant at {settings.url} rendered the area template into something "
            f"unexpected ({exc!r}); nothing was written."
        ) from exc
    return states, areas


def _answer(settings: HomeAssistantSettings, result: ha.HaResult, what: str) -> Any:
    url = settings.url
    if result.error == ha.UNCONFIGURED:
        raise ConfigError(
            "set [homeassistant] url and token_file in the config to import from Home Assistant"
        )
    if result.error == ha.TOKEN_FILE:
        raise ConfigError(f"cannot read the Home Assistant token file {result.detail}")
    if result.error == ha.AUTH:
        raise HomeImportError(
            f"Home Assistant at {url} refused the token in {settings.token_file} "
            f"({result.status}); it may have expired: put a new long-lived access token "
            "there. Nothing was written."
        )
    if result.error == ha.UNREACHABLE:
        if "timed out" in result.detail.lower():
            raise HomeImportError(
                f"Home Assistant at {url} did not answer {what} within "
                f"{settings.timeout_s:g} s (--timeout to wait longer); nothing was written."
            )
        raise HomeImportError(
            f"I couldn't reach Home Assistant at {url} ({result.detail}); nothing was written."
        )
    if result.error == ha.HTTP:
        detail = " ".join(result.detail.split())[:120]
        raise HomeImportError(
            f"Home Assistant at {url} answered {result.status} to {what}"
            f"{f' ({detail})' if detail else ''}; nothing was written."
        )
    if result.error:  # BAD_RESPONSE
        raise HomeImportError(
            f"Home Assistant at {url} answered {what} with text that is not JSON "
            f"({result.detail[:80]!r}); nothing was written."
        )
    return result.body


def read_exposed(path: Path) -> set[str]:
    """The entity ids exposed to Assist, from the answer to HA's WebSocket command
    `homeassistant/expose_entity/list`: the whole message, its `result`, or the bare
    `exposed_entities` map ({"light.x": {"conversation": true}, ...})."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"--exposed {path}: cannot read it as JSON: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("result"), dict):
        data = data["result"]
    if isinstance(data, dict) and isinstance(data.get("exposed_entities"), dict):
        data = data["exposed_entities"]
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise ConfigError(
            f"--exposed {path}: not the answer to homeassistant/expose_entity/list "
            '(expected {"exposed_entities": {"light.x": {"conversation": true}}})'
        )
    return {str(eid) for eid, assistants in data.items() if assistants.get("conversation")}


# the TOML ------------------------------------------------------------------------------
def _string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a TOML basic string for these values


def to_toml(imported: HomeImport, source: str) -> str:
    lines = [
        f"# Imported from Home Assistant at {source} by `mavend home import`.",
        "# Review the names, aliases and rooms, then add these [[devices]] to your config.",
        *(f"# {line}" for line in imported.summary()),
    ]
    for device in imported.devices:
        lines += ["", "[[devices]]", f"name = {_string(device.name)}"]
        if device.aliases:
            lines.append(f"aliases = [{', '.join(_string(a) for a in device.aliases)}]")
        if device.room:
            lines.append(f"room = {_string(device.room)}")
        lines.append(f"type = {_string(device.type)}")
        if device.type == "light":
            lines.append(f"dimmable = {'true' if device.dimmable else 'false'}")
            if device.colour:
                lines.append("colour = true")
        if device.device_class:
            lines.append(f"device_class = {_string(device.device_class)}")
        if device.supports:
            lines.append(f"supports = [{', '.join(_string(op) for op in device.supports)}]")
        if device.presets:
            lines.append(f"presets = [{', '.join(_string(p) for p in device.presets)}]")
        lines.append(f"homeassistant = {_string(device.entity_id)}")
    for name, rooms in imported.floors:
        lines += ["", "[[floors]]", f"name = {_string(name)}",
                  f"rooms = [{', '.join(_string(r) for r in rooms)}]"]
    return "\n".join(lines) + "\n"


def import_home(
    settings: HomeAssistantSettings,
    *,
    exposed: set[str] | None = None,
    with_areas: bool = True,
) -> HomeImport:
    states, areas = fetch_home(settings, with_areas=with_areas)
    imported = build_table(states, areas, exposed)
    if with_areas:
        imported.floors = _floors(fetch_floors(settings), imported.devices)
    imported.place = fetch_place(settings)
    return imported


def fetch_place(settings: HomeAssistantSettings) -> tuple[float, float] | None:
    """Where Home Assistant says home is, or None when it says nowhere (0, 0 or no
    answer): the import goes on without it."""
    result = ha.get_config(settings)
    body = result.body if not result.error else None
    if not isinstance(body, dict):
        return None
    try:
        latitude, longitude = float(body["latitude"]), float(body["longitude"])
    except (KeyError, TypeError, ValueError):
        return None
    if not (-90 <= latitude <= 90 and -180 <= longitude <= 180) or (latitude, longitude) == (0, 0):
        return None
    return round(latitude, 5), round(longitude, 5)


def fetch_floors(settings: HomeAssistantSettings) -> list[tuple[str, list[str]]]:
    """Each floor's name and its areas' names; none from a Home Assistant before floors
    (its template has no `floors()`: the import goes on without them)."""
    result = ha.render_template(settings, FLOORS_TEMPLATE)
    if result.error == ha.HTTP:
        log.debug("Home Assistant rendered no floors (%s): importing without them", result.detail)
        return []
    listed = _answer(settings, result, "the floor template (POST /api/template)")
    try:
        return [(str(f["name"]), [str(a) for a in f["areas"] if a]) for f in listed]
    except (TypeError, KeyError) as exc:
        raise HomeImportError(
            f"Home Assistant at {settings.url} rendered the floor template into something "
            f"unexpected ({exc!r}); nothing was written."
        ) from exc


def _floors(
    floors: list[tuple[str, list[str]]], devices: list[ImportedDevice]
) -> list[tuple[str, tuple[str, ...]]]:
    """The floors as the config takes them: spoken names, only rooms some device is in,
    only floors with such a room, never a name a room or device already has."""
    rooms = {d.room for d in devices if d.room}
    taken = rooms | {n for d in devices for n in (d.name, *d.aliases)}
    kept: list[tuple[str, tuple[str, ...]]] = []
    for name, areas in floors:
        said = spoken_name(name)
        on_it = tuple(dict.fromkeys(r for a in areas if (r := spoken_name(a)) in rooms))
        if said and on_it and said not in taken and said not in {k for k, _ in kept}:
            kept.append((said, on_it))
    return kept
