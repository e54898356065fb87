"""The MCP server's file sandbox: every path a tool is given resolves inside the server's roots.

Whoever drives the server (an assistant, a prompt injected into a document it read) chooses the
paths, so the server reads and writes only below its roots: the working directory, or the
``--root`` folders ``gpuplane mcp`` was started with. A path is resolved (``..`` and symlinks
followed) before the check, so neither ``../../etc/shadow`` nor a symlink out of a root gets
through; ``/proc``, ``/dev`` and ``/sys`` are refused even under a root (``/dev/zero`` never
ends, ``/proc/self/environ`` holds the server's secrets).

Until :func:`configure` is called (tool functions used as a library, in tests) no root is set
and paths are only checked for shape; ``serve_stdio`` always configures the roots first.
"""

from __future__ import annotations

import os

SPECIAL_TREES = ("/proc", "/dev", "/sys")

_roots: tuple[str, ...] | None = None


class PathRefused(ValueError):
    """A path outside the sandbox (one line; the server returns it as a tool error)."""


def configure(roots: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Set the server's roots (resolved); the first is where relative paths start."""
    global _roots
    resolved = tuple(os.path.realpath(r) for r in roots) or (os.path.realpath(os.getcwd()),)
    for root in resolved:
        if not os.path.isdir(root):
            raise PathRefused(f"--root {root}: not a folder")
    _roots = resolved
    return resolved


def reset() -> None:
    """Back to no sandbox (tests)."""
    global _roots
    _roots = None


def roots() -> tuple[str, ...] | None:
    return _roots


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def check(path: str, what: str) -> str:
    """``path`` when it may be used; relative paths start at the first root.

    The returned text is the caller's own spelling (so findings name files as the user wrote
    them), made absolute against the first root when the server's working directory differs.
    """
    path = path.strip()
    if not path:
        raise PathRefused(f"{what}: empty path")
    if path == "-":
        raise PathRefused(f"{what}: '-' (standard input) is not available over MCP; pass the text or a path")
    if _roots is None:
        return path
    given = path if os.path.isabs(path) else os.path.join(_roots[0], path)
    full = os.path.realpath(given)
    if any(_under(full, tree) for tree in SPECIAL_TREES) and not any(
        _under(root, tree) for root in _roots for tree in SPECIAL_TREES
    ):
        raise PathRefused(f"{what}: {path!r} is a system file tree (/proc, /dev, /sys); not read")
    if not any(_under(full, root) for root in _roots):
        shown = ", ".join(_roots)
        raise PathRefused(
            f"{what}: {path!r} is outside the server's root ({shown}); start `gpuplane mcp --root DIR` "
            "to allow another folder"
        )
    if any(_under(full, tree) for tree in SPECIAL_TREES):
        raise PathRefused(f"{what}: {path!r} is a system file tree (/proc, /dev, /sys); not read")
    return path if os.path.isabs(path) or os.getcwd() == _roots[0] else given
