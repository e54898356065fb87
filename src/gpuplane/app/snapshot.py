"""``snapshot`` as a service: a live cluster (list calls only) or existing dumps, reduced to the
allow-list and written to one file.

The snapshot's read errors are ``error`` messages and what the allow-list left out a note; an
unwritable file, or nothing read at all, is an :class:`~gpuplane.app.outcome.AppError` (what was
read is still written when some of it came through).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplane.app.outcome import AppError, Messages, Surface

if TYPE_CHECKING:
    from gpuplane.sources.snapshot import Snapshot


@dataclass(frozen=True, slots=True)
class SnapshotRequest:
    """``from_paths`` (kubectl dumps) instead of the live cluster of ``context``/``kubeconfig``."""

    output: str
    context: str | None = None
    kubeconfig: str | None = None
    from_paths: tuple[str, ...] = ()
    progress: bool = False


def run(request: SnapshotRequest, messages: Messages, surface: Surface | None = None) -> Snapshot:
    """Read, reduce and write the snapshot; ``snapshot.errors`` says whether all of it was read.
    (``surface`` is taken like every service's; no message here names an option.)"""
    # deferred for start-up time
    from gpuplane.sources.snapshot import snapshot_files, snapshot_live, write_snapshot

    if request.from_paths:
        snap = snapshot_files(request.from_paths)
    else:
        snap = snapshot_live(request.context, request.kubeconfig, progress=request.progress)
    for error in snap.errors:
        messages.error(str(error))
    if snap.dropped:
        messages.note(
            f"left out {snap.dropped} object(s) of kinds the engines do not read"
            " (Secrets, kubeconfigs, ...): snapshots keep an allow-list"
        )
    if not snap.objects and snap.errors:
        raise AppError(f"nothing to write to {request.output}")
    try:
        write_snapshot(snap, request.output)
    except OSError as exc:
        raise AppError(f"cannot write {request.output}: {exc.strerror or exc}") from None
    return snap
