"""What the contracts' mutants share: a mutant is a store with one known, real-world bug, each
caught by the clause it breaks. :class:`~.base.Mutant` describes one; the database-failure and
flaky-backend mutants of every contract are here, the rest in each contract's
``adapters/<contract>/mutants/``."""
