"""Wake verifier (issue 25): false accepts per hour and false rejects, with and without
microWakeWord's second check (`[wakeword] verifier = "micro"`, wakeword/verifier.py).

    nice -n 10 .venv/bin/python bench/wake_verifier.py [--piper-voice ONNX] [--quick]
    (Piper: PYTHONPATH=DIR with piper-tts installed there, see bench/wakeword_data.py)

Negatives, built here (our own texts; at least 2 hours unless --quick), one category
per stream, each stream a few minutes long and heard whole:
  speech    many voices: espeak-ng voices with variants at several speeds and pitches,
            Piper joe at 3 speeds (if given), hibari (mavend's voice) at 3 speeds;
  tv        two voices taking turns over synthesized music (chords of harmonic tones
            on a beat, a bass line, drums) 10-20 dB under the speech, a laugh track,
            music-only interludes;
  laughter  voiced "ha ha" runs (espeak, jittered pitch) and noise-shaped laughs;
  replies   mavend's own reply texts (its `Reply(...)` strings without placeholders,
            and replies written here in its manner) spoken by its TTS (hibari);
  near      near misses: "hey travis", "hey marvin", "jarvis" alone, "hey service", ...
Streams rotate through clean, pink noise at 20 and 10 dB SNR, and reverb.

Positives: "hey jarvis" + a command in natural voices (hibari at 3 speeds, Piper joe
at 2) and the 8 espeak-ng voices of bench/wakeword_data.py, clean, in pink noise at
20/10/5/0 dB SNR, and with reverb.

The detector is the deployed one (`WakeModel` + the energy gate + `WakeTrigger` at
[wakeword] threshold 0.5, 2 s refractory). Without the verifier a wake is a trigger;
with it, the trigger fires `CONFIRM_S` after the crossing and counts only if
`MicroVerifier` accepts the last `WINDOW_S` of audio, exactly as `FrontEnd._wake`
does. Other look-aheads, windows and cut-offs are scored beside the chosen ones.
Synthesized audio is cached in /tmp/mavend-bench-audio. The JSON summary is printed
and written to bench/out/wake_verifier.json.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from wakeword_data import (
    NEAR_MISSES,
    ROOT,
    Voice,
    cached,
    condition,
    espeak_voices,
    machine,
    padded,
    piper_voices,
    turn,
)

from tests.audio_fixtures import (
    RATE,
    concat,
    espeak,
    silence,
    trim,
)
from wakeword.detector import (
    FRAME,
    EnergyGate,
    TriggerConfig,
    WakeModel,
    WakeTrigger,
    resolve_wake_model,
)
from wakeword.verifier import CONFIRM_S, WINDOW_S, MicroVerifier

FRAME_S = FRAME / RATE
THRESHOLD = 0.5  # [wakeword] threshold's default
CURVE = (0.5, 0.3, 0.2, 0.1)  # openWakeWord thresholds scored with and without the verifier
LOOKAHEADS = (0.16, 0.24, 0.32)  # seconds after the crossing
WINDOWS = (1.5, 2.0)
CUTOFFS = (0.97, 0.9, 0.8, 0.5)  # 0.97: microWakeWord's own for hey_jarvis
POS_CONDITIONS = ("clean", "snr20", "snr10", "snr5", "snr0", "reverb")
NEG_CONDITIONS = ("clean", "snr20", "snr10", "reverb")
COMMANDS = ("lock the screen", "what time is it", "set a timer for ten minutes",
            "pause the music")
TARGET_MIN = {"speech": 62, "tv": 34, "laughter": 8, "replies": 14, "near": 6}
STREAM_S = 300.0

# ---------------------------------------------------------------------------- texts
# Written for this benchmark: a household talking, not talking to the assistant.
SPEECH = (
    "Did you remember to buy bread on the way home?",
    "The train was late again, twenty minutes this time.",
    "I think the plants on the balcony need more water.",
    "Can you pass me the salt, please?",
    "We should call your sister this weekend.",
    "The printer upstairs is out of paper.",
    "I'm going to take the dog for a walk before it rains.",
    "Who left the door to the garden open?",
    "Let's have pasta tonight, I'm too tired to cook anything else.",
    "My phone keeps losing the signal in the kitchen.",
    "Have you seen my blue scarf anywhere?",
    "The neighbours are having a party on Saturday.",
    "I need to finish this report before Monday morning.",
    "It's colder than yesterday, wear a jacket.",
    "The kids have swimming lessons at four.",
    "Could you check if the oven is still on?",
    "I read an interesting article about bees today.",
    "The car needs new tyres before winter.",
    "We're out of coffee, I'll pick some up tomorrow.",
    "That film was much better than I expected.",
    "Don't forget the dentist on Thursday.",
    "I'll be home late, there's a meeting at six.",
    "The washing machine is making that noise again.",
    "Grandma called, she wants to visit in March.",
    "Where did you put the scissors?",
    "I can't believe how fast this year went by.",
    "Shall we paint the hallway a lighter colour?",
    "The football match starts at eight, if you want to watch it.",
    "There's a parcel for you by the front door.",
    "I'm making tea, do you want a cup?",
    "The bus timetable changed last week.",
    "My back hurts from sitting at the desk all day.",
    "We could go to the lake if the weather holds.",
    "The cat knocked a glass off the table this morning.",
    "Remember when we got lost on the way to the wedding?",
    "I'm thinking of learning to play the guitar.",
    "The heating bill was higher than last month.",
    "Put the leftovers in the fridge, please.",
    "Your brother said he would bring the ladder back.",
    "I don't think that shop opens on Sundays.",
)
SUBJECTS = ("my mother", "the new manager", "our neighbour", "the plumber", "my friend Tom",
            "the teacher", "your cousin", "the doctor", "everyone at work", "the man next door",
            "Sarah", "Daniel", "the children", "the landlord", "my boss", "Anna and Mark")
VERBS = ("said we should move", "wants to repaint", "forgot to close", "is going to fix",
         "asked about", "never liked", "finally sold", "is looking for", "talked for an hour "
         "about", "keeps complaining about", "found a cheaper", "borrowed", "cleaned",
         "was worried about", "bought a second", "laughed at")
OBJECTS = ("the old sofa", "the garage door", "the garden shed", "the broken lamp",
           "the car insurance", "the holiday plans", "the bicycle", "the kitchen table",
           "the heating system", "the birthday present", "the spare keys", "the wooden fence",
           "the electricity meter", "the book club", "the front window", "the roof")
TAILS = ("last week.", "this morning.", "again yesterday.", "before the summer.", "on Friday.",
         "without telling anyone.", "after lunch.", "for the third time.", "at the weekend.",
         "in the rain.", "just before midnight.", "right after the holidays.")
DIALOGUE = (
    "Where were you last night?", "I told you, I was at the office.",
    "The office was closed, Michael.", "Then I must have been somewhere else.",
    "You can't keep running from this.", "Watch me.",
    "Detective, we found something in the basement.", "Show me.",
    "Is it true what they're saying about the mayor?", "Every word of it.",
    "We have to leave before the storm hits.", "The bridge is already flooded.",
    "Then we take the mountain road.", "Nobody has used that road in years.",
    "Welcome back to the show, tonight we have a very special guest.",
    "Thank you, it's great to be here.", "Tell us about your new book.",
    "Well, it started as a story I told my daughter.",
    "And the winner of this year's award is...", "I can't believe it, thank you all so much!",
    "Captain, the engines are failing.", "Divert all power to the shields.",
    "In other news, the city council approved the new park.",
    "Residents have waited almost ten years for it.",
    "Tomorrow will be cloudy with a chance of showers in the north.",
    "Are you sure this is the right house?", "The address matches the letter.",
    "Somebody has been here recently, the kettle is still warm.",
    "I don't trust him.", "You don't trust anyone.", "That's why I'm still alive.",
    "Honey, I'm home!", "In the kitchen! Dinner is almost ready.",
    "Something smells wonderful.", "It's your mother's recipe.",
    "Stay right where you are.", "Put the bag down slowly.",
    "You've got the wrong man.", "Then explain the photographs.",
    "Coming up after the break: the best holiday destinations for families.",
    "Let's go over to our reporter at the stadium.",
    "The crowd is on its feet, what a goal!", "He's done it again in the final minute!",
    "Ladies and gentlemen, please take your seats.",
    "I've been waiting for this moment my whole life.", "Then don't waste it.",
    "Why didn't you tell me earlier?", "Because you would have tried to stop me.",
)
REPLIES_OWN = (
    "It's twenty past seven on Wednesday.", "Timer set for fifteen minutes.",
    "The living room light is off.", "I've added milk and eggs to the shopping list.",
    "Your next reminder is at six: take out the recycling.",
    "Noted: the spare key is in the blue pot.",
    "The heating is set to twenty degrees.", "Music paused.", "Volume set to forty percent.",
    "You have two timers running; the pasta timer has three minutes left.",
    "Tomorrow you have the dentist at nine thirty.", "Paris is the capital of France.",
    "Ten kilometres is about six point two miles.", "It's two in the afternoon in Tokyo now.",
    "You last watered the plants on Sunday.", "Done. The screen is locked.",
    "OK, I'll remind you to call the bank at four.", "The shopping list has five items.",
    "Sorry, I didn't catch that.", "The kitchen and hallway lights are on.",
)
LAUGHS = ("ha ha ha", "ha ha ha ha ha", "hahaha", "he he he he", "ho ho ho", "ha ha, ha ha ha",
          "hah hah hah hah")
NEAR = tuple(dict.fromkeys((*NEAR_MISSES, "jarvis", "hey service", "hey travis", "hey marvin",
                            "harvest", "jar of honey", "hey, nervous?",
                            "hey harvey, come here", "hey jar")))


def project_replies() -> list[str]:
    """mavend's own reply texts: string constants passed to `Reply(...)` in mavend/ (no
    placeholders), of two words or more, and not naming the wake word."""
    out: set[str] = set()
    for path in sorted((ROOT / "mavend").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Reply"
                    and node.args and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                text = node.args[0].value
                if len(text.split()) >= 2 and "jarvis" not in text.lower():
                    out.add(text)
    return sorted(out)


def generated_sentences(rng: random.Random, count: int) -> list[str]:
    return [f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
            f"{rng.choice(TAILS)}" for _ in range(count)]


# ---------------------------------------------------------------------------- voices
ESPEAK_BASES = ("en-us", "en-gb", "en-gb-scotland", "en-029", "en-us-nyc", "en-gb-x-rp",
                "en-gb-x-gbclan", "en-gb-x-gbcwmd")
ESPEAK_VARIANTS = ("", "+m1", "+m2", "+m3", "+m4", "+m5", "+m6", "+m7", "+f1", "+f2", "+f3",
                   "+f4", "+f5", "+croak", "+klatt", "+Annie", "+Andy", "+grandma", "+grandpa",
                   "+Alicia", "+Gene", "+Lee", "+Mr_Serious", "+michel")


def espeak_crowd(rng: random.Random, count: int) -> list[Voice]:
    """`count` espeak-ng speakers: accent x variant x speed x pitch, all different."""
    seen, out = set(), []
    while len(out) < count:
        base, var = rng.choice(ESPEAK_BASES), rng.choice(ESPEAK_VARIANTS)
        wpm, pitch = rng.choice((120, 140, 160, 175, 190, 210)), rng.choice((30, 40, 50, 60, 70))
        key = (base, var, wpm, pitch)
        if key in seen:
            continue
        seen.add(key)
        out.append(Voice(f"espeak:{base}{var}@{wpm}p{pitch}",
                         lambda t, v=base + var, s=wpm, p=pitch: trim(espeak(t, v, s, p))))
    return out


def hibari_voices(speeds: Sequence[float]) -> list[Voice]:
    """mavend's own voice (hibari "heart", the registry's file) at several speeds."""
    from hibari import Hibari

    from mavend.models import require
    from wakeword.audio import resample

    tts = Hibari(model=str(require("hibari-heart")), threads=1)

    def speak(text: str, speed: float) -> np.ndarray:
        audio = np.asarray(tts(text, speed=speed, seed=0), dtype=np.float32)
        pcm = np.clip(np.round(np.clip(audio, -1, 1) * 32767), -32768, 32767).astype(np.int16)
        return trim(resample(pcm, int(tts.sample_rate), RATE))

    return [Voice(f"hibari@{s}", lambda t, s=s: speak(t, s)) for s in speeds]


def say(voice: Voice, text: str) -> np.ndarray:
    return cached(f"wv|{voice.name}|{text}", lambda: voice.speak(text))


# ---------------------------------------------------------------------------- sounds
def music(seconds: float, seed: int) -> np.ndarray:
    """A music bed at unit RMS (float64): a chord progression of harmonic tones struck on
    the beat with decaying envelopes, a bass line, a kick and a hi-hat."""
    rng = np.random.default_rng(seed)
    n = round(seconds * RATE)
    t = np.arange(n) / RATE
    out = np.zeros(n)
    bpm = rng.choice((84, 96, 108, 120, 132))
    beat = 60.0 / bpm
    key = 220.0 * 2 ** (rng.integers(-5, 5) / 12)
    progression = ((0, 4, 7), (7, 11, 14), (9, 12, 16), (5, 9, 12))  # I V vi IV
    beats = int(seconds / beat) + 1
    for b in range(beats):
        start = round(b * beat * RATE)
        if start >= n:
            break
        length = min(n - start, round(beat * RATE * 2))
        tt = t[:length]
        chord = progression[(b // 4) % 4]
        env = np.exp(-tt * (2.5 if b % 2 else 1.5))
        tone = np.zeros(length)
        for semis in chord:
            f = key * 2 ** (semis / 12)
            for h, amp in ((1, 1.0), (2, 0.5), (3, 0.3), (4, 0.15), (5, 0.08)):
                if f * h < RATE / 2:
                    tone += amp * np.sin(2 * np.pi * f * h * tt + rng.uniform(0, 6.28))
        bass_f = key / 2 * 2 ** (chord[0] / 12)
        tone += 1.2 * np.sin(2 * np.pi * bass_f * tt) * np.exp(-tt * 3)
        out[start : start + length] += tone * env
        kick_len = min(length, 2400)
        if b % 2 == 0:
            kt = tt[:kick_len]
            out[start : start + kick_len] += 2.0 * np.sin(
                2 * np.pi * (50 + 80 * np.exp(-kt * 30)) * kt) * np.exp(-kt * 20)
        hat = start + round(beat * RATE / 2)
        if hat + 800 < n:
            burst = rng.standard_normal(800) * np.exp(-np.arange(800) / 150)
            out[hat : hat + 800] += 0.4 * np.diff(np.concatenate([[0], burst]))
    return out / (np.sqrt(np.mean(out**2)) or 1.0)


def noise_laugh(rng: random.Random) -> np.ndarray:
    """A noise-shaped laugh: 3-8 breathy voiced bursts at ~5 per second, falling pitch."""
    bursts = rng.randint(3, 8)
    f0 = rng.uniform(180, 380)
    parts = []
    for k in range(bursts):
        dur = rng.uniform(0.1, 0.18)
        m = round(dur * RATE)
        tt = np.arange(m) / RATE
        f = f0 * (1 - 0.04 * k) * (1 + 0.05 * np.sin(2 * np.pi * rng.uniform(4, 9) * tt))
        phase = 2 * np.pi * np.cumsum(f) / RATE
        voiced = sum(np.sin(h * phase) / h for h in range(1, 12))
        breath = np.random.default_rng(rng.randrange(1 << 30)).standard_normal(m) * 0.6
        env = np.sin(np.pi * tt / dur) ** 2
        parts.append((voiced + breath) * env)
        parts.append(np.zeros(round(rng.uniform(0.05, 0.12) * RATE)))
    audio = np.concatenate(parts)
    return np.clip(audio / np.max(np.abs(audio)) * rng.uniform(6000, 14000), -32768,
                   32767).astype(np.int16)


def voiced_laugh(rng: random.Random, voices: list[Voice]) -> np.ndarray:
    voice = rng.choice(voices)
    text = rng.choice(LAUGHS)
    base = voice.name.split(":")[1].split("@")[0] if voice.name.startswith("espeak") else "en-us"
    pitch = rng.choice((55, 65, 75, 85, 95))
    speed = rng.choice((220, 260, 300))
    return cached(f"wv|laugh|{base}|{text}|{pitch}|{speed}",
                  lambda: trim(espeak(text, base, speed, pitch)))


def mix_under(speech: np.ndarray, bed: np.ndarray, under_db: float) -> np.ndarray:
    """`bed` (unit RMS) under `speech`, `under_db` below the speech's voiced level."""
    s = speech.astype(np.float64)
    voiced = s[np.abs(s) > 200]
    level = np.sqrt(np.mean(voiced**2)) if len(voiced) else 3000.0
    out = s + bed[: len(s)] * level / 10 ** (under_db / 20)
    return np.clip(np.round(out), -32768, 32767).astype(np.int16)


