"""The pytest layer: the only code that imports pytest."""
