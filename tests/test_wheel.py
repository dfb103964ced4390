"""A new user's install: build the wheel, install it into a fresh venv, chat from an empty folder, start a project.

pip resolves dependencies through its configured index (this machine's local mirror) and its
cache, pinned by constraints.txt; nothing here reaches past what `make test` itself installs from.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.packaging

SKIP = shutil.ignore_patterns(".venv*", "var", "build", "dist", "*.egg-info", "__pycache__", ".git", "*.db*", "*.so")


def run(*cmd: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The `bin/` folder of a fresh venv with the freshly built wheel installed."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "src"
    shutil.copytree(REPO, source, ignore=SKIP)  # a clean tree: no stale build/ leftovers in the wheel
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", root / "dist", source, cwd=root)
    (wheel,) = (root / "dist").glob("agentbot-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "bots/defaults/config/intents.yaml" in names and "bots/defaults/data/orders.json" in names
    assert "adapters/storage/migrations/versions/0001_baseline.py" in names
    assert not [n for n in names if "clinc150" in n and not n.endswith("clinc150_train.yaml")], "the corpus stays home"
    assert not [n for n in names if "/sgd/" in n or "sgd-replies" in n], "the replies corpus stays home"
    assert "bots/admin/templates/review.html" in names  # the operator page's templates
    assert not [n for n in names if n.startswith("tests/") or n.endswith("_standin.py")], "test doubles stay home"
    # Pure Python: one wheel for every platform, with nothing to compile at install.
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    assert not [n for n in names if n.endswith((".so", ".pyd", ".c"))], names
    venv.create(root / "venv", with_pip=True)
    bin_dir = root / "venv" / "bin"
    run(bin_dir / "pip", "install", "--quiet", "-c", REPO / "constraints.txt", wheel, cwd=root)
    return bin_dir


def user_env(bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTBOT_", "VIRTUAL_ENV", "PYTHON"))}
    return {**env, "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"}


def test_the_wheel_chats_from_an_empty_folder(installed: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    env = user_env(installed)
    version = run("agentbot", "--version", cwd=empty, env=env)
    assert version.stdout.startswith("agentbot 0.")
    answer = run("agentbot", "chat", "--customer", "C-001", "-m", "Where's my order O-12345?", cwd=empty, env=env)
    assert "O-12345 has shipped" in answer.stdout
    assert answer.stderr == ""
    info = run("agentbot", "info", cwd=empty, env=env).stdout
    assert "(packaged defaults)" in info and "understanding: rules" in info
    # The database is the user's, in the folder they ran from, at the newest schema.
    current = run("agentbot", "db", "current", cwd=empty, env=env)
    assert "behind" not in current.stdout and (empty / "var" / "agentbot.db").is_file()


def test_init_writes_a_project_the_cli_then_uses(installed: Path, tmp_path: Path) -> None:
    env = user_env(installed)
    out = run("agentbot", "init", "mybot", cwd=tmp_path, env=env).stdout
    project = tmp_path / "mybot"
    assert "cd " in out and (project / "config" / "intents.yaml").is_file() and (project / "data" / "kb").is_dir()
    assert "OPENAI_API_KEY" in (project / ".env.example").read_text() and (project / "Procfile").is_file()
    info = run("agentbot", "info", cwd=project, env=env).stdout
    assert f"project: {project}" in info and "(current folder)" in info
    home = run("agentbot", "info", cwd=tmp_path, env={**env, "AGENTBOT_HOME": str(project)}).stdout
    assert "(AGENTBOT_HOME)" in home
    answer = run(
        "python", "-m", "bots", "chat", "--customer", "C-001", "-m", "Where's my order O-12345?", cwd=project, env=env
    )
    assert "O-12345 has shipped" in answer.stdout
