"""LLM providers behind agent.interfaces.LLMProvider; each SDK is imported only by its own module."""
