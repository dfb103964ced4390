"""Embedded understanding models behind agent.understanding.scorer.ExampleScorer."""
