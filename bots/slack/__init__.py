"""Slack through slack-bolt: events in, threaded replies and buttons out, admin alerts."""