# ---------------------------------------------------------------------------- streams
@dataclass
class Stream:
    category: str
    name: str
    condition: str
    segments: list[np.ndarray] = field(default_factory=list)
    room: list[Voice] = field(default_factory=list)
    spans: list[tuple[int, int, str]] = field(default_factory=list)  # near misses: samples

    @property
    def seconds(self) -> float:
        return sum(len(s) for s in self.segments) / RATE


def gap(rng: random.Random, lo: float = 0.3, hi: float = 1.2) -> np.ndarray:
    return silence(rng.uniform(lo, hi))


def build_negatives(rng: random.Random, natural: list[Voice], scale: float) -> list[Stream]:
    crowd = espeak_crowd(rng, 120)
    speakers = crowd + natural
    texts = list(SPEECH) + generated_sentences(rng, 400)
    replies = project_replies() + list(REPLIES_OWN)
    hibari = [v for v in natural if v.name.startswith("hibari")]
    streams: list[Stream] = []
    conds = iter(NEG_CONDITIONS * 1000)

    def new(category: str) -> Stream:
        stream = Stream(category, f"{category}{sum(s.category == category for s in streams)}",
                        next(conds))
        streams.append(stream)
        return stream

    def fill(category: str, add: Callable[[Stream], None]) -> None:
        target = TARGET_MIN[category] * 60 * scale
        total = 0.0
        while total < target:
            stream = new(category)
            while stream.seconds < min(STREAM_S, target - total):
                add(stream)
            total += stream.seconds

    def speech(stream: Stream) -> None:  # a room of 3-4 people, one after another
        if not stream.room:
            stream.room = rng.sample(speakers, 4)
        stream.segments += [say(rng.choice(stream.room), rng.choice(texts)), gap(rng)]

    def tv(stream: Stream) -> None:  # a scene: two voices over a music bed, laughs
        a, b = rng.sample(speakers, 2)
        lines = [say((a, b)[k % 2], rng.choice(DIALOGUE)) for k in range(rng.randint(4, 10))]
        parts = []
        for line in lines:
            parts += [line, gap(rng, 0.15, 0.6)]
            if rng.random() < 0.2:
                parts += [noise_laugh(rng), gap(rng, 0.1, 0.3)]
        scene = concat(*parts)
        bed = music(len(scene) / RATE + 1, rng.randrange(1 << 30))
        stream.segments.append(mix_under(scene, bed, rng.uniform(10, 20)))
        interlude = bed[: round(rng.uniform(3, 8) * RATE)] * 3000 * rng.uniform(0.5, 1.5)
        stream.segments.append(np.clip(interlude, -32768, 32767).astype(np.int16))

    def laughter(stream: Stream) -> None:
        k = rng.random()
        if k < 0.45:
            stream.segments.append(voiced_laugh(rng, crowd))
        elif k < 0.9:
            stream.segments.append(noise_laugh(rng))
        else:
            stream.segments.append(say(rng.choice(speakers), rng.choice(
                ("That's so funny!", "Stop it, I can't breathe!", "Oh my goodness.",
                 "You should have seen his face!"))))
        stream.segments.append(gap(rng, 0.1, 0.8))

    def reply(stream: Stream) -> None:
        stream.segments += [say(rng.choice(hibari), rng.choice(replies)), gap(rng, 0.6, 2.0)]

    def near(stream: Stream) -> None:
        phrase = rng.choice(NEAR)
        voice = rng.choice(speakers)
        clip = say(voice, phrase)
        if rng.random() < 0.5:
            clip = concat(clip, silence(0.2), say(voice, rng.choice(COMMANDS)))
        start = RATE + sum(len(s) for s in stream.segments)  # after render()'s 1 s lead
        stream.spans.append((start, start + len(clip), phrase))
        stream.segments += [clip, gap(rng, 0.8, 1.6)]

    fill("speech", speech)
    fill("tv", tv)
    fill("laughter", laughter)
    if hibari:
        fill("replies", reply)
    fill("near", near)
    return streams


