"""Real stores behind the contracts' protocols, and the mutants that test the kit."""
