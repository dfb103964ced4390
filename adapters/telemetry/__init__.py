"""TelemetrySink implementations."""
