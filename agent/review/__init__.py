"""Learning from traffic: misses kept for review, and the labels that become example sentences."""
