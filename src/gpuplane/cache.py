"""Where gpuplane keeps derived data between runs (the knowledge-base index, the rule index).

Everything kept there is rebuilt from gpuplane's own files when missing or stale, so deleting
the folder, or ``GPUPLANE_CACHE_DIR=off``, only costs time.
"""

from __future__ import annotations

import os


def cache_dir() -> str | None:
    """``$GPUPLANE_CACHE_DIR``, else ``$XDG_CACHE_HOME/gpuplane``, else ``~/.cache/gpuplane``;
    None when ``GPUPLANE_CACHE_DIR`` is set to ``off``."""
    env = os.environ.get("GPUPLANE_CACHE_DIR")
    if env:
        return None if env.lower() in ("off", "0", "none") else env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gpuplane")


def write_atomically(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it, so that a reader never
    sees half a file; creates the folder. Raises OSError."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
