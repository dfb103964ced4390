"""Provider-neutral LLM plumbing of the core: metered calls, budgets, context fitting, grounding."""
