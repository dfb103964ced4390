"""Discord through discord.py: slash commands, threads, buttons, admin alerts."""
