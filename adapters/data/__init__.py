"""DataSource implementations."""
