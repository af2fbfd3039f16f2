"""Real stores behind the contracts' protocols, and the known-faulty adapters that test the kit."""
