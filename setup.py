"""Packaging metadata lives in pyproject.toml; this ships the default project inside the wheel.

`config/` and `data/` stay at the repository root, where people edit them; a built wheel carries a
copy in `bots/defaults/`, which `agentbot` falls back to and `agentbot init` copies from.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# data/clinc150 is the corpus the tests and `agentbot eval --nlu` measure with in a checkout (5 MB,
# CC BY 3.0), data/sgd the replies `agentbot eval --replies` measures with (4 MB, CC BY-SA 4.0): a
# store's project has no use for them, so the wheel leaves them out.
NOT_SHIPPED = ("__pycache__", "clinc150", "sgd")


class BuildWithDefaultProject(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads them from the checkout
        for name in ("config", "data"):
            target = Path(self.build_lib) / "bots" / "defaults" / name
            shutil.copytree(HERE / name, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*NOT_SHIPPED))


setup(cmdclass={"build_py": BuildWithDefaultProject})
