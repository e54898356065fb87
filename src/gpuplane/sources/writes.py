"""Rewriting a user's file in place without leaving it: the one way ``lint --fix`` writes.

The new text goes to a fresh temporary file in the same folder (``tempfile.mkstemp``: a
random name opened with ``O_CREAT | O_EXCL``, so a file or symlink planted under a guessable
name is never followed), takes the original's permission bits, is flushed to disk and then
renamed over the original (atomic on POSIX: a reader sees the old or the new file, never half).
A symlink is refused unless the caller asks to rewrite its target; anything but a regular file
(a FIFO, a device) is refused.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile


class WriteRefused(OSError):
    """The file cannot be rewritten safely; the message says why (one line)."""


def line_ending(raw: bytes) -> str:
    """``\\r\\n`` when most line breaks of ``raw`` are CRLF, else ``\\n``."""
    crlf = raw.count(b"\r\n")
    return "\r\n" if crlf and crlf * 2 >= raw.count(b"\n") else "\n"


def rewrite_file(path: str, text: str, *, newline: str = "\n", follow_symlinks: bool = False) -> str:
    """Replace the content of ``path`` with ``text`` (``\\n`` line breaks written as ``newline``).

    Returns the path actually written (the symlink's target when following one).
    """
    target = path
    if os.path.islink(path):
        if not follow_symlinks:
            raise WriteRefused(f"{path}: is a symlink; not rewritten (--follow-symlinks rewrites its target)")
        target = os.path.realpath(path)
    try:
        info = os.stat(target, follow_symlinks=False)
    except OSError as exc:
        raise WriteRefused(f"{path}: cannot write: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise WriteRefused(f"{path}: not a regular file; not rewritten")
    folder = os.path.dirname(os.path.abspath(target))
    data = text.replace("\n", newline).encode("utf-8") if newline != "\n" else text.encode("utf-8")
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(target)}.", suffix=".gpuplane-tmp")
    except OSError as exc:
        raise WriteRefused(f"{path}: cannot write next to it: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), stat.S_IMODE(info.st_mode))
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target
