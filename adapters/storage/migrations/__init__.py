"""Alembic migrations for the tables in adapters/storage/schema.py (see docs/deploy.md, "Migrations")."""
