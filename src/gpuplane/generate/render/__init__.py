"""One renderer per platform component; each adds objects and decisions to a :class:`Bundle`."""
