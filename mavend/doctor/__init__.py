"""Is everything mavend needs there and working? The models, the microphone, the session
bus, the data directory, the LLM: `run_checks(settings)` does each for real.

`mavend doctor` (mavend/cli/doctor.py) prints them; the household's page shows them.
"""

from mavend.doctor.checks import Check, run_checks

__all__ = ["Check", "run_checks"]
