"""A private PulseAudio with a null sink as the default source: a virtual microphone.

`paplay -d vsink clip.wav` "speaks" into it; anything recording from the
default input (sounddevice -> PortAudio -> ALSA's pulse plugin) hears it.
Started per test in its own XDG_RUNTIME_DIR, stopped (by its own pid) after.

Use it from a test module with `from tests.pulse import pulse_source  # noqa: F401`.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SINK = "vsink"


@dataclass
class Pulse:
    runtime_dir: Path
    log: Path
    process: subprocess.Popen | None = None

    @property
    def socket(self) -> Path:
        return self.runtime_dir / "pulse" / "native"

    @property
    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "XDG_RUNTIME_DIR": str(self.runtime_dir),
            "PULSE_SERVER": f"unix:{self.socket}",
        }

    def start(self) -> Pulse:
        """Start the server, load the null sink, make its monitor the default source."""
        binary = _need("pulseaudio", "pulseaudio")
        self.runtime_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        log = self.log.open("ab")
        # -n: no default.pa (no hardware probing); only what a virtual mic needs.
        self.process = subprocess.Popen(
            [
                binary, "-n", "--daemonize=no", "--exit-idle-time=-1", "--log-target=stderr",
                "--use-pid-file=no", "--system=no",
                "--load=module-native-protocol-unix auth-anonymous=1",
                f"--load=module-null-sink sink_name={SINK} rate=16000 channels=1",
            ],
            env=self.env,
            stdout=log,
            stderr=log,
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"pulseaudio exited: {self.log.read_text()[-2000:]}")
            if self.socket.exists() and self.pactl("info", check=False).returncode == 0:
                break
            time.sleep(0.1)
        else:
            raise RuntimeError(f"pulseaudio did not start: {self.log.read_text()[-2000:]}")
        self.pactl("set-default-sink", SINK)
        self.pactl("set-default-source", f"{SINK}.monitor")
        return self

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)

    def kill(self) -> None:
        """Vanish abruptly, as an unplugged device or a crashed sound server does."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(5)
            self.process = None

    def pactl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [_need("pactl", "pulseaudio-utils"), *args],
            env=self.env, capture_output=True, text=True, timeout=10, check=check,
        )

    def play(self, wav: Path) -> subprocess.Popen:
        """Start playing `wav` into the virtual microphone (returns at once)."""
        return subprocess.Popen(
            [_need("paplay", "pulseaudio-utils"), "-d", SINK, str(wav)],
            env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )


def _need(program: str, package: str) -> str:
    path = shutil.which(program)
    if path is None:
        pytest.fail(f"{program} is not installed: apt-get install {package} (make test does)")
    return path


@pytest.fixture
def pulse_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Pulse]:
    """A running private PulseAudio whose default source is the null sink's monitor.

    The test process's environment points at it, so PortAudio (re-initialised
    by the microphone source when it opens) finds it as the default device.
    """
    # A short path of its own: a unix socket path must fit in 108 bytes.
    runtime = Path(tempfile.mkdtemp(prefix="mavend-pulse-"))
    pulse = Pulse(runtime_dir=runtime, log=tmp_path / "pulseaudio.log")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(pulse.runtime_dir))
    monkeypatch.setenv("PULSE_SERVER", f"unix:{pulse.socket}")
    try:
        pulse.start()
        yield pulse
    finally:
        pulse.stop()
        shutil.rmtree(runtime, ignore_errors=True)
