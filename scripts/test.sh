#!/usr/bin/env bash
# Runs the whole test suite. The tests start their own private services
# (a dbus-daemon, PulseAudio with a null sink) and stop them afterwards.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${MAVEND_VENV:-$ROOT/.venv}"
cd "$ROOT"
"$VENV/bin/ruff" check mavend wakeword tests bench scripts
exec "$VENV/bin/python" -m pytest "$@"
