"""Rules of category ``gpu``: requesting accelerators, one module per theme."""
