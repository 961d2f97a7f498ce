"""Speech-to-text with faster-whisper, the hallucination guard, and wake-phrase stripping.

Two ways to run the same model:

* ``full``: faster-whisper's `transcribe` as documented: the audio is padded to
  Whisper's 30 s window, `vad_filter` and `hotwords` apply, and the lazy
  segments are iterated here, in the calling (worker) thread.
* ``fit``: the encoder sees only the utterance (plus a short silence pad)
  instead of 30 s, cut by the front end's own VAD (which is what `vad_filter`
  does in ``full`` mode). CTranslate2 accepts the shorter input; for a 3 s command the
  encoder's cost drops about tenfold (bench/wakeword_stt.py: 35 ms instead of
  330 ms per command on the 2-core box, the same accuracy), which is what
  makes a ~400 ms end of speech -> decision possible. The decoding prompt is
  built by faster-whisper itself (same hotwords, same suppressed tokens).
  `bench/wakeword_stt.py` compares the two; see BENCHMARKS.md.
"""

from __future__ import annotations

import logging
import math
import re
import time
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from mavend.config import SttSettings
from wakeword.audio import RATE, to_float32
from wakeword.restarts import carries_meaning, collapse_restart

log = logging.getLogger(__name__)

EncoderWindow = Literal["full", "fit"]
DEFAULT_WINDOW: EncoderWindow = "fit"
# Silence appended after the utterance in `fit` mode: Whisper was trained on
# padded windows and ends a transcript more cleanly with silence after it. Too
# little, and it starts the command over ("What time is it? what time is it");
# `wakeword.restarts` collapses that. bench/wakeword_stt.py --fit-min-s 3,6,10:
# 6 s routed more clean commands right (55 vs 46 % without the wake phrase, with
# the collapse), but made "lock the screen" under 10 dB of noise come out wrong in
# 3 of 8 runs of tests/test_wakeword_models.py (0 of 4 at 3 s): kept at 3 s until
# the trade is measured on noisy speech.
FIT_PAD_S = 0.5
FIT_MIN_S = 3.0
MAX_HINT_WORDS = 40  # the prompt shares Whisper's 448-token budget
# In `fit` mode the decoder sometimes starts the utterance over ("next track hey
# jarvis next track"); a mild repetition penalty stops it (bench: stage-0
# commands routed right went from 31/54 to 34/54, and WER from 27 to 17 %).
REPETITION_PENALTY = 1.2
MAX_NEW_TOKENS = 160  # a 12 s command is ~40 words
# Nobody speaks more than ~4 words (5-6 tokens) a second: a longer output is a
# decoding loop, cut short here (and dropped by the guard's compression check).
TOKENS_PER_S = 8


@dataclass(frozen=True)
class SttResult:
    text: str
    avg_logprob: float
    no_speech_prob: float
    compression_ratio: float
    audio_s: float
    compute_ms: float
    language: str = ""  # the language it was heard in, when chosen among `languages`

    @property
    def confidence(self) -> float:
        """exp(mean token log-prob), discounted by Whisper's no-speech probability."""
        return max(0.0, min(1.0, math.exp(self.avg_logprob) * (1.0 - self.no_speech_prob)))

    def to_json(self) -> dict[str, float | str]:
        out: dict[str, float | str] = {
            "avg_logprob": round(self.avg_logprob, 4),
            "no_speech_prob": round(self.no_speech_prob, 4),
            "compression_ratio": round(self.compression_ratio, 3),
            "audio_s": round(self.audio_s, 3),
            "compute_ms": round(self.compute_ms, 1),
        }
        if self.language:
            out["language"] = self.language
        return out


def compression_ratio(text: str) -> float:
    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data)) if data else 0.0


