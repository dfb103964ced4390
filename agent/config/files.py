"""Reading config files: YAML into the models of `agent/config/schema.py`, with the file, line and field of an error."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from agent.config.schema import (
    AgentsFile,
    BotConfig,
    IntentsFile,
    SafeLoader,
    Settings,
)
from agent.errors import ConfigError

M = TypeVar("M", bound=BaseModel)


def _node_line(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """Follow a pydantic error location through the YAML node tree to a 1-based line."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            break
        if node is None:
            break
        line = node.start_mark.line + 1
    return line


def load_yaml_model(path: Path, model: type[M], *, optional: bool = False) -> M:
    """Read `path` into `model`; any problem raises ConfigError naming file, line and field."""
    if not path.exists():
        if optional:
            return model()
        raise ConfigError(str(path), "file not found")
    text = path.read_text(encoding="utf-8")
    try:
        data = yaml.load(text, Loader=SafeLoader)
    except yaml.MarkedYAMLError as e:
        line = e.problem_mark.line + 1 if e.problem_mark else None
        raise ConfigError(str(path), f"not valid YAML ({e.problem or e})", line=line) from e
    except yaml.YAMLError as e:
        raise ConfigError(str(path), f"not valid YAML ({e})") from e
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(str(path), "the top level must be a mapping", line=1)
    try:
        return model.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = tuple(err["loc"])
        field = ".".join(str(p) for p in loc)
        # The node tree (for the line number) is only built when there is an error to place.
        root = yaml.compose(text, Loader=SafeLoader)
        raise ConfigError(str(path), err["msg"], line=_node_line(root, loc), field=field) from e


def line_of(path: Path, field: str) -> int | None:
    """The 1-based line of a dotted field (`agents.tasks.planner`) in a YAML file, for a ConfigError
    found after the file was read (a name the file uses that code does not know)."""
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"), Loader=SafeLoader)
    except (OSError, yaml.YAMLError):
        return None
    return _node_line(root, tuple(field.split(".")))


def load_config(directory: str | Path, settings: Settings | None = None) -> BotConfig:
    """Load and cross-check intents.yaml, agents.yaml and settings.yaml from one folder.

    Args:
        directory: the folder holding the files.
        settings: the settings a run built from settings.yaml with its environment and flags
            (bots/settings.py); else settings.yaml is read alone.
    """
    d = Path(directory)
    intents = load_yaml_model(d / "intents.yaml", IntentsFile)
    agents = load_yaml_model(d / "agents.yaml", AgentsFile)
    if settings is None:
        settings = load_yaml_model(d / "settings.yaml", Settings, optional=True)
    seen: set[str] = set()
    for i, spec in enumerate(intents.intents):
        field = f"intents.{i}"
        if spec.id in seen:
            raise ConfigError(str(d / "intents.yaml"), f"duplicate intent id {spec.id!r}", field=field)
        seen.add(spec.id)
        if spec.agent not in agents.agents:
            raise ConfigError(str(d / "intents.yaml"), f"unknown agent {spec.agent!r}", field=f"{field}.agent")
        for role, tool in spec.uses.items():
            if tool not in agents.agents[spec.agent].tools:
                problem = f"tool {tool!r} is not among agent {spec.agent!r}'s tools"
                raise ConfigError(str(d / "intents.yaml"), problem, field=f"{field}.uses.{role}")
        for p in spec.required_params:
            if p not in intents.slots:
                raise ConfigError(
                    str(d / "intents.yaml"), f"no slot named {p!r} under slots:", field=f"{field}.required_params"
                )
    for i, spec in enumerate(intents.intents):
        if spec.offers is not None and spec.offers not in seen:
            problem = f"no intent {spec.offers!r} to offer"
            raise ConfigError(str(d / "intents.yaml"), problem, field=f"intents.{i}.offers")
    if len(handoffs := [s.id for s in intents.intents if s.handoff]) > 1:
        raise ConfigError(str(d / "intents.yaml"), f"one intent hands off to a person, not {', '.join(handoffs)}")
    return BotConfig(intents=intents, agents=agents, settings=settings, directory=str(d))
