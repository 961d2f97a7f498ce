"""One line of `mavend doctor`: ok, or failing with its fix."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""

    def line(self) -> str:
        status = "ok  " if self.ok else "FAIL"
        fix = f"\n      fix: {self.fix}" if not self.ok and self.fix else ""
        return f"{status}  {self.name}: {self.detail}{fix}"

    def to_json(self) -> dict[str, object]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix}
