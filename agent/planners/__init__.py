"""Planners: each agent plans its goal in rules mode (templates, specialists) or with an LLM (`llm_agent`)."""
