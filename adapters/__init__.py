"""Swappable implementations of the core's Protocols."""
