"""[voices]: who is speaking (mavend/voices/). Off by default.

With `enabled`, each spoken turn is tagged with the enrolled voice that said it
(`mavend voices enroll NAME`) or "unknown", and each speaker's own facts and notes
answer only them ("what's my locker code" answers the one who asks). With
`confirm_from = "enrolled"`, destructive and bulk acts, and what memory writes
(facts, notes, phrasing habits), are done only for an enrolled voice; a voice the
box does not know is told so and nothing changes.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from mavend.config.base import _settings

# The equal-error threshold on synthetic voices with the silences cut (bench/speaker_id.py,
# clean: 5.6 % at 0.88). Turns at 0.88 (bench/speaker_turns.py, households of 3): an
# enrolled voice's named right 89.2 % clean / 90.5 % at 10 dB SNR, a stranger's taken for
# an enrolled voice 13.0 % / 12.8 %, all of those espeak-ng voices that share one
# synthesizer (the natural voices never). To be confirmed on real voices.
DEFAULT_THRESHOLD = 0.88
DEFAULT_MARGIN = 0.03

Cosine = Annotated[float, Field(ge=0.0, le=1.0)]


@_settings
class VoicesSettings:
    enabled: bool = False
    # Who may confirm destructive acts and write memory: "anyone" (every voice, as
    # without [voices]) or "enrolled" (only a voice `mavend voices enroll` knows).
    confirm_from: Literal["anyone", "enrolled"] = "anyone"
    # A turn is a voice's when its cosine to the voiceprint reaches `threshold` and
    # beats every other voiceprint by `margin`; otherwise it is "unknown".
    threshold: Cosine = DEFAULT_THRESHOLD
    margin: Cosine = DEFAULT_MARGIN

    @model_validator(mode="after")
    def _enrolled_needs_enabled(self) -> VoicesSettings:
        if self.confirm_from == "enrolled" and not self.enabled:
            raise ValueError(
                'confirm_from = "enrolled" needs enabled = true: without telling voices '
                "apart, no voice is known"
            )
        return self
