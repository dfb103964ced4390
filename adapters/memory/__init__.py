"""Preference memory: customer preferences that outlive a session (SQL by default, Zep by key)."""
