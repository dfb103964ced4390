"""Stand-in Slack and Discord servers on 127.0.0.1: test doubles that `agentbot bench` reuses."""
