#!/usr/bin/env bash
# Sets up everything mavend needs on a Debian/Ubuntu box, idempotently:
#   system packages -> .venv -> llama-cpp-python (built once, then a cached wheel) -> mavend -> models
# Usage: scripts/setup.sh [run|test]     ("test" adds the test tools and services)
set -euo pipefail

MODE="${1:-run}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VENV="${MAVEND_VENV:-$ROOT/.venv}"
PYTHON="${PYTHON:-python3}"
LLAMA_VERSION="0.3.36"
WHEEL_CACHE="${MAVEND_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mavend/wheels}"

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }

# --- system packages ---------------------------------------------------------
APT_RUN=(libportaudio2 pulseaudio-utils libasound2-plugins)
APT_TEST=(espeak-ng sox dbus dbus-x11 pulseaudio xvfb dunst libnotify-bin systemd dbus-user-session desktop-file-utils mosquitto chromium chromium-driver)
APT_BUILD=(build-essential cmake)
packages=("${APT_RUN[@]}" "${APT_BUILD[@]}")
[ "$MODE" = test ] && packages+=("${APT_TEST[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    say "installing system packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "mavend needs these system packages; run:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

# --- virtual environment -------------------------------------------------------
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "mavend needs Python 3.11 or newer ($PYTHON is $("$PYTHON" --version))" >&2; exit 1; }
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip wheel
fi
PIP=("$VENV/bin/pip" install -q --disable-pip-version-check)

# --- llama-cpp-python: compiled once (minutes), then reused from the wheel cache ---
# run_logged: the build's output goes to a log file, the screen shows a clock.
. "$ROOT/scripts/lib/progress.sh"
if ! "$VENV/bin/python" -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$LLAMA_VERSION')" 2>/dev/null; then
  wheel=$(ls "$WHEEL_CACHE"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2>/dev/null | head -n 1 || true)
  if [ -z "$wheel" ]; then
    LLAMA_LOG="$WHEEL_CACHE/llama-cpp-python-$LLAMA_VERSION-build.log"
    say "building llama-cpp-python $LLAMA_VERSION (portable, once; takes a few minutes)"
    mkdir -p "$WHEEL_CACHE"
    # GGML_NATIVE=OFF: a wheel that runs on any x86-64 with AVX2, not just this CPU.
    # -v: the compiler's own output lands in the log, where a failure can be read.
    run_logged "building llama-cpp-python $LLAMA_VERSION" "$LLAMA_LOG" \
      env CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" \
      "$VENV/bin/pip" wheel -v --no-deps --no-cache-dir -w "$WHEEL_CACHE" "llama-cpp-python==$LLAMA_VERSION" \
      || exit
    wheel=$(ls "$WHEEL_CACHE"/llama_cpp_python-"$LLAMA_VERSION"-*.whl | head -n 1)
  fi
  say "installing $(basename "$wheel")"
  "${PIP[@]}" "$wheel"
fi

# --- mavend itself ---------------------------------------------------------------
say "installing mavend ($MODE)"
if [ "$MODE" = test ]; then
  "${PIP[@]}" -e "$ROOT[dev]"
  # The detector's reference implementation, for one test. --no-deps: its package asks
  # for tflite-runtime, which has no wheel past Python 3.11; the ONNX path needs none.
  "${PIP[@]}" --no-deps "openwakeword==0.6.0"
  # The real Wyoming satellite the satellite tests drive (tests/satellite_kit.py). Its own
  # venv: wyoming-satellite 1.0.0 pins wyoming 1.4.1, mavend needs 1.10. Made once.
  SAT_VENV="${MAVEND_SATELLITE_VENV:-$ROOT/.venv-satellite}"
  if ! "$SAT_VENV/bin/python" -c "import wyoming_satellite" 2>/dev/null; then
    say "installing wyoming-satellite 1.0.0 into $SAT_VENV (for the satellite tests)"
    "$PYTHON" -m venv "$SAT_VENV"
    "$SAT_VENV/bin/pip" install -q --disable-pip-version-check "wyoming-satellite==1.0.0"
  fi
else
  "${PIP[@]}" -e "$ROOT"
fi

# --- models (verified; a second pull downloads nothing) ------------------------------
say "models"
"$VENV/bin/mavend" models pull --profile default
# The tests also measure Whisper base against tiny.en (issue 25): its profile is default's
# models and Whisper base, about 150 MB more.
if [ "$MODE" = test ]; then
  "$VENV/bin/mavend" models pull --profile whisper-base
fi
