"""The project's configuration: the typed schema of config/*.yaml, reading it, the intents registry."""
