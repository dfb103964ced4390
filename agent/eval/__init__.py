"""Conversation suites: a YAML contract for multi-turn expectations, and the runner."""
