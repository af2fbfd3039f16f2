"""Built-in ``adk-ledger`` stores: ``memory`` and the SQLAlchemy store (SQLite, PostgreSQL)."""
