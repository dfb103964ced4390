"""agentbot's core: the domain of a turn and the Protocols its outer layers implement.

The core imports no channel, SDK, database library, `adapters` or `bots`. The whole application is
built by the composition root in `bots.app` (`from bots import build_app`), which returns an
`agent.app.App`.
"""
