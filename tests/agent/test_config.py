"""Config errors stop startup and name the file, line and field."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import ModuleType

import pytest

from agent.config.files import load_config
from agent.errors import ConfigError
from agent.planners.registry import find_planners
from bots.app import build_app
from tests.helpers import REPO


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    d = tmp_path / "config"
    shutil.copytree(REPO / "config", d)
    return d


def test_shipped_config_loads() -> None:
    config = load_config(REPO / "config")
    assert {i.id for i in config.intents.intents} >= {"order_status", "create_ticket", "human_handoff"}


def test_corrupt_yaml_names_file_and_line(config_dir: Path) -> None:
    (config_dir / "agents.yaml").write_text("agents:\n  support:\n    tools: [a, b\n")
    with pytest.raises(ConfigError) as e:
        load_config(config_dir)
    assert "agents.yaml" in str(e.value) and e.value.line is not None and "not valid YAML" in str(e.value)


def test_unknown_field_names_the_line_and_field(config_dir: Path) -> None:
    text = (config_dir / "intents.yaml").read_text()
    (config_dir / "intents.yaml").write_text(
        text.replace("    tool: check_order_status\n", "    tool: check_order_status\n    tols: oops\n", 1)
    )
    with pytest.raises(ConfigError) as e:
        load_config(config_dir)
    assert e.value.field == "intents.0.tols"
    lines = (config_dir / "intents.yaml").read_text().splitlines()
    assert lines[e.value.line - 1].strip() == "tols: oops"  # type: ignore[operator]


def test_an_alias_for_no_value_names_it(config_dir: Path) -> None:
    text = (config_dir / "intents.yaml").read_text()
    (config_dir / "intents.yaml").write_text(text.replace("notebook: laptop", "notebook: laptops", 1))
    with pytest.raises(ConfigError, match="not among them: laptops"):
        load_config(config_dir)


def test_a_word_for_no_attribute_names_it(config_dir: Path, db_url: str) -> None:
    text = (config_dir / "store.yaml").read_text()
    (config_dir / "store.yaml").write_text(text.replace("heavy: weight", "heavy: mass", 1))
    with pytest.raises(ConfigError, match="not one: mass"):
        build_app(config_dir, REPO / "data", db_url)


def test_intent_for_an_unknown_agent(config_dir: Path) -> None:
    text = (config_dir / "intents.yaml").read_text()
    (config_dir / "intents.yaml").write_text(text.replace("agent: support", "agent: nobody", 1))
    with pytest.raises(ConfigError, match="unknown agent 'nobody'"):
        load_config(config_dir)


def test_unknown_tool_in_agents_stops_startup(config_dir: Path, db_url: str) -> None:
    text = (config_dir / "agents.yaml").read_text()
    (config_dir / "agents.yaml").write_text(text.replace("escalate_to_human]", "escalate_to_human, fly]"))
    with pytest.raises(ConfigError, match="unknown tool 'fly'"):
        build_app(config_dir, REPO / "data", db_url)


def test_unknown_planner_names_the_line_and_the_planners_there_are(config_dir: Path, db_url: str) -> None:
    text = (config_dir / "agents.yaml").read_text()
    (config_dir / "agents.yaml").write_text(text.replace("planner: sales", "planner: salse"))
    with pytest.raises(ConfigError, match="unknown planner 'salse'; choose one of release, sales,") as e:
        build_app(config_dir, REPO / "data", db_url)
    assert e.value.field == "agents.sales.planner" and e.value.file.endswith("agents.yaml")
    lines = (config_dir / "agents.yaml").read_text().splitlines()
    assert lines[e.value.line - 1].strip() == "planner: salse"  # type: ignore[operator]


def declaring(module: str, name: str, function: str) -> ModuleType:
    """A module, as another package would ship it, that declares a planner."""
    made = ModuleType(module)
    source = f"from agent.planners.registry import planner\n@planner({name!r})\ndef {function}(needs):\n"
    exec(source + "    return needs.templates\n", made.__dict__)
    return made


def test_planners_are_found_by_their_declaration_not_a_list() -> None:
    assert {"template", "support", "sales", "tasks", "release"} <= set(find_planners())
    assert set(find_planners([declaring("shop_planners", "echo", "echo")])) == {"echo"}
    with pytest.raises(ConfigError, match="a second planner named 'echo'"):
        find_planners([declaring("shop_planners", "echo", "echo"), declaring("again", "echo", "other")])


def test_an_agent_must_name_its_planner(config_dir: Path) -> None:
    text = (config_dir / "agents.yaml").read_text()
    (config_dir / "agents.yaml").write_text(text.replace("    planner: tasks\n", ""))
    with pytest.raises(ConfigError) as e:
        load_config(config_dir)
    assert e.value.field == "agents.tasks.planner" and "required" in str(e.value)


def test_unknown_understanding_mode(db_url: str) -> None:
    with pytest.raises(ConfigError, match="understanding: Input should be 'rules', 'llm' or 'cascade'"):
        build_app(REPO / "config", REPO / "data", db_url, understanding="psychic")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="intents.yaml: file not found"):
        load_config(tmp_path)
