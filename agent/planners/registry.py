"""Planners by name: each agent in config/agents.yaml names its planner, and this registry builds it.

An agent that names a planner the registry does not know is a config error with the file and line,
never an agent that silently plans from templates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agent.config.files import line_of, load_yaml_model
from agent.config.schema import BotConfig
from agent.domain.catalog import StoreSettings
from agent.errors import ConfigError
from agent.interfaces import Planner
from agent.planners.generic import TemplatePlanner
from agent.planners.release import ReleasePlanner
from agent.planners.release_risk import RiskThresholds
from agent.planners.sales import SalesPlanner
from agent.planners.support import SupportPlanner
from agent.planners.tasks import TaskPlanner


@dataclass(frozen=True)
class PlannerNeeds:
    """What a planner may be built from: the config, the store's settings and the template planner
    (which phrases every agent's questions)."""

    config: BotConfig
    store: StoreSettings
    templates: TemplatePlanner


PlannerFactory = Callable[[PlannerNeeds], Planner]


def _template(needs: PlannerNeeds) -> Planner:
    return needs.templates


def _support(needs: PlannerNeeds) -> Planner:
    slots = needs.config.intents.slots
    return SupportPlanner(needs.templates, slots["symptom"].pattern if "symptom" in slots else None)


def _sales(needs: PlannerNeeds) -> Planner:
    return SalesPlanner(needs.store, needs.templates, needs.config.intents.vocabulary.thousands)


def _tasks(needs: PlannerNeeds) -> Planner:
    return TaskPlanner(needs.config)


def _release(needs: PlannerNeeds) -> Planner:
    file = Path(needs.config.directory) / "release_risk.yaml"
    return ReleasePlanner(needs.config, load_yaml_model(file, RiskThresholds, optional=True))


PLANNERS: Mapping[str, PlannerFactory] = {
    "template": _template,
    "support": _support,
    "sales": _sales,
    "tasks": _tasks,
    "release": _release,
}


def build_planners(needs: PlannerNeeds, registry: Mapping[str, PlannerFactory] = PLANNERS) -> dict[str, Planner]:
    """Each agent's planner, by the name its entry in agents.yaml gives."""
    planners: dict[str, Planner] = {}
    for agent, spec in needs.config.agents.agents.items():
        factory = registry.get(spec.planner)
        if factory is None:
            file, field = Path(needs.config.directory) / "agents.yaml", f"agents.{agent}.planner"
            known = ", ".join(sorted(registry))
            raise ConfigError(
                str(file),
                f"unknown planner {spec.planner!r}; choose one of {known}",
                line=line_of(file, field),
                field=field,
            )
        planners[agent] = factory(needs)
    return planners
