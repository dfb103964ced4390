"""Alembic migrations for the tables in adapters/storage/schema.py (see README, "Database migrations")."""
