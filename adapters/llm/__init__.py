"""LLM providers behind agent.llm.provider.LLMProvider; each SDK is imported only by its own module."""
