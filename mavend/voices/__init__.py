"""Who is speaking: a speaker encoder, and (next) the household's enrolled voices.

`SpeakerEncoder.load(path)` reads resemblyzer's trained GE2E weights (`pretrained.pt`,
Apache-2.0, pinned as the model `resemblyzer-encoder`) without torch, and
`encoder.embed(audio)` gives a 256-d unit vector: two utterances of one voice are near in
cosine, two voices far (BENCHMARKS.md, "Who is speaking").
"""

from mavend.voices.checkpoint import CheckpointError, load_state_dict
from mavend.voices.encoder import SpeakerEncoder

__all__ = ["CheckpointError", "SpeakerEncoder", "load_state_dict"]
