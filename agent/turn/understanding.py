"""The understanding a router reads and plans with: one frozen value, built whole and swapped whole."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from agent.planners.base import Planner
from agent.understanding.banks import NluBanks
from agent.understanding.classifier import Classifier
from agent.understanding.reading import BankReader
from agent.understanding.rules import RulesClassifier


@dataclass(frozen=True)
class Understanding:
    """How messages are read (the classifier over the embedded reading) and who plans each agent's
    goals: what the composition root builds, and a reload builds afresh and swaps in between turns.

    Args:
        classifier: understands a message in the configured mode (rules, llm, cascade).
        rules: the embedded model, which reads every message once (replies, values, the answer to
            an open question) whatever the mode.
        templates: the default agent's planner; `planners` overrides it per agent name.
        planners: each agent's planner, by name.
        closers: resources built for this understanding (an LLM client), released once it is replaced.
    """

    classifier: Classifier
    rules: RulesClassifier
    templates: Planner
    planners: dict[str, Planner] = field(default_factory=dict)
    closers: tuple[Callable[[], Awaitable[None]], ...] = ()

    @property
    def reader(self) -> BankReader:
        """The embedded model over the banks, for tools that rank a message as the bot would."""
        return self.rules.reader

    @property
    def banks(self) -> NluBanks:
        """The banks and calibrated levels the understanding reads with (their figures for operators)."""
        return self.rules.banks
