"""Planners by name: each agent in config/agents.yaml names its planner, and the registry builds it.

Planners are found the way tools are, not listed: a planner module marks the function that builds
its planner with `@planner("name")`. The registry reads every module of `agent.planners` and every
module an installed package names in the `agentbot.planners` entry point group. An agent that names
a planner nobody declared is a config error with the file and line, never an agent that silently
plans from templates.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType

from agent.config.files import line_of
from agent.config.schema import BotConfig
from agent.domain.catalog import StoreSettings
from agent.errors import ConfigError
from agent.planners.base import Planner

ENTRY_POINT_GROUP = "agentbot.planners"


@dataclass(frozen=True)
class PlannerNeeds:
    """What a planner may be built from: the config, the store's settings and the template planner
    (which phrases every agent's questions)."""

    config: BotConfig
    store: StoreSettings
    templates: Planner


PlannerFactory = Callable[[PlannerNeeds], Planner]
_NAME_MARK = "__agentbot_planner__"


def planner(name: str) -> Callable[[PlannerFactory], PlannerFactory]:
    """Declare a module's function that builds the planner agents.yaml calls `name`."""

    def declare(factory: PlannerFactory) -> PlannerFactory:
        setattr(factory, _NAME_MARK, name)
        return factory

    return declare


def planner_modules() -> list[ModuleType]:
    """agentbot's own planner modules, then those installed packages name (entry points)."""
    own = importlib.import_module(__package__ or "agent.planners")
    modules = [importlib.import_module(f"{own.__name__}.{m.name}") for m in pkgutil.iter_modules(own.__path__)]
    return modules + [ep.load() for ep in entry_points(group=ENTRY_POINT_GROUP)]


def find_planners(modules: Iterable[ModuleType] | None = None) -> dict[str, PlannerFactory]:
    """Every declared planner by name; two of one name are a configuration error."""
    found: dict[str, PlannerFactory] = {}
    for module in planner_modules() if modules is None else modules:
        for value in vars(module).values():
            name = getattr(value, _NAME_MARK, None)
            if not isinstance(name, str) or value.__module__ != module.__name__:
                continue
            if name in found and found[name] is not value:
                raise ConfigError(module.__name__, f"a second planner named {name!r}", field="planner")
            found[name] = value
    return found


def build_planners(needs: PlannerNeeds, registry: Mapping[str, PlannerFactory] | None = None) -> dict[str, Planner]:
    """Each agent's planner, by the name its entry in agents.yaml gives."""
    registry = find_planners() if registry is None else registry
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
