"""Checks of the ledgence-tasks contract (first slice): state machine, scenarios, races."""
