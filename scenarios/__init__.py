"""The simulation: clock, harness, state machines, scripted scenarios and races."""
