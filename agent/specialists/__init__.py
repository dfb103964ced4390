"""Domain specialists: agents that plan for one kind of goal. They request tools; the router runs them."""
