"""Known-faulty adapters: correct stores with one real-world bug each, proving the kit's checks."""