def hotwords_for(
    vocabulary: Iterable[str],
    wake_words: Iterable[str] = (),
    count_tokens: Callable[[str], int] | None = None,
) -> str:
    """The hint text: the wake phrase, then the grammar's *rare* words.

    Measured (bench/wakeword_stt.py): the whole grammar vocabulary as hotwords
    makes tiny.en worse (it starts reciting the list); the words Whisper's
    tokenizer cannot spell as a single token ("unpause", "nevermind") are the
    ones it misspells, and offering only those helps. Without `count_tokens`
    every word longer than two letters is kept.
    """
    phrases = [" ".join(w.split()) for w in wake_words if w.strip()]
    # "jarvis" adds nothing once "hey jarvis" is there.
    wake = [w for w in dict.fromkeys(phrases) if not any(w != o and w in o for o in phrases)]
    words = sorted({w for w in vocabulary if len(w) > 2})
    if count_tokens is not None:
        words = [w for w in words if count_tokens(" " + w) > 1]
    return ", ".join([*(w.title() for w in wake), *words[:MAX_HINT_WORDS]])


class SpeechToText:
    """faster-whisper on the CPU. Not thread-safe: one worker thread owns it."""

    def __init__(
        self,
        model_dir: Path,
        *,
        language: str = "en",
        languages: Iterable[str] = (),
        beam_size: int = 1,
        threads: int = 2,
        compute_type: str = "int8",
        vad_filter: bool = True,
        wake_words: Iterable[str] = (),
        vocabulary: Iterable[str] = (),
        hotwords: str | None = None,
        window: EncoderWindow = DEFAULT_WINDOW,
        fit_min_s: float = FIT_MIN_S,
    ):
        """`hotwords` (if given) replaces the hint built from `wake_words` + `vocabulary`.
        `fit_min_s`: in the `fit` window, audio shorter than this is padded to it.
        `languages`: two or more (a multilingual model only): each utterance is heard in
        the one of them Whisper finds likeliest, never in a language outside them."""
        from faster_whisper import WhisperModel

        chosen = tuple(dict.fromkeys(languages))
        self.model_dir = model_dir
        self.language = chosen[0] if len(chosen) == 1 else language  # one: that one
        self.languages = chosen if len(chosen) > 1 else ()
        self.beam_size = beam_size
        self.vad_filter = vad_filter
        self.window = window
        self._model = WhisperModel(
            str(model_dir), device="cpu", compute_type=compute_type, cpu_threads=threads
        )
        if self.languages and not self._model.model.is_multilingual:
            from mavend.errors import ConfigError

            raise ConfigError(
                f"[stt] languages = {list(self.languages)} needs a multilingual model;"
                f" {model_dir.name} hears English only (use whisper-base)"
            )
        if hotwords is None:
            tokenizer = self._model.hf_tokenizer
            hotwords = hotwords_for(
                vocabulary,
                wake_words,
                lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids),
            )
        self.hotwords = hotwords or None
        self._fit: _FitDecoder | None = None
        if window == "fit":
            self._fit = _FitDecoder(
                self._model, self.languages or (self.language,), beam_size, self.hotwords,
                fit_min_s,
            )

    @classmethod
    def from_settings(
        cls,
        settings: SttSettings,
        models_dir: Path | None = None,
        *,
        wake_words: Iterable[str] = (),
        vocabulary: Iterable[str] = (),
        hotwords: str | None = None,
        window: EncoderWindow = DEFAULT_WINDOW,
        fit_min_s: float = FIT_MIN_S,
    ) -> SpeechToText:
        return cls(
            stt_model_dir(settings.model, models_dir),
            language=settings.language,
            languages=settings.languages,
            beam_size=settings.beam_size,
            threads=settings.threads,
            compute_type=settings.compute_type,
            vad_filter=settings.vad_filter,
            wake_words=wake_words,
            vocabulary=vocabulary if settings.grammar_hotwords else (),
            hotwords=hotwords,
            window=window,
            fit_min_s=fit_min_s,
        )

    def transcribe(self, samples: np.ndarray) -> SttResult:
        """Transcribe 16 kHz int16 audio. Blocks: call it from a worker thread."""
        started = time.perf_counter()
        audio = to_float32(samples)
        if self._fit is not None:
            text, logprob, no_speech, language = self._fit.decode(audio)
        else:
            language = self._heard_language(audio) if self.languages else self.language
            text, logprob, no_speech = self._full(audio, language)
        said = collapse_restart(text)
        if said != text:
            log.debug("Whisper started over: %r -> %r", text, said)
        return SttResult(
            text=said,
            avg_logprob=logprob,
            no_speech_prob=no_speech,
            # Of the text kept: a command Whisper looped on ("volume up volume up ...")
            # is still the command; a loop that is not a start-over stays a loop.
            compression_ratio=compression_ratio(said),
            audio_s=len(samples) / RATE,
            compute_ms=(time.perf_counter() - started) * 1000.0,
            language=language if self.languages else "",
        )

    def _heard_language(self, audio: np.ndarray) -> str:
        # The full window encodes twice here (once to tell the language, once in
        # `transcribe`): faster-whisper cannot be held to a set of languages. The default
        # `fit` window looks once, at the encoding it decodes.
        _best, _p, probs = self._model.detect_language(audio)
        return likeliest(probs, self.languages)

    def _full(self, audio: np.ndarray, language: str) -> tuple[str, float, float]:
        segments, _info = self._model.transcribe(
            audio,
            language=language,
            beam_size=self.beam_size,
            vad_filter=self.vad_filter,
            hotwords=self.hotwords,
            condition_on_previous_text=False,
            without_timestamps=True,
            temperature=0.0,
        )
        # The segments are a lazy generator: the decoding happens here, while
        # iterating, in this (worker) thread.
        texts, logprobs, no_speech, weights = [], [], [], []
        for segment in segments:
            texts.append(segment.text.strip())
            weight = max(1, len(segment.tokens))
            logprobs.append(segment.avg_logprob * weight)
            no_speech.append(segment.no_speech_prob)
            weights.append(weight)
        if not texts:  # vad_filter found no speech at all
            return "", -10.0, 1.0
        return (
            " ".join(t for t in texts if t),
            sum(logprobs) / sum(weights),
            max(no_speech),
        )