def render(stream: Stream, seed: int) -> np.ndarray:
    audio = concat(silence(1.0), *stream.segments, silence(1.0))
    return condition(audio, stream.condition, seed)


# ---------------------------------------------------------------------------- scoring
def oww_scores(model: WakeModel, samples: np.ndarray) -> np.ndarray:
    model.reset()
    return np.array([model.score(samples[i : i + FRAME])
                     for i in range(0, len(samples) - FRAME + 1, FRAME)])


def fires(scores: np.ndarray, threshold: float, confirm_s: float = 0.0) -> list[int]:
    """Frames at which the deployed trigger fires (with `confirm_s`: the delayed frame)."""
    trigger = WakeTrigger(TriggerConfig(threshold=threshold, refractory_s=2.0,
                                        confirm_s=confirm_s))
    return [i for i, s in enumerate(scores) if trigger.update(float(s), (i + 1) * FRAME_S)]


class Checks:
    """Verifier scores of windows of one stream, for every look-ahead and window, cached."""

    def __init__(self, verifier: MicroVerifier, samples: np.ndarray, timings: list[float]):
        self.verifier, self.samples, self.timings = verifier, samples, timings
        self._cache: dict[tuple[int, float], float] = {}

    def score(self, end_frame: int, window_s: float) -> float:
        key = (end_frame, window_s)
        if key not in self._cache:
            end = (end_frame + 1) * FRAME
            clip = self.samples[max(0, end - round(window_s * RATE)) : end]
            started = time.perf_counter()
            self.verifier.window_s = window_s
            self._cache[key] = self.verifier.score(clip)
            if window_s == WINDOW_S:
                self.timings.append((time.perf_counter() - started) * 1000)
        return self._cache[key]


