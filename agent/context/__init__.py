"""What a turn carries: its context (`TurnContext`), its log and decisions, its output and its trace."""
