"""SessionStore implementations."""
