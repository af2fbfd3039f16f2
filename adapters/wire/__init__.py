"""Stores in any language: the kit's side of the ``fencepost-wire/1`` protocol
(``docs/protocol.md``). :class:`~.store.WireFactory` is what ``--adapter exec:COMMAND`` runs."""
