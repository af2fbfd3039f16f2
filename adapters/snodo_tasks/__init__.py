"""Built-in ``snodo-tasks`` stores: ``memory`` and the SQLAlchemy store (SQLite, PostgreSQL)."""
