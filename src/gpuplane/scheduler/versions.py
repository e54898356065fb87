"""Which kube-scheduler wording a cluster speaks, per minor release (1.28 and later).

Why a table: the FailedScheduling text is part of gpuplane's contract ("character for
character in the wording of the cluster's version", spec/cli.md), and upstream changed
several reason strings between minors. Every switch below names the upstream change; the
release numbers come from reference/scheduling.md §1.6 and from events seen on real
clusters of those versions (cited per field).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

OLDEST_MINOR = 28
# Newest release whose scheduler strings were read (reference/scheduling.md reads v1.36.3).
NEWEST_MINOR = 36

_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)")


@dataclass(frozen=True, slots=True)
class Wording:
    """Version-dependent switches of kube-scheduler's messages (one minor release)."""

    minor: int
    # pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go: the Filter reason
    # names the first untolerated taint (`node(s) had untolerated taint {%s: %s}`, PR #109119)
    # until PR #134740 (v1.35; cherry-picked into a later v1.34 patch, #135023) made it the
    # generic `node(s) had untolerated taint(s)`.
    taint_with_key_value: bool
    # pkg/scheduler/framework/plugins/volumebinding/binder.go ErrReasonNodeConflict:
    # `node(s) had volume node affinity conflict` before PR #129887 (v1.33).
    volume_conflict_reason: str
    # pkg/scheduler/framework/plugins/noderesources/fit.go: a request above the node's whole
    # allocatable is UnschedulableAndUnresolvable from PR #131345 (v1.34) on.
    fit_unresolvable_over_allocatable: bool
    # pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go: DRA is on by
    # default from v1.34 (GA); its no-op PostFilter texts (`no new claims to deallocate`, or the
    # cycle-state read error `not found` after a PreFilter rejection) precede the preemption
    # clause until PR #140222 (after v1.36).
    dra_postfilter_text: bool
    # pkg/scheduler/schedule_one.go findNodesThatFitPod: nodes cut by a PreFilterResult were
    # stamped `node is filtered out by the prefilter result` (fix for issue #119770) until the
    # NodeToStatus reader with an absent-nodes status (v1.32) reported them as
    # `node(s) didn't satisfy plugin(s) [<plugins>]`.
    absent_nodes_plugin_status: bool
    # pkg/scheduler/framework/plugins/noderesources/fit.go PreFilter: SidecarContainers is
    # alpha (off) in v1.28 and beta (on) from v1.29.
    sidecars_enabled: bool

    @property
    def label(self) -> str:
        return f"1.{self.minor}"


def wording_for(minor: int) -> Wording:
    """The wording of kube-scheduler 1.<minor> (clamped to the supported range)."""
    minor = max(OLDEST_MINOR, min(NEWEST_MINOR, minor))
    return Wording(
        minor=minor,
        taint_with_key_value=minor < 35,
        volume_conflict_reason=(
            "node(s) didn't match PersistentVolume's node affinity"
            if minor >= 33
            else "node(s) had volume node affinity conflict"
        ),
        fit_unresolvable_over_allocatable=minor >= 34,
        dra_postfilter_text=34 <= minor <= 36,
        absent_nodes_plugin_status=minor >= 32,
        sidecars_enabled=minor >= 29,
    )


def parse_minor(version: str | None) -> int | None:
    """``"1.31"``, ``"v1.31.4"``, ``"v1.30.2-eks-1234"`` -> 31; anything else -> None."""
    if not version:
        return None
    match = _VERSION_RE.match(version.strip())
    if match is None or match.group(1) != "1":
        return None
    return int(match.group(2))


def resolve_wording(explicit: str | None, cluster_version: str | None) -> Wording:
    """spec/cli.md order: ``--kubernetes-version``, else the cluster's, else the newest known.

    ``cluster_version`` is what ClusterState reports: the live server version or the highest
    kubelet minor among the nodes (the control plane is never older than its kubelets).
    Raises ValueError on an explicit version that is not ``1.MINOR``.
    """
    if explicit:
        minor = parse_minor(explicit)
        if minor is None:
            raise ValueError(f"--kubernetes-version {explicit!r} is not a Kubernetes version like 1.31")
        return wording_for(minor)
    minor = parse_minor(cluster_version)
    return wording_for(minor if minor is not None else NEWEST_MINOR)
