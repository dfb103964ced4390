"""Embedded understanding models behind agent.interfaces.ExampleScorer."""
