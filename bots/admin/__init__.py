"""The operator page: counts, conversations, handoffs and the review inbox, on the bot's own HTTP server."""