def likeliest(probs: Iterable[tuple[str, float]], languages: tuple[str, ...]) -> str:
    """The most probable of `languages` in Whisper's language scores ("ru" or "<|ru|>")."""
    scores = {code.strip("<|>"): p for code, p in probs}
    return max(languages, key=lambda code: scores.get(code, 0.0))


class _FitDecoder:
    """Encoder on the utterance's own length, decoding as faster-whisper would."""

    def __init__(self, model, languages: tuple[str, ...], beam_size: int,
                 hotwords: str | None, min_s: float = FIT_MIN_S):
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        self._model = model
        multilingual = model.model.is_multilingual
        self._languages = languages if multilingual else ("en",)
        # One tokenizer and prompt per language, built now, not on a turn.
        self._tokenizers = {
            language: Tokenizer(model.hf_tokenizer, multilingual, task="transcribe",
                                language=language)
            for language in self._languages
        }
        self._prompts = {
            language: model.get_prompt(tokenizer, [], without_timestamps=True, hotwords=hotwords)
            for language, tokenizer in self._tokenizers.items()
        }
        self._suppress = list(
            get_suppressed_tokens(self._tokenizers[self._languages[0]], [-1])
        )
        self._beam_size = beam_size
        self._min_samples = int(min_s * RATE)
        max_frames = model.feature_extractor.nb_max_frames
        self._max_samples = (max_frames - 2) * model.feature_extractor.hop_length

    def decode(self, audio: np.ndarray) -> tuple[str, float, float, str]:
        import ctranslate2

        new_tokens = min(MAX_NEW_TOKENS, 8 + math.ceil(TOKENS_PER_S * len(audio) / RATE))
        pad = max(int(FIT_PAD_S * RATE), self._min_samples - len(audio))
        audio = np.concatenate([audio, np.zeros(pad, dtype=np.float32)])[: self._max_samples]
        features = self._model.feature_extractor(audio)
        frames = features.shape[-1] // 2 * 2  # the encoder's convolution has stride 2
        features = np.ascontiguousarray(features[None, :, :frames], dtype=np.float32)
        encoded = self._model.model.encode(
            ctranslate2.StorageView.from_array(features), to_cpu=False
        )
        language = self._languages[0]
        if len(self._languages) > 1:  # one look at the same encoding: no second encode
            language = likeliest(self._model.model.detect_language(encoded)[0], self._languages)
        prompt = self._prompts[language]
        result = self._model.model.generate(
            encoded,
            [prompt],
            beam_size=self._beam_size,
            # CTranslate2 counts the prompt in `max_length`, as faster-whisper does.
            max_length=min(self._model.max_length, len(prompt) + new_tokens),
            return_scores=True,
            return_no_speech_prob=True,
            suppress_blank=True,
            suppress_tokens=self._suppress,
            repetition_penalty=REPETITION_PENALTY,
        )[0]
        tokens = result.sequences_ids[0]
        # As faster-whisper recovers it: scores are length-normalised sums.
        cum_logprob = result.scores[0] * len(tokens)
        avg_logprob = cum_logprob / (len(tokens) + 1)
        text = self._tokenizers[language].decode(tokens).strip()
        return text, avg_logprob, float(result.no_speech_prob), language


