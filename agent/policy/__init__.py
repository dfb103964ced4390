"""Policy: the YAML rule file and the engine that decides every tool call before it runs."""
