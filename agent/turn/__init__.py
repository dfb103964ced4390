"""One turn: read -> interpret -> act -> answer; the loop, its attempts and its desk for channel events."""