def stt_model_dir(name_or_path: str, models_dir: Path | None = None) -> Path:
    """A registry model name (`whisper-tiny.en`) or a path to a CTranslate2 Whisper dir."""
    from mavend.errors import ModelMissingError
    from mavend.models import require

    candidate = Path(name_or_path).expanduser()
    if candidate.is_absolute() or "/" in name_or_path:
        if not (candidate / "model.bin").is_file():
            raise ModelMissingError(
                f"speech-to-text model not found: {candidate} has no model.bin "
                "(a CTranslate2 Whisper directory is expected)"
            )
        return candidate
    return require(name_or_path, models_dir)


# The hallucination guard --------------------------------------------------

# What Whisper says to silence and noise (subtitle credits it was trained on).
HALLUCINATIONS = frozenset(
    {
        "you",
        "thank you",
        "thanks",
        "thank you very much",
        "thanks for watching",
        "thank you for watching",
        "thank you so much for watching",
        "please subscribe",
        "bye",
        "bye bye",
        "so",
        "okay",
        "oh",
        "uh",
        "um",
        "hmm",
        "the end",
        "subtitles by the amara org community",
    }
)
NO_SPEECH_PROB = 0.6  # Whisper's own no_speech_threshold
LOW_LOGPROB = -1.0  # Whisper's own log_prob_threshold
VERY_LOW_LOGPROB = -1.5  # too unsure to act on, whatever the no-speech probability says
MAX_COMPRESSION = 2.4  # Whisper's compression_ratio_threshold: repetition loops
MIN_SPEECH_S = 0.2  # less voiced audio than this is a click, a breath, a word fragment


@dataclass(frozen=True)
class Verdict:
    keep: bool
    reason: str = ""


def normalize_words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9']+", text.lower().replace("’", "'")))


def guard(result: SttResult, speech_s: float, text: str | None = None) -> Verdict:
    """Drop what Whisper made up from near-silence.

    `speech_s` is how much of the utterance the VAD called speech; `text` is
    the command to route (default: the whole transcript). A phrase on the
    hallucination list is kept only when every signal says it was really said.
    """
    words = normalize_words(result.text if text is None else text)
    if not words:
        return Verdict(False, "empty")
    if speech_s < MIN_SPEECH_S:
        return Verdict(False, f"only {speech_s:.2f} s of speech")
    if result.no_speech_prob >= NO_SPEECH_PROB and result.avg_logprob < LOW_LOGPROB:
        return Verdict(False, "no speech (Whisper's no-speech and log-probability agree)")
    if result.avg_logprob < VERY_LOW_LOGPROB:
        return Verdict(False, f"log-probability {result.avg_logprob:.2f} too low")
    if result.compression_ratio > MAX_COMPRESSION:
        return Verdict(False, f"repetitive (compression ratio {result.compression_ratio:.1f})")
    if words in HALLUCINATIONS and (
        result.no_speech_prob >= 0.2 or result.avg_logprob < -0.7 or speech_s < 0.6
    ):
        return Verdict(False, f"{words!r} is what Whisper says to near-silence")
    return Verdict(True)


