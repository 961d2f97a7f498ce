# shellcheck shell=bash
# Long steps of scripts/setup.sh: the output goes to a log file, the screen shows a clock.
# Sourced (not run); tests/test_setup_script.py drives it with fake commands.
#
#   run_logged LABEL LOG COMMAND [ARG...]
#
# Runs COMMAND with stdout and stderr written to LOG (replaced) and shows how long it
# has been running: on a terminal, one line redrawn every second
# ("building llama-cpp-python … 1m 23s"); elsewhere (CI, a pipe, a file) one line every
# $MAVEND_PROGRESS_EVERY seconds (default 30), so logs are not flooded. Then it prints
# the total time. When COMMAND fails it prints, to stderr, the last $MAVEND_LOG_TAIL
# lines (default 30) of LOG and LOG's path, and returns COMMAND's exit status.
#
# COMMAND runs in the foreground, so Ctrl-C reaches it as usual; the clock is a
# background job that is stopped when COMMAND ends, and stops by itself if this shell
# goes away first.

# 42 -> "42s", 83 -> "1m 23s" (the shape `mavend models pull` prints times in, too).
fmt_elapsed() {
  if (($1 < 60)); then printf '%ds' "$1"; else printf '%dm %02ds' $(($1 / 60)) $(($1 % 60)); fi
}

# The clock. It sleeps 1 s at a time (with no file descriptors of ours, so a sleep left
# over after the clock is stopped holds no pipe open) and works out the elapsed time
# from START, so a slow tick never makes the time drift.
_run_logged_clock() {
  local label=$1 start=$2 log=$3 shell=$4 every=${MAVEND_PROGRESS_EVERY:-30}
  local now took next=$every
  while kill -0 "$shell" 2>/dev/null; do
    printf -v now '%(%s)T' -1
    took=$((now - start))
    if [ -t 1 ]; then
      printf '\r\033[K%s … %s' "$label" "$(fmt_elapsed "$took")"
    elif ((took >= next)); then
      printf '%s … %s (log: %s)\n' "$label" "$(fmt_elapsed "$took")" "$log"
      next=$((took - took % every + every))
    fi
    sleep 1 </dev/null >/dev/null 2>&1
  done
}

run_logged() {
  local label=$1 log=$2
  shift 2
  local start now rc=0 clock took
  mkdir -p "$(dirname "$log")"
  printf -v start '%(%s)T' -1
  _run_logged_clock "$label" "$start" "$log" "$$" &
  clock=$!
  # stdin from /dev/null: with the output in a file, a prompt would hang unseen.
  "$@" >"$log" 2>&1 </dev/null || rc=$?
  kill "$clock" 2>/dev/null || true
  wait "$clock" 2>/dev/null || true
  printf -v now '%(%s)T' -1
  took=$(fmt_elapsed $((now - start)))
  if [ -t 1 ]; then printf '\r\033[K'; fi # the clock's line gives way to the result
  if [ "$rc" -eq 0 ]; then
    printf '%s: done in %s (log: %s)\n' "$label" "$took" "$log"
    return 0
  fi
  {
    printf '%s: FAILED after %s (exit %d). The last lines of its log:\n' "$label" "$took" "$rc"
    tail -n "${MAVEND_LOG_TAIL:-30}" "$log" | sed 's/^/    /'
    printf '%s: FAILED; the full log is %s\n' "$label" "$log"
  } >&2
  return "$rc"
}
