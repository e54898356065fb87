"""Which kube-scheduler wording a cluster speaks, per release (1.28 and later).

Why a table: the FailedScheduling text is part of gpuplane's contract ("character for
character in the wording of the cluster's version", spec/cli.md), and upstream changed
several reason strings between releases. Every switch below names the upstream file, the
PR that changed it and the first release carrying the new text. Release membership was
checked in kubernetes/kubernetes ``CHANGELOG/CHANGELOG-1.<minor>.md`` (which lists each PR
under the release that shipped it) unless the entry says
"(unverified: inferred from PR date)".

Newest release checked: v1.36 (reference/scheduling.md reads the scheduler at v1.36.3).
The stored ``CHANGELOG-1.37.md`` only reaches v1.37.0-alpha.1 (re-checked: that is the only
stored version readable). ``CHANGELOG-1.38.md`` has "Changelog since v1.37.0", so v1.37.0 is out,
but what it changed is not readable here, so 1.37 is not modelled and newer versions are
worded as 1.36.
"""

from __future__ import annotations

from dataclasses import dataclass

# The modelled range and the version parser live in the model layer (lint reads them too); the
# scheduler's callers keep importing them from here.
from gpuplane.k8s.versions import NEWEST_MINOR, OLDEST_MINOR, parse_version
from gpuplane.k8s.versions import parse_minor as parse_minor

# How nodes cut by a PreFilterResult (e.g. NodeAffinity on ``metadata.name``) are recorded.
# pkg/scheduler/schedule_one.go findNodesThatFitPod:
# - "unrecorded" (v1.28, v1.29): they get no entry in NodeToStatusMap, so FitError.Error()
#   does not count them and preemption.go nodesWherePreemptionMightHelp treats them as
#   potential nodes (a missing status reads as Success, not UnschedulableAndUnresolvable);
# - "filtered" (v1.30, v1.31): PR #119779 (CHANGELOG-1.30.md, v1.30.0-alpha.1) stamps them
#   UnschedulableAndUnresolvable `node is filtered out by the prefilter result`;
# - "plugins" (v1.32 on): PR #126022 (CHANGELOG-1.32.md, v1.32.0-alpha.1, "Added
#   absentNodesStatus") replaced the map by NodeToStatus, whose absent-nodes status reads
#   `node(s) didn't satisfy plugin(s) [<plugins>]`.
ABSENT_UNRECORDED = "unrecorded"
ABSENT_FILTERED = "filtered"
ABSENT_PLUGINS = "plugins"


