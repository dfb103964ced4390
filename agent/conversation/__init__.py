"""The conversation state machine: goals and their stack, confirmations, human handoff."""
