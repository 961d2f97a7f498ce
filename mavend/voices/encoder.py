"""The speaker encoder: resemblyzer's trained weights, run in numpy.

GE2E (Wan et al., 2018) as resemblyzer trained it: 40 mel channels of 25 ms windows every
10 ms, three LSTM layers of 256, a linear layer of 256 and a ReLU; a 1.6 s window's
embedding is the last hidden state through those, L2-normed; an utterance's is the normed
mean of windows every 1/1.3 s. The mel filters and the STFT follow librosa's defaults of
the time it was trained with (Slaney mel scale and norm, a periodic Hann window, the frames
centred with reflected padding), written out here so that neither librosa nor torch is
needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mavend.voices.checkpoint import load_state_dict

RATE = 16_000
N_FFT = 400  # 25 ms
HOP = 160  # 10 ms
N_MELS = 40
PARTIAL_FRAMES = 160  # 1.6 s
PARTIAL_RATE = 1.3  # windows a second
MIN_COVERAGE = 0.75  # a last window this full is kept (zero-padded)
TARGET_DBFS = -30.0  # quieter audio is raised to this loudness first
LAYERS = 3


def mel_filters(rate: int = RATE, n_fft: int = N_FFT, n_mels: int = N_MELS) -> np.ndarray:
    """(n_mels, 1 + n_fft // 2) triangular filters on the Slaney mel scale, area-normed."""
    def hz_to_mel(hz: np.ndarray) -> np.ndarray:
        hz = np.asarray(hz, dtype=np.float64)
        mel = hz / (200.0 / 3)
        log = hz >= 1000.0
        return np.where(log, 15.0 + np.log(np.maximum(hz, 1e-10) / 1000.0) / (np.log(6.4) / 27),
                        mel)

    def mel_to_hz(mel: np.ndarray) -> np.ndarray:
        hz = mel * (200.0 / 3)
        log = mel >= 15.0
        return np.where(log, 1000.0 * np.exp((np.log(6.4) / 27) * (mel - 15.0)), hz)

    fft_freqs = np.linspace(0, rate / 2, 1 + n_fft // 2)
    mel_freqs = mel_to_hz(np.linspace(hz_to_mel(0.0), hz_to_mel(rate / 2), n_mels + 2))
    widths = np.diff(mel_freqs)
    ramps = mel_freqs[:, None] - fft_freqs[None, :]
    lower = -ramps[:-2] / widths[:-1, None]
    upper = ramps[2:] / widths[1:, None]
    weights = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_freqs[2:n_mels + 2] - mel_freqs[:n_mels]))[:, None]
    return weights.astype(np.float32)


_MEL = mel_filters()
_WINDOW = (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)).astype(np.float32)


def mel_frames(wav: np.ndarray) -> np.ndarray:
    """(frames, 40) mel power spectrogram (not log) of float audio at 16 kHz."""
    padded = np.pad(wav.astype(np.float32), N_FFT // 2, mode="reflect")
    count = 1 + (len(padded) - N_FFT) // HOP
    index = np.arange(N_FFT)[None, :] + HOP * np.arange(count)[:, None]
    spectrum = np.abs(np.fft.rfft(padded[index] * _WINDOW, axis=1)) ** 2
    return (spectrum @ _MEL.T).astype(np.float32)


def louder(wav: np.ndarray, target_dbfs: float = TARGET_DBFS) -> np.ndarray:
    """Raise (never lower) quiet audio to the loudness the encoder was trained on."""
    rms = float(np.sqrt(np.mean(np.square(wav, dtype=np.float64)))) if len(wav) else 0.0
    if rms <= 0:
        return wav
    change = target_dbfs - 20 * np.log10(rms)
    return wav * np.float32(10 ** (change / 20)) if change > 0 else wav


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # no overflow for large -x


@dataclass(frozen=True)
class _Layer:
    w_ih: np.ndarray  # (in, 4H), transposed for x @ w
    w_hh: np.ndarray  # (H, 4H)
    bias: np.ndarray  # (4H,)


class SpeakerEncoder:
    """`embed(audio)`: a 256-d unit vector for one speaker's utterance; two utterances of
    one voice are near in cosine, two voices far."""

    def __init__(self, state: dict[str, np.ndarray]):
        self._layers = [
            _Layer(state[f"lstm.weight_ih_l{k}"].T.copy(), state[f"lstm.weight_hh_l{k}"].T.copy(),
                   state[f"lstm.bias_ih_l{k}"] + state[f"lstm.bias_hh_l{k}"])
            for k in range(LAYERS)
        ]
        self._linear_w = state["linear.weight"].T.copy()
        self._linear_b = state["linear.bias"]

    @classmethod
    def load(cls, path: Path) -> SpeakerEncoder:
        return cls(load_state_dict(path, "model_state"))

    def embed_windows(self, mels: np.ndarray) -> np.ndarray:
        """(batch, 160, 40) mel windows -> (batch, 256) unit embeddings."""
        x = mels.astype(np.float32)
        batch, steps, _ = x.shape
        for layer in self._layers:
            hidden = layer.w_hh.shape[0]
            gates_x = (x.reshape(batch * steps, -1) @ layer.w_ih + layer.bias).reshape(
                batch, steps, 4 * hidden)
            h = np.zeros((batch, hidden), np.float32)
            c = np.zeros((batch, hidden), np.float32)
            out = np.empty((batch, steps, hidden), np.float32)
            for t in range(steps):
                g = gates_x[:, t] + h @ layer.w_hh
                # PyTorch's gate order: input, forget, cell, output
                i, f, cand, o = np.split(g, 4, axis=1)
                c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(cand)
                h = _sigmoid(o) * np.tanh(c)
                out[:, t] = h
            x = out
        raw = np.maximum(0.0, h @ self._linear_w + self._linear_b)
        return raw / np.maximum(np.linalg.norm(raw, axis=1, keepdims=True), 1e-12)

    def embed(self, audio: np.ndarray) -> np.ndarray:
        """One utterance (float in [-1, 1] or int16, 16 kHz) -> its 256-d unit embedding."""
        wav = audio.astype(np.float32) / 32768.0 if audio.dtype == np.int16 else audio
        wav = louder(wav.astype(np.float32))
        starts, needed = _windows(len(wav))
        if needed > len(wav):
            wav = np.pad(wav, (0, needed - len(wav)))
        mel = mel_frames(wav)
        mels = np.stack([mel[s:s + PARTIAL_FRAMES] for s in starts])
        partial = self.embed_windows(mels)
        mean = partial.mean(axis=0)
        return mean / np.linalg.norm(mean)


def _windows(n_samples: int) -> tuple[list[int], int]:
    """The first frame of each 1.6 s window, and the samples the audio must be padded to."""
    n_frames = int(np.ceil((n_samples + 1) / HOP))
    step = int(np.round((RATE / PARTIAL_RATE) / HOP))
    starts = list(range(0, max(1, n_frames - PARTIAL_FRAMES + step + 1), step))
    last = starts[-1] * HOP
    coverage = (n_samples - last) / (PARTIAL_FRAMES * HOP)
    if coverage < MIN_COVERAGE and len(starts) > 1:
        starts.pop()
    return starts, (starts[-1] + PARTIAL_FRAMES) * HOP
