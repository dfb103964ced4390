"""What a tool is, and where tools are found.

A tool is one module: its parameters model, its handler and its declaration (`Tool`), which says
once whether it writes something, whether it needs the requester's yes and which kinds of record
it writes. The policy engine, the LLM agents, the intents' templates and storage read that
declaration; no other file names the tool.

Tools are found, not listed: every module of `agent.tools`, every module an installed package names
in the `agentbot.tools` entry point group, and every module a project names under `tool_modules:`
in its agents.yaml. A module's tools are its module-level `Tool` values (`@tool` makes one from a
handler) and what its `@tool_factory` functions return for the running app's `ToolDeps`.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import re
import sys
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field

from agent.domain.contexts import ToolContext
from agent.domain.types import RECORD_KIND_PATTERN, Alert, AlertKind, RecordKind, SideEffect
from agent.errors import ConfigError
from agent.sources import DataSource, Inventory, KnowledgeSource, ReleaseSource
from agent.storage import RiskReports, TaskReader, TicketReader
from agent.tools.section_fit import FitThresholds
from agent.understanding.scorer import MeaningSimilarity

ENTRY_POINT_GROUP = "agentbot.tools"


class ToolParams(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class ToolOutput(BaseModel):
    data: dict[str, Any] = Field(default_factory=dict)
    effects: list[SideEffect] = Field(default_factory=list)
    alerts: list[Alert] = Field(default_factory=list)  # a tool declares what admins must hear of its run


Handler = Callable[[Any, ToolContext], Awaitable[ToolOutput]]


@dataclass(frozen=True)
class Tool:
    """
    Args:
        name: `[a-z0-9_]` only; provider function names allow no dots.
        description: what the tool does, shown to LLMs.
        params: the pydantic model arguments are validated against.
        handler: `async (params, context) -> ToolOutput`; raises ToolError on failure.
        side_effect: an action done once: its result is kept by idempotency key, and a second call
            with the same key (a replayed confirmation) gets that result back.
        needs_approval: runs only after the requester said yes to this exact action (the policy
            engine asks; an LLM agent hands the wording to its rules planner).
        records: the kinds of record (`SideEffect.kind`, `[a-z0-9_]`) its runs write and read back
            (`ToolContext.records`); writing another is a bug the gateway reports, and a demo
            reset forgets the results of runs that wrote what it drops. The built-in kinds
            (ticket, refund...) have tables of their own; any other kind is kept in storage's
            generic records, so a new kind needs no migration.
        alerts: the kinds of admin alert (`[a-z0-9_]`) its runs raise; raising another is a bug the
            gateway reports. Each kind's title is in agents.yaml `alerts:`.
        timeout: seconds, overriding the gateway default.
    """

    name: str
    description: str
    params: type[BaseModel]
    handler: Handler
    side_effect: bool = False
    needs_approval: bool = False
    records: tuple[RecordKind, ...] = ()
    alerts: tuple[AlertKind, ...] = ()
    timeout: float | None = None

    def __post_init__(self) -> None:
        if self.needs_approval and not self.side_effect:
            raise ValueError(f"tool {self.name!r}: an action that needs a yes is a side effect, done once")
        for what, kinds in (("record", self.records), ("alert", self.alerts)):
            if bad := [kind for kind in kinds if not re.fullmatch(RECORD_KIND_PATTERN, kind)]:
                raise ValueError(f"tool {self.name!r}: {what} kinds are [a-z0-9_] words, not {bad}")

    def schema(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.params.model_json_schema()}


def tool(
    description: str,
    *,
    name: str | None = None,
    side_effect: bool = False,
    needs_approval: bool = False,
    records: tuple[RecordKind, ...] = (),
    alerts: tuple[AlertKind, ...] = (),
    timeout: float | None = None,
) -> Callable[[Handler], Tool]:
    """Declare a handler `async def name(params: SomeParams, ctx: ToolContext) -> ToolOutput` a
    tool; its parameters model is the first argument's annotation, its name the function's."""

    def declare(handler: Handler) -> Tool:
        first = next(iter(inspect.signature(handler).parameters), None)
        params = get_type_hints(handler).get(first or "")
        if not (isinstance(params, type) and issubclass(params, BaseModel)):
            raise TypeError(f"tool {handler.__name__}: annotate its first argument with a pydantic model")
        return Tool(
            name or handler.__name__,
            description,
            params,
            handler,
            side_effect=side_effect,
            needs_approval=needs_approval,
            records=records,
            alerts=alerts,
            timeout=timeout,
        )

    return declare


@dataclass(frozen=True)
class ToolDeps:
    """What the app hands tool factories: the business data and the stores tools read. A factory
    whose source is None here builds no tools (a store without task lists offers no task tools).

    Args:
        data: orders and customers.
        inventory: the store's items.
        knowledge: the store's knowledge base.
        releases: release summaries.
        tasks: users' task lists.
        tickets: the support tickets the bot opened.
        risk_reports: risk reports already filed; None files a new one every time.
        meaning: the embedded model, for matching by meaning (device problems to fixes).
        device_words: other words customers use for devices (the `device` slot's values).
        fit: how close a fix must be to a device problem (config/knowledge.yaml); None when not
            calibrated, and then no fix is matched to a device problem.
    """

    data: DataSource | None = None
    inventory: Inventory | None = None
    knowledge: KnowledgeSource | None = None
    releases: ReleaseSource | None = None
    tasks: TaskReader | None = None
    tickets: TicketReader | None = None
    risk_reports: RiskReports | None = None
    meaning: MeaningSimilarity | None = None
    device_words: tuple[str, ...] = ()
    fit: FitThresholds | None = None


ToolFactory = Callable[[ToolDeps], Iterable[Tool]]
_FACTORY_MARK = "__agentbot_tool_factory__"


def tool_factory(factory: ToolFactory) -> ToolFactory:
    """Mark a module's function that builds its tools from the app's dependencies."""
    setattr(factory, _FACTORY_MARK, True)
    return factory


def tools_in(module: ModuleType, deps: ToolDeps) -> list[Tool]:
    """A module's tools: its `Tool` values and what its tool factories build."""
    found: list[Tool] = []
    for value in vars(module).values():
        if isinstance(value, Tool):
            found.append(value)
        elif callable(value) and getattr(value, _FACTORY_MARK, False) and value.__module__ == module.__name__:
            found += value(deps)
    return found


def tool_modules(project_modules: Iterable[str] = (), project_dir: Path | None = None) -> list[ModuleType]:
    """agentbot's own tool modules, those installed packages name (entry points), then the project's."""
    own = importlib.import_module(__package__ or "agent.tools")
    modules = [importlib.import_module(f"{own.__name__}.{m.name}") for m in pkgutil.iter_modules(own.__path__)]
    modules += [ep.load() for ep in entry_points(group=ENTRY_POINT_GROUP)]
    modules += [_project_module(name, project_dir) for name in project_modules]
    return modules


def _project_module(name: str, project_dir: Path | None) -> ModuleType:
    """A module by dotted name, or by a `.py` path relative to the project folder."""
    if not name.endswith(".py"):
        return importlib.import_module(name)
    path = (project_dir or Path.cwd()) / name
    if not path.is_file():
        raise ConfigError(str(path), "no such tool module", field="tool_modules")
    module_name = f"agentbot_project_tools.{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(str(path), "not a Python module", field="tool_modules")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # pydantic resolves the module's annotations through it
    spec.loader.exec_module(module)
    return module


def find_tools(deps: ToolDeps, project_modules: Iterable[str] = (), project_dir: Path | None = None) -> list[Tool]:
    """Every tool found; two tools of one name are a configuration error."""
    tools: dict[str, Tool] = {}
    for module in tool_modules(project_modules, project_dir):
        for found in tools_in(module, deps):
            if found.name in tools and tools[found.name] is not found:
                raise ConfigError(module.__name__, f"a second tool named {found.name!r}", field="tool_modules")
            tools[found.name] = found
    return list(tools.values())
