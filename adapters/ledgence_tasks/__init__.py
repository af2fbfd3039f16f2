"""Built-in ``ledgence-tasks`` stores (work in progress): the ``memory`` store over one core."""
