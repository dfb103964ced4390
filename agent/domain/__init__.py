"""The typed values that cross the core's seams: messages, intents, results, records, catalog items."""