@dataclass(frozen=True, slots=True)
class Wording:
    """Version-dependent switches of kube-scheduler's messages (one release)."""

    minor: int
    # pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go Filter: the reason
    # names the first untolerated taint, `node(s) had untolerated taint {%s: %s}` (PR #109119),
    # until PR #134740 made it the generic `node(s) had untolerated taint(s)`: first in
    # v1.35.0 (CHANGELOG-1.35.md, listed from v1.35.0-alpha.3) and, through the cherry-pick
    # PR #135023, in v1.34.2 (CHANGELOG-1.34.md, section v1.34.2; not in v1.34.1). No
    # cherry-pick to release-1.33 or older was found.
    taint_with_key_value: bool
    # pkg/scheduler/framework/plugins/volumebinding/binder.go ErrReasonNodeConflict:
    # `node(s) had volume node affinity conflict` until PR #129887 (merged Jan 2025) made it
    # `node(s) didn't match PersistentVolume's node affinity`: v1.33 (CHANGELOG-1.33.md, listed
    # under v1.33.0-alpha.3 "Other (Cleanup or Flake)", so first in v1.33.0).
    volume_conflict_reason: str
    # pkg/scheduler/framework/plugins/noderesources/fit.go Filter: a request above the node's
    # whole allocatable is UnschedulableAndUnresolvable from PR #131345 (opened 2025-04-17, after
    # v1.33's code freeze): v1.34 (unverified: the PR's release note is NONE, so no CHANGELOG
    # lists it; it is absent from CHANGELOG-1.34.md v1.34.0-alpha.1 as expected).
    fit_unresolvable_over_allocatable: bool
    # pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go: the plugin is in
    # the default profile once DRA is GA and on by default, v1.34 (PR #132706, CHANGELOG-1.34.md
    # v1.34.0 "Graduated core functionality to general availability"). Its no-op PostFilter
    # texts (`no new claims to deallocate`, or the cycle-state read error `not found` after a
    # PreFilter rejection) precede the preemption clause; PR #140222 that hides them was still
    # open when last seen (Jul 2026), so every modelled release up to v1.36 has them.
    dra_postfilter_text: bool
    # How PreFilterResult-cut nodes are recorded: ABSENT_UNRECORDED / _FILTERED / _PLUGINS.
    prefilter_absent: str
    # pkg/scheduler/framework/plugins/noderesources/fit.go PreFilter: SidecarContainers is
    # alpha (off) in v1.28 and beta (on) from v1.29: PR #121579 "The SidecarContainers feature
    # has graduated to beta and is enabled by default" (CHANGELOG-1.29.md, v1.29.0-alpha.3).
    sidecars_enabled: bool
    # Patch release when known (``--kubernetes-version 1.34.2``); None = the minor's .0.
    patch: int | None = None

    # Preemption clause (pkg/scheduler/framework/types.go FitError.Error()): older releases
    # appended the PostFilter message with the histogram's `" %v."` separator although the
    # message already ends with a period, giving `... for incoming pod..`; PR #117588 dropped
    # the extra period. Its release note is NONE (no CHANGELOG lists it); issue #123301
    # (Feb 2024, a v1.29 cluster) still shows `..`, and the PR's author closed the duplicate fix
    # #123302 as "already resolved in 1.30": so `..` up to v1.29, one period from v1.30.
    # (From the maintainer's word in those threads, not a tag.)
    postfilter_double_period: bool = False

    @property
    def label(self) -> str:
        return f"1.{self.minor}" if self.patch is None else f"1.{self.minor}.{self.patch}"


def wording_for(minor: int, patch: int | None = None) -> Wording:
    """The wording of kube-scheduler 1.<minor>[.<patch>] (clamped to the supported range)."""
    if minor > NEWEST_MINOR or minor < OLDEST_MINOR:
        patch = None
    minor = max(OLDEST_MINOR, min(NEWEST_MINOR, minor))
    if minor >= 32:
        absent = ABSENT_PLUGINS
    elif minor >= 30:
        absent = ABSENT_FILTERED
    else:
        absent = ABSENT_UNRECORDED
    return Wording(
        minor=minor,
        taint_with_key_value=minor < 34 or (minor == 34 and (patch or 0) < 2),
        volume_conflict_reason=(
            "node(s) didn't match PersistentVolume's node affinity"
            if minor >= 33
            else "node(s) had volume node affinity conflict"
        ),
        fit_unresolvable_over_allocatable=minor >= 34,
        dra_postfilter_text=minor >= 34,
        prefilter_absent=absent,
        sidecars_enabled=minor >= 29,
        postfilter_double_period=minor < 30,
        patch=patch,
    )


def resolve_wording(explicit: str | None, cluster_version: str | None) -> Wording:
    """spec/cli.md order: ``--kubernetes-version``, else the cluster's, else the newest known.

    ``cluster_version`` is what ClusterState reports: the live server version or the highest
    kubelet minor among the nodes (the control plane is never older than its kubelets). A
    version without a patch number is worded as that minor's first release (.0).
    Raises ValueError on an explicit version that is not ``1.MINOR[.PATCH]``.
    """
    if explicit:
        parsed = parse_version(explicit)
        if parsed is None:
            raise ValueError(f"--kubernetes-version {explicit!r} is not a Kubernetes version like 1.31")
        return wording_for(*parsed)
    parsed = parse_version(cluster_version)
    return wording_for(*parsed) if parsed is not None else wording_for(NEWEST_MINOR)
