"""What a running bot says after reading its banks again (`agentbot review apply`, SIGHUP, the page)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from pydantic import Field

from agent.domain.types import Model, utcnow
from agent.understanding.banks import NluBanks

LEVELS = ("threshold", "margin", "confident", "topic")


class BankFigures(Model):
    sentences: int
    levels: dict[str, float]

    @classmethod
    def of(cls, banks: NluBanks) -> BankFigures:
        return cls(sentences=len(banks.examples()), levels={k: float(getattr(banks, k)) for k in LEVELS})


class ReloadReport(Model):
    before: BankFigures
    after: BankFigures
    reloaded_at: datetime = Field(default_factory=utcnow)
    why: str = ""  # what asked for it: the page, SIGHUP, the stamp `agentbot review apply` touched

    def summary(self) -> str:
        added = self.after.sentences - self.before.sentences
        changed = [
            f"{k} {self.before.levels[k]:g} -> {self.after.levels[k]:g}"
            for k in LEVELS
            if self.before.levels.get(k) != self.after.levels.get(k)
        ]
        return f"banks reloaded ({self.why or 'asked'}): {self.after.sentences} sentences ({added:+d}); " + (
            "levels " + ", ".join(changed) if changed else "levels unchanged"
        )


class BankReload(Protocol):
    """Builds the understanding afresh from the project's config and swaps it in between turns."""

    async def reload(self, why: str = "") -> ReloadReport:
        """Reload now and say what changed."""
        ...

    async def apply(self, why: str) -> ReloadReport:
        """Reload this process now and ask every other one on the project; this one only once."""
        ...

    async def catch_up(self) -> ReloadReport | None:
        """Reload if an apply happened since this process last read the banks (before a turn where
        nothing watches between turns); None when nothing changed."""
        ...

    def ask(self, why: str) -> None:
        """Ask for a reload without waiting for it (a signal handler)."""
        ...

    async def watch(self) -> None:
        """Reload whenever asked, or when the project's stamp file changes; runs until cancelled."""
        ...
