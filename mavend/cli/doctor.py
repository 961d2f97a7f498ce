"""`mavend doctor`: one line per check (mavend/doctor/), ok or failing with the fix."""

from __future__ import annotations

import argparse
import json

from mavend.cli.common import command, settings_from


def register(commands: argparse._SubParsersAction) -> None:
    doctor = command(commands, "doctor", "check models, audio, D-Bus, storage and the LLM")
    doctor.add_argument("--json", action="store_true", help="one JSON object per check")
    doctor.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    from mavend.doctor import run_checks

    settings = settings_from(args)
    checks = run_checks(settings)
    for check in checks:
        print(json.dumps(check.to_json()) if args.json else check.line())
    return 0 if all(c.ok for c in checks) else 1