def outcomes(scores: np.ndarray, checks: Checks, threshold: float) -> dict[str, int]:
    """Wakes of one stream: without the verifier, and with it for every setting."""
    out = {"none": len(fires(scores, threshold))}
    for look in LOOKAHEADS:
        frames = fires(scores, threshold, look)
        for window in WINDOWS:
            values = [checks.score(f, window) for f in frames]
            for cutoff in CUTOFFS:
                out[f"L{look}|W{window}|C{cutoff}"] = sum(v > cutoff for v in values)
    return out


def chosen_key() -> str:
    return f"L{CONFIRM_S}|W{WINDOW_S}|C0.97"


def rate(count: int, total: int) -> str:
    return f"{100 * count / total:.1f} % ({count}/{total})" if total else "-"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--piper-voice", type=Path, help="Piper's en_US-joe-medium.onnx")
    parser.add_argument("--quick", action="store_true", help="a small subset, for a smoke run")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "wake_verifier.json")
    args = parser.parse_args(argv)
    started = time.time()
    rng = random.Random(25)
    scale = 0.04 if args.quick else 1.0

    piper = piper_voices(args.piper_voice)
    natural = hibari_voices((0.85, 1.0, 1.15)) + piper
    files = resolve_wake_model("hey_jarvis")
    model = WakeModel(files, gate=EnergyGate())
    verifier = MicroVerifier.from_models()
    timings: list[float] = []
    print(f"# wake verifier benchmark; machine: {machine()}", flush=True)

    # positives -------------------------------------------------------------------------
    pos_voices = [v for v in natural if not v.name.startswith("piper") or
                  v.name.endswith(("@1.0", "@1.2"))] + espeak_voices()
    commands = COMMANDS[:2] if args.quick else COMMANDS
    if args.quick:
        pos_voices = pos_voices[:1] + pos_voices[-2:]
    pos = []  # (family, voice, condition, outcome at threshold 0.5)
    for vi, voice in enumerate(pos_voices):
        family = "espeak" if voice.name.startswith("espeak") else "natural"
        for ci, cond in enumerate(POS_CONDITIONS):
            for k, command in enumerate(commands):
                seed = vi * 1000 + ci * 10 + k
                clip = cached(f"wv|pos|{voice.name}|{cond}|{command}",
                              lambda v=voice, c=command, d=cond, s=seed:
                              condition(padded(turn(v, c)), d, s))
                scores = oww_scores(model, clip)
                checks = Checks(verifier, clip, timings)
                pos.append((family, voice.name, cond,
                            {th: outcomes(scores, checks, th) for th in CURVE}))
    print(f"# positives: {len(pos)} clips ({time.time() - started:.0f} s)", flush=True)

    # negatives -------------------------------------------------------------------------
    streams = build_negatives(rng, natural, scale)
    neg = []  # (category, condition, seconds, {threshold: outcome})
    near_phrases: dict[str, dict[str, int]] = {}  # near miss -> said, accepted without/with
    for n, stream in enumerate(streams):
        recipe = hashlib.sha1(b"".join(s.tobytes() for s in stream.segments)).hexdigest()
        audio = cached(f"wv2|neg|{stream.name}|{stream.condition}|{recipe}",
                       lambda s=stream, n=n: render(s, 5000 + n))
        scores = oww_scores(model, audio)
        checks = Checks(verifier, audio, timings)
        for a, b, phrase in stream.spans:
            row = near_phrases.setdefault(phrase, {"said": 0, "none": 0, "verifier": 0})
            row["said"] += 1
            for key, frames in (("none", fires(scores, THRESHOLD)), ("verifier", [
                    f for f in fires(scores, THRESHOLD, CONFIRM_S)
                    if checks.score(f, WINDOW_S) > verifier.cutoff])):
                row[key] += sum(a <= (f + 1) * FRAME < b + RATE for f in frames)
        neg.append((stream.category, stream.condition, len(audio) / RATE,
                    {th: outcomes(scores, checks, th) for th in CURVE}))
        print(f"#   {stream.name} ({stream.condition}): {len(audio) / 60 / RATE:.1f} min, "
              f"max score {scores.max():.2f}, wakes {neg[-1][3][THRESHOLD]['none']} / "
              f"verified {neg[-1][3][THRESHOLD][chosen_key()]} "
              f"({time.time() - started:.0f} s)", flush=True)
    hours = sum(s for _, _, s, _ in neg) / 3600

    # report ----------------------------------------------------------------------------
    keys = ["none"] + [k for k in neg[0][3][THRESHOLD] if k != "none"]
    summary: dict = {
        "machine": machine(),
        "settings": {"threshold": THRESHOLD, "refractory_s": 2.0, "energy_gate": True,
                     "confirm_s": CONFIRM_S, "window_s": WINDOW_S,
                     "cutoff": verifier.cutoff, "sliding_window": verifier.sliding_window},
        "negatives": {"hours": round(hours, 3), "streams": len(neg),
                      "by_category_min": {}},
        "positives": {"clips": len(pos), "voices": [v.name for v in pos_voices]},
    }
    for cat in TARGET_MIN:
        summary["negatives"]["by_category_min"][cat] = round(
            sum(s for c, _, s, _ in neg if c == cat) / 60, 1)

    def fa(th: float, key: str, cats=None) -> tuple[int, float]:
        rows = [r for r in neg if cats is None or r[0] in cats]
        h = sum(r[2] for r in rows) / 3600
        count = sum(r[3][th][key] for r in rows)
        return count, h

    def fr(th: float, key: str, rows) -> tuple[int, int]:
        return sum(1 for r in rows if r[3][th][key] == 0), len(rows)

    chosen = chosen_key()
    table = {}
    for th in CURVE:
        for key in ("none", chosen):
            count, h = fa(th, key)
            not_near, h_nn = fa(th, key, [c for c in TARGET_MIN if c != "near"])
            missed_nat = fr(th, key, [p for p in pos if p[0] == "natural"])
            missed_all = fr(th, key, pos)
            table[f"{th}|{'verifier' if key != 'none' else 'none'}"] = {
                "false_accepts": count, "fa_per_hour": round(count / h, 3),
                "false_accepts_without_near_misses": not_near,
                "fa_per_hour_without_near_misses": round(not_near / h_nn, 3),
                "frr_natural": f"{missed_nat[0]}/{missed_nat[1]}",
                "frr_all": f"{missed_all[0]}/{missed_all[1]}",
            }
    summary["curve"] = table
    by_cat = {}
    for cat in TARGET_MIN:
        for key in ("none", chosen):
            count, h = fa(THRESHOLD, key, [cat])
            by_cat[f"{cat}|{'verifier' if key != 'none' else 'none'}"] = {
                "false_accepts": count, "hours": round(h, 3),
                "fa_per_hour": round(count / h, 3) if h else None}
    summary["false_accepts_by_category"] = by_cat
    summary["near_misses_by_phrase_at_0.5"] = dict(sorted(near_phrases.items()))
    frr = {}
    for family in ("natural", "espeak"):
        for cond in POS_CONDITIONS:
            rows = [p for p in pos if p[0] == family and p[2] == cond]
            a, n = fr(THRESHOLD, "none", rows)
            b, _ = fr(THRESHOLD, chosen, rows)
            frr[f"{family}|{cond}"] = {"none": f"{a}/{n}", "verifier": f"{b}/{n}"}
    by_voice = {}
    for voice in pos_voices:
        rows = [p for p in pos if p[1] == voice.name]
        a, n = fr(THRESHOLD, "none", rows)
        b, _ = fr(THRESHOLD, chosen, rows)
        by_voice[voice.name] = {"none": f"{a}/{n}", "verifier": f"{b}/{n}"}
    summary["false_rejects_by_condition"] = frr
    summary["false_rejects_by_voice"] = by_voice
    sweep = {}
    for key in keys[1:]:
        count, _ = fa(THRESHOLD, key)
        nat = fr(THRESHOLD, key, [p for p in pos if p[0] == "natural"])
        allp = fr(THRESHOLD, key, pos)
        sweep[key] = {"false_accepts": count, "frr_natural": f"{nat[0]}/{nat[1]}",
                      "frr_all": f"{allp[0]}/{allp[1]}"}
    summary["settings_sweep_at_0.5"] = sweep
    t = np.array(timings) if timings else np.zeros(1)
    summary["verification_ms"] = {"count": len(timings), "p50": round(float(np.median(t)), 2),
                                  "p95": round(float(np.percentile(t, 95)), 2),
                                  "max": round(float(t.max()), 2)}
    summary["took_s"] = round(time.time() - started)
    text = json.dumps(summary, indent=1)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text + "\n")

    # a readable digest -----------------------------------------------------------------
    print()
    print(f"## {hours:.2f} h of negatives, {len(pos)} positives")
    print("| openWakeWord threshold | verifier | false accepts / h (count) | without near misses "
          "| FRR natural | FRR all |")
    print("|---|---|---|---|---|---|")
    for name, row in table.items():
        th, which = name.split("|")
        print(f"| {th} | {which} | {row['fa_per_hour']} ({row['false_accepts']}) | "
              f"{row['fa_per_hour_without_near_misses']} "
              f"({row['false_accepts_without_near_misses']}) | {row['frr_natural']} | "
              f"{row['frr_all']} |")
    print()
    print("| positives | none | verifier |")
    print("|---|---|---|")
    for name, row in frr.items():
        print(f"| {name} | {row['none']} | {row['verifier']} |")
    print()
    for name, row in by_cat.items():
        print(f"{name}: {row['false_accepts']} in {row['hours']} h")
    print()
    print("| near miss | said | accepted, no verifier | accepted, verifier |")
    print("|---|---|---|---|")
    for phrase, row in sorted(near_phrases.items()):
        print(f"| {phrase} | {row['said']} | {row['none']} | {row['verifier']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
