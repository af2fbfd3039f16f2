"""Reference models: pure step functions ``step(state, op, ctx) -> Step``.

Nothing here performs I/O, reads a wall clock or draws random numbers.
"""
