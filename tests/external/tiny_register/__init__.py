"""tiny-register: a contract of two operations, declared outside the kit.

It is the proof of docs/extending.md's "Adding a contract": one package (spec, model, stores,
mutant, checks, declaration) and one entry point (``fencepost.contracts``), no kit file edited.
A versioned register: ``put(key, value, version)`` writes when ``version`` is the key's
current version (0 for a new key) and answers the new version; ``get(key)`` answers
``{"value": ..., "version": ...}``.
"""
