"""act: run an allowlisted act: a program as argv (never through a shell), or, by its
`kind`, an MQTT message, a Home Assistant service call or a device act (mavend/home/).

Only what `[[acts.allow]]` names (and the acts `[[devices]]` generates) can run,
with slot values checked against their declared type again here (a decision can
come from anywhere: the router, a continuation, a test). A destructive act first
asks for a spoken "yes"; the pending request lives in the session table, so
`mavend say "yes"` in another process can confirm it. Every run is logged with its
exit code (or what was sent), output and a coarse error class, which the memory
work learns from.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mavend.config import ActSlot, ActSpec
from mavend.config.devices import OPERATIONS, floor_rooms
from mavend.handlers.common import (
    HandlerContext,
    Outcome,
    Reply,
    TurnContext,
    first_line,
    human_list,
)
from mavend.handlers.confirm import Confirmations
from mavend.home import classes
from mavend.home.run import HomeActs, HomeRun
from mavend.replies import Change
from mavend.router.act_words import routine_named, thing_named
from mavend.router.decision import Decision
from mavend.router.grammar import normalize

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ActResult:
    argv: tuple[str, ...]
    exit_code: int | None
    error_class: str  # "" on success
    stdout: str
    stderr: str
    duration_ms: float

    @property
    def ok(self) -> bool:
        return not self.error_class


# After the act's own process exits, its pipes are read for at most this long: a program
# it left running in the background (`sh -c 'player & echo started'`) may hold them open
# for hours, and the act is done when its process is.
DRAIN_S = 0.25
OUTPUT_CAP = 64 * 1024  # bytes kept of each of stdout and stderr

# Detached programs still running: polled (reaped) at every act, so none lingers as a zombie.
_detached: dict[int, tuple[str, subprocess.Popen[bytes]]] = {}


def run_argv(argv: Sequence[str], timeout_s: float, *, detach: bool = False) -> ActResult:
    """Run `argv` without a shell.

    Attached (the default): wait up to `timeout_s` for its process to exit, reading its
    output meanwhile, then kill its whole process group if it has not. A program it starts
    in the background lives on: the act is done when its own process exits (its pipes are
    read for `DRAIN_S` more, not until the background program closes them).

    `detach`: start it in a session of its own, stdin from /dev/null, stdout and stderr to
    the daemon's stderr (the journal, under systemd), and return as soon as the program was
    executed; it is never killed, and reaped when it exits.
    """
    started = time.monotonic()
    reap_detached()

    def result(code: int | None, error: str, out: bytes = b"", err: bytes = b"") -> ActResult:
        return ActResult(
            tuple(argv),
            code,
            error,
            out.decode("utf-8", "replace"),
            err.decode("utf-8", "replace"),
            (time.monotonic() - started) * 1000.0,
        )

    output: int = _daemon_stderr() if detach else subprocess.PIPE
    try:
        # Its own session: on timeout the act and anything it started are killed; a detached
        # program is out of reach of the terminal's (or the daemon's) signals.
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        return result(None, "not_found", err=str(exc).encode())
    except PermissionError as exc:
        return result(None, "permission", err=str(exc).encode())
    except OSError as exc:
        return result(None, "os_error", err=str(exc).encode())
    if detach:
        # Popen returns only once the exec succeeded (a failed exec raises above).
        _detached[proc.pid] = (argv[0], proc)
        return result(None, "", f"started {argv[0]} (pid {proc.pid})".encode())
    out, err, timed_out = _collect(proc, started + timeout_s)
    if timed_out:
        return result(proc.returncode, "timeout", out, err)
    if proc.returncode < 0:
        return result(proc.returncode, "signal", out, err)
    if proc.returncode > 0:
        return result(proc.returncode, "exit_status", out, err)
    return result(0, "", out, err)


def _collect(proc: subprocess.Popen[bytes], deadline: float) -> tuple[bytes, bytes, bool]:
    """(stdout, stderr, timed out): read both pipes until the process has exited and they
    are at EOF or drained for `DRAIN_S`; kill the process group at `deadline`."""
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    kept = {out_fd: bytearray(), err_fd: bytearray()}
    timed_out = False
    stop_at: float | None = None  # set once the process has exited (or was killed)
    with selectors.DefaultSelector() as selector:
        for fd in kept:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            now = time.monotonic()
            if stop_at is None and proc.poll() is not None:
                stop_at = now + DRAIN_S
            if stop_at is None and now >= deadline:
                timed_out = True
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                stop_at = time.monotonic() + DRAIN_S
            if stop_at is not None and now >= stop_at:
                break
            # Short waits: the process's exit does not make a pipe readable when a program
            # it started still holds the other end.
            wait = min(0.05, (stop_at or deadline) - now)
            for key, _ in selector.select(max(wait, 0.0)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                room = OUTPUT_CAP - len(kept[key.fd])
                if room > 0:
                    kept[key.fd] += chunk[:room]
    proc.stdout.close()
    proc.stderr.close()
    if proc.returncode is None:  # pipes at EOF: the process is exiting, or about to time out
        try:
            proc.wait(max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            timed_out = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return bytes(kept[out_fd]), bytes(kept[err_fd]), timed_out


def _daemon_stderr() -> int:
    """Where a detached program's output goes: this process's stderr, which is the journal
    under systemd (never stdout: `mavend run --no-audio` and `mavend say` answer there)."""
    try:
        os.fstat(2)
    except OSError:
        return subprocess.DEVNULL
    return 2


def reap_detached() -> None:
    """Collect the exit status of detached programs that have exited (and log it)."""
    for pid, (program, proc) in list(_detached.items()):
        code = proc.poll()
        if code is None:
            continue
        del _detached[pid]
        if code:
            log.warning(
                "detached act program %s (pid %d) exited with status %d", program, pid, code
            )
        else:
            log.info("detached act program %s (pid %d) exited", program, pid)


def check_args(act: ActSpec, args: Mapping[str, str]) -> tuple[dict[str, str], str]:
    """The validated arguments, or an explanation of the first bad one."""
    valid: dict[str, str] = {}
    for name, slot in act.slots.items():
        value = str(args.get(name, "")).strip()
        if not value and slot.optional:
            continue  # a device act's room: the turn's room stands in
        if not value:
            return valid, f"To {describe(act)}, which {name}? {allowed_values(name, slot)}"
        if not slot_accepts(slot, value):
            return valid, (
                f"I can't {describe(act)} with {name} {value!r}. {allowed_values(name, slot)}"
            )
        valid[name] = value
    return valid, ""


def slot_accepts(slot: ActSlot, value: str) -> bool:
    if slot.type == "enum":
        return value in slot.values
    if slot.type == "int":
        if not re.fullmatch(r"-?\d+", value):
            return False
        number = int(value)
        return (slot.min is None or number >= slot.min) and (slot.max is None or number <= slot.max)
    return re.fullmatch(slot.pattern, value) is not None


def allowed_values(name: str, slot: ActSlot) -> str:
    if slot.type == "enum" and len(slot.values) > 8:  # a home's 150 names: not in one reply
        return f"I know {len(slot.values)} {name}s; say one by its name."
    if slot.type == "enum":
        return f"Allowed {name}s: {', '.join(slot.values)}."
    if slot.type == "int":
        low = "any" if slot.min is None else slot.min
        high = "any" if slot.max is None else slot.max
        return f"The {name} must be a whole number from {low} to {high}."
    return f"The {name} must match {slot.pattern}."


def describe(act: ActSpec) -> str:
    return act.description or act.name.replace("_", " ")


def build_argv(act: ActSpec, args: Mapping[str, str]) -> tuple[str, ...]:
    # Each slot fills its place inside one argv element; a value can never
    # become a second argument or an option of its own.
    return tuple(part.format(**args) for part in act.argv)


# This box's media acts and the home player's act each stands for, when one is playing.
TO_HOME_PLAYER = {
    "media_pause": "device_pause",
    "media_play_pause": "device_pause",
    "media_next": "device_next",
    "media_previous": "device_previous",
    "mute": "device_mute",
    "unmute": "device_unmute",
    "volume_up": "device_up",
    "volume_down": "device_down",
}


# "play some jazz", "put on the new adele album", "queue up something relaxing": music
# chosen by what it is, which the player's allowlisted acts cannot do.
_PLAY_SOMETHING = re.compile(
    r"^(?:(?:can|could|would) you |please |i want to )?(?:play|put on|stick on|queue up"
    r"|listen to|i'd like to hear|let's hear|lets hear) (?!the (?:lights?|heating)\b)\S"
)
# A floor said where the whole home could be ("lights off downstairs").
_FLOOR = re.compile(
    r"\b(?:downstairs|upstairs|(?:on|in) the (?:ground|first|second|third|top|bottom|lower|"
    r"upper|main) floor|(?:in|on) the (?:basement|attic|cellar|loft))\b"
)


# The most scenes and scripts a refusal names: more cannot be heard in one breath.
MAX_NAMED = 8


class ActHandler:
    def __init__(self, ctx: HandlerContext):
        self.ctx = ctx
        self.confirm = Confirmations(ctx)

    def handle(self, decision: Decision, context: TurnContext | None = None) -> Reply:
        act = self.ctx.settings.acts.get(decision.slots.fn) if decision.slots.has_fn else None
        if act is None:
            if unknown := self._unknown_floor(decision.utterance):
                return unknown
            said = decision.slots.text or decision.utterance
            if routine := routine_named(said):
                return self._no_routine(routine)
            if _PLAY_SOMETHING.match(normalize(said)):
                # "play some jazz": no music is chosen by name here; say what can be done
                player = (" I can only play or pause what the media player has: say \"play\" "
                          "to start it." if self.ctx.settings.acts.get("media_play") else "")
                return Reply(f"I can't choose what to play.{player}", Outcome.REFUSED,
                             "not_allowed", {"thing": "music"})
            return self.refuse(thing_named(said))
        if decision.clarify is not None:
            # The router's question already lists what the slot allows.
            return Reply(decision.clarify.question, Outcome.ASKED, data={"act": act.name})
        context = context or TurnContext()
        if act.kind == "argv" and (elsewhere := self._room_elsewhere(decision, context)):
            # A program runs on this box: "the living room speaker's volume" is not ours.
            return Reply(
                f"I can only {describe(act)} here, not in the {elsewhere}, so I did nothing.",
                Outcome.REFUSED,
                "not_here",
                {"act": act.name, "room": elsewhere},
            )
        if (played := self._home_player(act, context.room)) is not None:
            return played
        return self.request(act, decision.slots.args, context.room, session=context.session)

    def _home_player(self, act: ActSpec, here: str) -> Reply | None:
        """"pause the music", "skip this song", "mute the speaker" while a home speaker
        plays: that speaker, not this box's player (which ran, and the music played on).
        None when no home player is playing (this box's act runs as before)."""
        device_act = self.ctx.settings.acts.get(TO_HOME_PLAYER.get(act.name, ""))
        if act.kind != "argv" or device_act is None:
            return None
        players = HomeActs(self.ctx.settings).playing(here)
        if not players:
            return None
        replies = [self.run_home(device_act, {"device": d.name}, here) for d in players]
        if len(replies) == 1:
            return replies[0]
        failed = next((r for r in replies if r.outcome is not Outcome.DONE), None)
        return Reply(" ".join(r.text for r in replies),
                     failed.outcome if failed else Outcome.DONE,
                     failed.error_class if failed else "",
                     {"act": device_act.name, "devices": [d.name for d in players]},
                     changes=tuple(c for r in replies for c in r.changes))

    def _room_elsewhere(self, decision: Decision, context: TurnContext) -> str:
        """A known room the words name that is not the one the turn was heard in."""
        settings = self.ctx.settings
        here = context.room or settings.audio.room
        rooms = {d.room for d in settings.devices} | {s.room for s in settings.satellites}
        said = f" {normalize(decision.utterance)} "
        named = sorted(r for r in rooms - {"", here} if f" {normalize(r)} " in said)
        return named[0] if named else ""

    def request(
        self, act: ActSpec, args: Mapping[str, str], here: str = "", *, session: str = ""
    ) -> Reply:
        valid, problem = check_args(act, args)
        if problem:
            return Reply(problem, Outcome.REFUSED, "bad_argument", {"act": act.name})
        if act.destructive:
            return self.ask_confirmation(act, valid, here, session=session)
        if bulk := HomeActs(self.ctx.settings).bulk_question(act, valid, here):
            # "turn off everything in the house": every room's heating and plugs too
            return self.confirm.ask(session, "act", {"act": act.name, "args": dict(valid)},
                                    bulk, room=here,
                                    data={"act": act.name, "args": dict(valid), "bulk": True})
        return self.run(act, valid, here)

    def run_named(self, name: str) -> Reply | None:
        """Run an act by name (louder -> volume_up); None when it is not allowlisted."""
        act = self.ctx.settings.acts.get(name)
        return None if act is None else self.request(act, {})

    def _unknown_floor(self, said: str) -> Reply | None:
        """ "lights off downstairs" with no such floor: what is missing, not the whole list
        of allowed actions (a floor said is in the scope list only when configured)."""
        floor = _FLOOR.search(normalize(said))
        if floor is None or not self.ctx.settings.devices:
            return None
        rooms = {d.room for d in self.ctx.settings.devices}
        if floor.group(0) in floor_rooms(self.ctx.settings.floors) or floor.group(0).split()[
                -1] in rooms:
            return None  # a floor it knows, or a room ("the loft"): the rest was not understood
        named = [f.name for f in self.ctx.settings.floors]
        known = f" The floors I know: {', '.join(named)}." if named else (
            " Add a [[floors]] table to config.toml (`mavend home import` writes Home "
            "Assistant's floors).")
        return Reply(f"I don't know which rooms are {floor.group(0)}.{known}", Outcome.REFUSED,
                     "not_allowed", {"floor": floor.group(0)})

    def _no_routine(self, name: str) -> Reply:
        """ "activate movie time" with no such scene: the ones there are, never a near one
        run in its place ("movie night" is another scene)."""
        known = sorted(d.name for d in self.ctx.settings.devices if d.type in ("scene", "script"))
        listed = (f" The ones I know: {human_list(known[:MAX_NAMED])}." if known else "")
        return Reply(f"I don't have a scene or script called {name}, so I did nothing.{listed}",
                     Outcome.REFUSED, "not_allowed", {"thing": name})

    def refuse(self, thing: str = "") -> Reply:
        if thing:  # "turn the pool pump on": say what is missing, not the whole list
            return Reply(
                f"I don't have anything called the {thing} that I can control, so I did "
                "nothing.",
                Outcome.REFUSED,
                "not_allowed",
                {"thing": thing},
            )
        # Read aloud, the whole list (a dozen acts and the home's classes) took 15 s to
        # hear; the page and the terminal still show it.
        return Reply(
            f"I can't do that: it isn't on my list of allowed actions. I can {self.allowed()}.",
            Outcome.REFUSED,
            "not_allowed",
            spoken="I can't do that: it isn't on my list of allowed actions.",
        )

    def allowed(self) -> str:
        acts = self.ctx.settings.acts.allow
        if not acts:
            return "run nothing (the list is empty)"
        # The home's generated acts are one thing to say ("control the home's lights,
        # blinds and locks"), not thirty: a reply has to be heard to the end.
        said = [describe(a) for a in acts if a.kind != "device"]
        types = {d.type for d in self.ctx.settings.devices if d.type != "todo"}
        kinds = sorted({classes.CLASSES[t].plurals[0] for t in types})
        if any(a.kind == "device" for a in acts) and kinds:
            said.append(f"control the home's {human_list(kinds)}")
        return human_list(said)

    # confirmation --------------------------------------------------------
    def ask_confirmation(
        self, act: ActSpec, args: Mapping[str, str], here: str = "", *, session: str = ""
    ) -> Reply:
        target = f" {' '.join(args.values())}" if args else ""
        question = f"Do you want me to {describe(act)}{target}?"
        if act.kind == "device" and args.get("device"):  # "Do you want me to unlock the side door?"
            verb = describe(act).split(" ")[0]
            question = f"Do you want me to {verb} the {args['device']}?"
        return self.confirm.ask(
            session,
            "act",
            {"act": act.name, "args": dict(args)},
            question,
            room=here,
            data={"act": act.name, "args": dict(args)},
        )

    def run_confirmed(self, pending: Mapping[str, object]) -> Reply:
        act = self.ctx.settings.acts.get(str(pending.get("act", "")))
        if act is None:  # the config changed since the question
            return self.refuse()
        args = pending.get("args") or {}
        valid, problem = check_args(act, args if isinstance(args, Mapping) else {})
        if problem:
            return Reply(problem, Outcome.REFUSED, "bad_argument", {"act": act.name})
        return self.run(act, valid, str(pending.get("room") or ""))

    def run_scheduled(self, fn: str, args: Mapping[str, str], here: str, what: str) -> str:
        """A scheduled act's time has come (mavend.handlers.timed): run it as the allowlist
        stands now, and say how it went."""
        return self.run_stored(fn, args, here, what).text

    def run_stored(self, fn: str, args: Mapping[str, str], here: str, what: str) -> Reply:
        """Run an act named by stored data (a scheduled row, an undo's record) as the
        allowlist stands now. Nothing widens here: an act since taken off the list, an
        argument it no longer allows or one that now needs a yes is not run."""
        act = self.ctx.settings.acts.get(fn)
        if act is None:
            return Reply(f"I didn't {what}: it is no longer on my list of allowed actions.",
                         Outcome.REFUSED, "not_allowed")  # fmt: skip
        if act.destructive:
            return Reply(f"I didn't {what}: it needs a spoken yes, and nobody was asked.",
                         Outcome.REFUSED, "needs_confirmation")  # fmt: skip
        valid, problem = check_args(act, args)
        if problem:
            return Reply(f"I didn't {what}: {problem}", Outcome.REFUSED, "bad_argument")
        return self.run(act, valid, here)

    # running -------------------------------------------------------------
    def run(self, act: ActSpec, args: Mapping[str, str], here: str = "") -> Reply:
        if act.kind != "argv":
            return self.run_home(act, args, here)
        argv = build_argv(act, args)
        log.info("running act %s: %s", act.name, argv)
        result = run_argv(argv, act.timeout_s, detach=act.detach)
        self.ctx.acts.add(
            self.ctx.now(),
            act.name,
            argv,
            exit_code=result.exit_code,
            error_class=result.error_class,
            stdout=result.stdout,
            stderr=result.stderr,
            duration_ms=result.duration_ms,
        )
        data: dict[str, object] = {
            "act": act.name,
            "exit_code": result.exit_code,
            "argv": list(argv),
        }
        # A command that ran is on the record but can never be taken back ("undo that").
        ran = (Change("act.run", f"ran {describe(act)}", {"act": act.name}, undoable=False),)
        if act.detach and result.ok:  # started; its output goes to the journal
            return Reply(f"Done: {describe(act)}.", data={**data, "detached": True}, changes=ran)
        if result.ok:
            said = first_line(result.stdout)
            text = f"Done: {said}" if said else f"Done: {describe(act)}."
            return Reply(text, data=data, changes=ran)
        log.warning("act %s failed (%s): %s", act.name, result.error_class, result.stderr[-500:])
        return Reply(failure_text(act, result), Outcome.FAILED, result.error_class, data)

    def run_home(self, act: ActSpec, args: Mapping[str, str], here: str) -> Reply:
        """An MQTT, Home Assistant or device act; mavend.home says (and logs) how it went."""
        started = time.monotonic()
        done = HomeActs(self.ctx.settings).run(act, args, here)
        reply = done.reply
        if done.sent:  # refused before sending: nothing to log as run
            self.ctx.acts.add(
                self.ctx.now(),
                act.name,
                done.sent,
                exit_code=None,
                error_class=reply.error_class,
                stdout=reply.text,
                stderr=done.detail,
                duration_ms=(time.monotonic() - started) * 1000.0,
            )
        sent = device_changes(act, done) if done.sent and reply.outcome is Outcome.DONE else ()
        return Reply(
            reply.text,
            reply.outcome,
            reply.error_class,
            {"act": act.name, **reply.data},
            changes=sent,
        )


def device_changes(act: ActSpec, done: HomeRun) -> tuple[Change, ...]:
    """What a home act changed, for "undo that": devices that report they were switched
    from the other state can be switched back; anything else is on the record only."""
    if done.reverts:
        op = "off" if done.revert_act == "device_on" else "on"
        names = human_list([f"the {name}" for name in done.reverts])
        ref = {"act": done.revert_act, "devices": list(done.reverts), "op": op}
        return (Change("device.set", f"turned {op} {names}", ref),)
    devices = [str(n) for n in done.reply.data.get("devices", [])]
    op = OPERATIONS.get(act.name, "")
    verb = _DID.get(op, f"sent “{op}” to" if op else "")
    summary = f"{verb} {human_list([f'the {n}' for n in devices])}" if verb else describe(act)
    if done.unchanged and set(done.unchanged) == set(devices):
        why = {"act": act.name, "why": f"{'it was' if len(devices) == 1 else 'they were'} "
                                       f"{'like that' if op not in _DID else op} already"}
    else:
        why = {"act": act.name, "why": "it doesn't tell me what it was before"}
    return (Change("device.set", summary, why, undoable=False),)


_DID = {
    "on": "turned on", "off": "turned off", "open": "opened", "close": "closed",
    "lock": "locked", "unlock": "unlocked", "set": "set",
}  # fmt: skip


def failure_text(act: ActSpec, result: ActResult) -> str:
    what = describe(act)
    program = result.argv[0]
    if result.error_class == "not_found":
        return f"I couldn't {what}: {program} is not installed."
    if result.error_class == "permission":
        return f"I couldn't {what}: I'm not allowed to run {program}."
    if result.error_class == "timeout":
        return f"I stopped trying to {what}: it took longer than {act.timeout_s:g} seconds."
    if result.error_class == "signal":
        return f"I couldn't {what}: {program} was killed (signal {-(result.exit_code or 0)})."
    if result.error_class == "exit_status":
        detail = first_line(result.stderr) or first_line(result.stdout)
        return f"I couldn't {what}: {program} failed (exit {result.exit_code})" + (
            f": {detail}" if detail else "."
        )
    return f"I couldn't {what}: {first_line(result.stderr) or result.error_class}."
