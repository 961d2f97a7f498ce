"""Who is speaking: a speaker encoder, and the household's enrolled voices.

`SpeakerEncoder.load(path)` reads resemblyzer's trained GE2E weights (`pretrained.pt`,
Apache-2.0, pinned as the model `resemblyzer-encoder`) without torch, and
`encoder.embed(audio)` gives a 256-d unit vector: two utterances of one voice are near in
cosine, two voices far (BENCHMARKS.md, "Who is speaking"). `VoicePrints(store)` keeps
one voiceprint per enrolled name (`mavend voices enroll NAME`) and tells whose an
utterance is, or "unknown"; `SpeakerId` does both for a turn's audio (the daemon).
"""

from mavend.voices.checkpoint import CheckpointError, load_state_dict
from mavend.voices.encoder import SpeakerEncoder
from mavend.voices.identify import ENCODER, UNKNOWN, Heard, SpeakerId
from mavend.voices.prints import Identified, VoicePrint, VoicePrints
from mavend.voices.speech import SpeechOnly

__all__ = ["ENCODER", "UNKNOWN", "CheckpointError", "Heard", "Identified", "SpeakerEncoder",
           "SpeakerId", "SpeechOnly", "VoicePrint", "VoicePrints", "load_state_dict"]
