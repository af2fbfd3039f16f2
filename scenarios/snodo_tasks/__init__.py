"""Checks of the snodo-tasks contract: state machine, scripted scenarios, races."""
