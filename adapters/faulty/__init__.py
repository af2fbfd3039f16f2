"""Known-faulty adapters: correct adapters with one real-world bug each, used to prove the kit's checks."""
