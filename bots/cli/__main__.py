"""`python -m bots.cli`: the agentbot command line."""

from bots.cli.main import main

raise SystemExit(main())
