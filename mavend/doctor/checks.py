"""The checks `mavend doctor` prints and the household's page shows: each ok, or
failing with its fix.

Each check is honest: it does the real thing (opens the bus, loads the LLM,
writes a file) rather than looking for a sign that it might work.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from mavend.config import Settings
from mavend.doctor.check import Check


def run_checks(settings: Settings, *, llm: bool = True) -> list[Check]:
    """Every check, in order. `llm=False` (the running daemon's page) leaves out loading
    the LLM and timing the speech models: a second copy beside the daemon's would double
    its memory."""
    checks: list[Check] = []
    checks += check_models(settings)
    for check in (check_audio_input, check_session_bus, check_data_dir):
        checks.append(_guarded(check, settings))
    if settings.voices.enabled:
        checks.append(_guarded(check_voices, settings))
    if llm:
        from mavend.doctor.speech import check_speech_model

        checks.append(_guarded(check_speech_model, settings))
        checks.append(_guarded(check_llm, settings))
    else:
        checks.append(Check("llm", True, "not loaded again here: `mavend doctor` checks it"))
    return checks


def _guarded(check: Callable[[Settings], Check], settings: Settings) -> Check:
    try:
        return check(settings)
    except Exception as exc:  # a check that crashes is a failing check, not a crash
        name = check.__name__.removeprefix("check_").replace("_", " ")
        return Check(name, False, f"{type(exc).__name__}: {exc}")


def check_models(settings: Settings) -> list[Check]:
    from mavend.models import status

    profile = settings.models.profile
    try:
        statuses = status(profile, settings.models.models_path())
    except Exception as exc:
        return [Check("models", False, f"{type(exc).__name__}: {exc}")]
    pull = f"mavend models pull --profile {profile}"
    out = []
    for model in statuses:
        if not model.present:
            out.append(Check(f"model {model.name}", False, f"missing at {model.path}", pull))
        elif not model.verified:
            out.append(
                Check(
                    f"model {model.name}",
                    False,
                    "present but not verified",
                    f"mavend models verify --profile {profile} (or {pull})",
                )
            )
        else:
            out.append(
                Check(f"model {model.name}", True, f"verified, {model.size_bytes / 1e6:.1f} MB")
            )
    return out


def check_audio_input(settings: Settings) -> Check:
    try:
        import sounddevice as sd
    except OSError as exc:  # PortAudio itself is missing
        return Check(
            "audio input",
            False,
            f"PortAudio not found ({exc})",
            "sudo apt-get install libportaudio2",
        )
    wanted = settings.audio.device or None
    try:
        device = sd.query_devices(wanted, kind="input")
    except (ValueError, sd.PortAudioError) as exc:
        which = f"device {wanted!r}" if wanted else "default input device"
        return Check(
            "audio input",
            False,
            f"no {which}: {exc}",
            "plug in a microphone, or set [audio] device (see `python -m sounddevice`)",
        )
    return Check(
        "audio input",
        True,
        f"{device['name']} ({device['max_input_channels']} ch, "
        f"{int(device['default_samplerate'])} Hz)",
    )


def check_session_bus(settings: Settings) -> Check:
    if not os.environ.get("DBUS_SESSION_BUS_ADDRESS") and not _default_bus_socket().exists():
        return Check(
            "session bus",
            False,
            "DBUS_SESSION_BUS_ADDRESS is not set",
            "run inside a desktop session, or start one with `dbus-run-session`",
        )
    return asyncio.run(_probe_bus())


def _default_bus_socket() -> Path:
    return Path(os.environ.get("XDG_RUNTIME_DIR", f"/run/user/{os.getuid()}")) / "bus"


async def _probe_bus() -> Check:
    from dbus_next import Message, MessageType
    from dbus_next.aio import MessageBus

    try:
        bus = await asyncio.wait_for(MessageBus().connect(), timeout=3)
    except Exception as exc:
        return Check(
            "session bus",
            False,
            f"cannot connect: {exc}",
            "check DBUS_SESSION_BUS_ADDRESS, or start a session bus",
        )
    # Ask the server itself: an activatable name whose program cannot start
    # (no display) is as good as none.
    message = Message(
        destination="org.freedesktop.Notifications",
        path="/org/freedesktop/Notifications",
        interface="org.freedesktop.Notifications",
        member="GetServerInformation",
    )
    try:
        reply = await asyncio.wait_for(bus.call(message), timeout=5)
    except (TimeoutError, Exception) as exc:
        reply, error = None, f"{type(exc).__name__}: {exc}"
    finally:
        bus.disconnect()
    if reply is not None and reply.message_type == MessageType.METHOD_RETURN:
        name, vendor, version = reply.body[:3]
        return Check(
            "session bus", True, f"connected; notification server {name} {version} ({vendor})"
        )
    detail = reply.body[0] if reply is not None and reply.body else error
    return Check(
        "session bus",
        False,
        f"connected, but no notification server answers ({detail})",
        "install and start one (e.g. dunst, notification-daemon, or your desktop's)",
    )


def check_data_dir(settings: Settings) -> Check:
    directory = settings.storage.data_path()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".doctor-", delete=True) as handle:
            handle.write(b"ok")
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        return Check(
            "data dir",
            False,
            f"{directory} is not writable: {exc}",
            "fix its permissions, or set [storage] data_dir",
        )
    return Check("data dir", True, f"{directory} is writable")


def check_voices(settings: Settings) -> Check:
    """[voices] enabled: who is enrolled. With confirm_from = "enrolled" and nobody
    enrolled, no voice may confirm a destructive act or write memory: a failing check."""
    from mavend.state.store import Store
    from mavend.voices import ENCODER, VoicePrints

    store = Store.open(settings)
    try:
        prints = VoicePrints(store).all()
    finally:
        store.close()
    names = [p.name for p in prints if p.encoder == ENCODER]
    enroll = "mavend voices enroll NAME --audio-file a.wav b.wav c.wav"
    if not names:
        if settings.voices.confirm_from == "enrolled":
            return Check("voices", False, 'confirm_from = "enrolled" and no voice is enrolled: '
                         "no one may confirm a destructive act or write notes", enroll)
        return Check("voices", True, "no voice enrolled yet: every spoken turn is unknown")
    return Check("voices", True, f"{len(names)} enrolled ({', '.join(names)}); "
                 f"confirm_from = {settings.voices.confirm_from!r}")


def check_llm(settings: Settings) -> Check:
    if not settings.router.llm_enabled:
        return Check("llm", True, "disabled in the config (router.llm_enabled = false)")
    if settings.llm.backend == "openai":
        return check_remote_llm(settings)
    from mavend.errors import ModelError
    from mavend.router import model_path
    from mavend.router.llm import LlmRouter

    try:
        path = model_path(settings.router.llm_model, settings.models.models_path())
    except ModelError as exc:
        return Check(
            "llm", False, str(exc), f"mavend models pull --profile {settings.models.profile}"
        )
    from mavend.router.llm import LlmError

    started = time.perf_counter()
    try:
        router = LlmRouter(path, settings.router, settings.acts)
        router.warm_up()
        loaded = time.perf_counter() - started
        route = router.route("what time is it")
    except (LlmError, ValueError, RuntimeError) as exc:
        return Check(
            "llm",
            False,
            f"{path.name}: {type(exc).__name__}: {exc}",
            "check the file with `mavend models verify`; on a slow box raise "
            "[router] llm_timeout_s",
        )
    # Named by the file it loads (and the name inside it): a registry name such as
    # "qwen2.5-0.5b-instruct-q4_k_m" says the family, the file says which model exactly.
    inside = f" ({router.model_name})" if router.model_name else ""
    return Check(
        "llm",
        True,
        f"{path}{inside} loads and warms up in {loaded:.1f} s and answers "
        f"(routed a test question as {route.intent})",
    )


def check_remote_llm(settings: Settings) -> Check:
    """The OpenAI-compatible server: its URL and model, whether /v1/models answered,
    and a routed test question. Never the key."""
    from mavend.errors import MavendError
    from mavend.router.llm import LlmError
    from mavend.router.llm.backend import describe, llm_loader

    what = describe(settings)
    try:
        llm = llm_loader(settings)()
    except MavendError as exc:  # a refused address, an unreadable key, a host that won't resolve
        return Check("llm", False, f"{what}: {exc}", "fix [llm] in the config")
    try:
        models = llm.list_models()  # type: ignore[attr-defined]
        listed = f"/v1/models answered ({', '.join(models) or 'no models listed'})"
    except LlmError as exc:
        listed = f"/v1/models did not answer ({exc})"
    try:
        seconds = llm.warm_up()
        route = llm.route("what time is it")
    except LlmError as exc:
        return Check(
            "llm", False, f"{what}: {listed}; routing failed: {type(exc).__name__}: {exc}",
            "check that the server runs and serves the model; a slow one needs a larger "
            "[router] llm_timeout_s",
        )
    finally:
        llm.close()
    return Check(
        "llm", True,
        f"{what}: {listed}; warms up in {seconds:.1f} s and answers (routed a test "
        f"question as {route.intent} in {route.latency_ms:.0f} ms)",
    )
