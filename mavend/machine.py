"""What machine a measurement ran on: printed by every benchmark and eval."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown cpu"


def describe_machine(*, load: bool = False) -> str:
    text = f"{cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    if load:
        one, five, fifteen = os.getloadavg()
        text += f"; load average at start {one:.2f} {five:.2f} {fifteen:.2f}"
    return text
