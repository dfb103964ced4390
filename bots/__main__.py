"""`python -m bots` runs the `agentbot` command."""

import sys

from bots.cli import main

sys.exit(main())
