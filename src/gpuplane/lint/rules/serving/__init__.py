"""Rules of category ``serving``: inference servers on GPUs."""
