"""Contracts as data: operations, outcomes, errors, clauses and capabilities.

Pure code: nothing here imports adapters, databases, threads, wall-clock time or randomness.
"""
