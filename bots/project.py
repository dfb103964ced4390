"""Where a project's config and data live, and `agentbot init DIR` to start a new one.

A folder is found in this order, and the CLI says which one it uses:
1. the flag (`--config-dir`, `--data-dir`);
2. `$AGENTBOT_HOME/config`, `$AGENTBOT_HOME/data`;
3. `./config`, `./data` in the current folder;
4. the defaults shipped inside the package (the demo computer shop).
"""

from __future__ import annotations

import shutil
from collections.abc import MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from agent.errors import ConfigError
from agent.review.banks import without_reviewed

if TYPE_CHECKING:
    from bots.settings import DeploySettings

CHECKOUT = Path(__file__).resolve().parent.parent
# A wheel carries the default project here (setup.py copies config/ and data/ in); a checkout has them at its root.
SHIPPED = Path(__file__).resolve().parent / "defaults"


def packaged_defaults() -> Path:
    return SHIPPED if (SHIPPED / "config").is_dir() else CHECKOUT


class Found(BaseModel):
    path: Path
    source: str  # "--config-dir", "AGENTBOT_HOME", "current folder", "packaged defaults"


def find_dir(explicit: str | Path | None, name: str, home: Path | None) -> Found:
    """The `config` or `data` folder to use, and why (see the module docstring for the order);
    `home` is $AGENTBOT_HOME as the settings read it."""
    if explicit is not None:
        return Found(path=Path(explicit), source=f"--{name}-dir")
    if home is not None:
        path = home / name
        if not path.is_dir():
            problem = f"{path} is not a folder (run `agentbot init {home}`)"
            raise ConfigError("environment", problem, field="AGENTBOT_HOME")
        return Found(path=path, source="AGENTBOT_HOME")
    local = Path(name)
    if local.is_dir():
        return Found(path=local.resolve(), source="current folder")
    return Found(path=packaged_defaults() / name, source="packaged defaults")


def load_env_file(env: MutableMapping[str, str]) -> Path | None:
    """Read `.env` from the current folder, else from `$AGENTBOT_HOME`, into the environment; returns the
    file read. Variables already set win over the file, so a deploy's own settings are never overridden."""
    from dotenv import dotenv_values

    candidates = [Path(".env")]
    if home := env.get("AGENTBOT_HOME"):
        candidates.append(Path(home) / ".env")
    for path in candidates:
        if path.is_file():
            for name, value in dotenv_values(path).items():
                if value is not None:
                    env.setdefault(name, value)
            return path.resolve()
    return None


def describe(config: Found, data: Found) -> str:
    """One line for banners and server logs: which project is running."""
    if config.source == data.source:
        return f"project: {config.path.parent} ({config.source})"
    return f"config: {config.path} ({config.source}); data: {data.path} ({data.source})"


NEXT_STEPS = """\
Wrote a new agentbot project in {dir}:
  config/       intents, agents, policies, settings, store (edit these)
  data/         demo orders, customers, inventory, knowledge base, releases (replace with yours)
  .env.example  every environment variable agentbot reads (copy to .env)
  Procfile      web: agentbot slack, discord: agentbot discord

Next:
  cd {dir}
  agentbot chat                  # talk to it in the console (/help lists the commands)
  agentbot eval --help           # test your changes with conversation suites
"""


def init_project(target: Path) -> str:
    """Write config/, data/, .env.example and a Procfile into `target`; refuse to overwrite anything there."""
    from bots.settings import env_example

    source = packaged_defaults()
    planned = [target / "config", target / "data", target / ".env.example", target / "Procfile"]
    if taken := [p for p in planned if p.exists()]:
        names = ", ".join(str(p) for p in taken)
        raise ConfigError(str(target), f"already has {names}; agentbot init never overwrites: pick another folder")
    target.mkdir(parents=True, exist_ok=True)
    # data/clinc150 is the checkout's measuring corpus (the wheel leaves it out too), not a store's data.
    # Nor what a running project writes beside its config: the reload stamp and answer, and its own labels.
    runtime = (".reload", ".reloaded.json", "reviewed.yaml")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "__init__.py", "clinc150", *runtime)
    shutil.copytree(source / "config", target / "config", ignore=ignore)
    shutil.copytree(source / "data", target / "data", ignore=ignore)
    for nlu in (target / "config").rglob("nlu.yaml"):
        without_reviewed(nlu)
    (target / ".env.example").write_text(env_example(), encoding="utf-8")
    (target / "Procfile").write_text(PROCFILE, encoding="utf-8")
    return NEXT_STEPS.format(dir=target)


# The deploy contract (docs/deploy.md): the web process binds $PORT; there is no interactive console entry.
PROCFILE = "web: agentbot slack\ndiscord: agentbot discord\n"


EXTRAS = {
    "slack": "slack_bolt",
    "discord": "discord",
    "openai": "openai",
    "anthropic": "anthropic",
    "postgres": "asyncpg",
}


def project_info(
    config_dir: str | None,
    data_dir: str | None,
    db_url: str | None,
    deploy: DeploySettings,
    env_file: Path | None = None,
) -> str:
    """What `agentbot info` prints: which project, database, understanding mode and extras this process would use."""
    import importlib.util

    from sqlalchemy.engine import make_url

    from bots.settings import run_settings

    home = deploy.project.home
    config, data = find_dir(config_dir, "config", home), find_dir(data_dir, "data", home)
    settings = run_settings(config.path, deploy, db_url=db_url)
    url = settings.database_url
    extras = ", ".join(f"{name} {'yes' if importlib.util.find_spec(mod) else 'no'}" for name, mod in EXTRAS.items())
    return "\n".join(
        [
            describe(config, data),
            f"environment file: {env_file if env_file else 'none (no .env in this folder or $AGENTBOT_HOME)'}",
            f"database: {make_url(url).render_as_string(hide_password=True)}",
            f"understanding: {settings.understanding}",
            f"extras: {extras}",
        ]
    )
