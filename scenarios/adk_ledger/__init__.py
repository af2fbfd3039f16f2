"""Checks of the adk-ledger contract: state machine, scripted scenarios, races."""