# The wake phrase -------------------------------------------------------------

_TOKEN = re.compile(r"[A-Za-z0-9']+")


def strip_wake_phrase(
    text: str, wake_words: Iterable[str], *, score: float = 75.0, within: int = 4
) -> str:
    """Remove the wake phrase (and anything before it) from the start of a transcript.

    The pre-roll puts the wake word into the audio, so Whisper writes it too,
    not always spelled right ("Hey Jarvis," "Hey, Jervis."). A fuzzy match of
    the phrase's words against the transcript's first words finds it. (A
    phrase misheard beyond that, "Can't start this, pause the music", stays:
    guessing which words it was cut real commands more often than it helped.)
    `within`: how many words in the phrase may start (1: only at the very start).
    """
    from rapidfuzz import fuzz

    tokens = list(_TOKEN.finditer(text))
    if not tokens:
        return text.strip()
    best_end = -1
    for phrase in wake_words:
        target = normalize_words(phrase).split()
        if not target:
            continue
        n = len(target)
        # The phrase may start a few words in (speech before the wake word
        # that fell inside the pre-roll): look at the first few positions.
        for start in range(0, min(within, len(tokens) - n + 1)):
            span = " ".join(t.group().lower() for t in tokens[start : start + n])
            if fuzz.ratio(span, " ".join(target)) >= score:
                best_end = max(best_end, tokens[start + n - 1].end())
                break
    if best_end < 0:
        return text.strip()
    rest = text[best_end:]
    return rest.lstrip(" ,.!?;:-—").strip()


def command_text(heard: str, wake_words: Iterable[str], *, woken: bool = True) -> str:
    """The command in a transcript that starts with the wake phrase.

    Whisper may start over after the phrase too ("Hey Jarvis, next track. Next track."):
    `transcribe` cannot see that copy while the phrase stands before only the first one.
    A follow-up turn (`woken` False: no wake word opened it) has no pre-roll, but people
    say the name again anyway ("hey jarvis, lock the side door" after a question): a
    phrase that starts the transcript is taken off, one further in is left.
    """
    if not woken:
        return strip_wake_phrase(heard, wake_words, within=1)
    return drop_wake_echo(collapse_restart(strip_wake_phrase(heard, wake_words)), wake_words)


# A start-over from the wake phrase, cut short by the token limit, after the command:
# "open the driveway gate. H-H-RV is" (tiny.en, primed with "Hey Jarvis"). The echo
# follows a sentence's end, is a few words with no number or polarity word, and its
# letters are near the phrase's (60 on rapidfuzz's ratio: "h h rv is" 67, "hage our
# vist" 60; a real afterthought is far: "in the kitchen" 29, "the garage" 44).
_ECHO = re.compile(r"^(?P<command>.*\w.*[.!?])\s+(?P<tail>[^.!?]+?)[.!?]*$", re.S)
_ECHO_WORDS = 4
_ECHO_SCORE = 60.0


def drop_wake_echo(text: str, wake_words: Iterable[str]) -> str:
    """`text` without a garbled wake phrase after its last sentence, else as it was."""
    from rapidfuzz import fuzz

    found = _ECHO.match(text.strip())
    if found is None:
        return text
    tail = [t.lower() for t in _TOKEN.findall(found["tail"])]
    if not tail or len(tail) > _ECHO_WORDS or any(carries_meaning(t) for t in tail):
        return text
    letters = "".join(tail).replace("'", "")
    for phrase in wake_words:
        target = normalize_words(phrase).replace(" ", "").replace("'", "")
        if target and fuzz.ratio(letters, target) >= _ECHO_SCORE:
            return found["command"]
    return text

