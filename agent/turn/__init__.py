"""One turn: read -> interpret -> act -> answer, its context, its log and outbox."""
