"""Scheduling-equivalent pods: one key for the pods kube-scheduler cannot tell apart.

Why: Pending pods come in groups (the replicas of one Job, Deployment, PyTorchJob or
LeaderWorkerSet), identical to the scheduler but for their identity, and a read-only explaining
session evaluates each against the same cluster state. A pod's key is the typed :class:`Pod`
(every field some engine reads is declared there; what a dump adds beside is dropped on decode)
encoded whole, minus the fields no scheduling question reads:

- ``metadata.name``, ``generateName``, ``uid``, ``creationTimestamp``, ``ownerReferences``: no
  Filter, PreFilter, PreEnqueue or PostFilter plugin of the default profile reads them for the
  incoming pod except through the identities below (``ownerReferences`` feed only Score:
  helper/spread.go ``DefaultSelector`` through ``spread_scoring``, never ``evaluate``);
  ``resourceVersion`` and ``managedFields`` are not even decoded;
- ``status.conditions``, ``containerStatuses``, ``initContainerStatuses``, ``startTime``,
  ``reason``, ``message``: DefaultPreemption reads conditions and start times of the *victims*
  (``MoreImportantPod``, the terminating check of ``PodEligibleToPreemptOthers``), never of the
  preemptor; its ``PodScheduled`` condition differs between replicas only by its times.

A pod whose answer depends on its identity keys on its name and uid too:
- a generic ephemeral volume: its claim is ``<pod>-<volume>`` and must be controlled by the pod
  (k8s.io/component-helpers/storage/ephemeral ``VolumeClaimName``, ``VolumeIsForPod``), read by
  VolumeBinding, VolumeRestrictions, VolumeZone and NodeVolumeLimits;
- DRA ``spec.resourceClaims``: a template's claim is named in ``status.resourceClaimStatuses``
  and owned by the pod's uid, a claim's ``reservedFor`` names uids
  (k8s.io/dynamic-resource-allocation/resourceclaim ``Name``, ``IsForPod``);
- ``status.nominatedNodeName``: the pod is one of the nominated pods, and every Filter pass
  skips exactly itself by uid (runtime/framework.go ``addGEPriorityNominatedPods``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuplane.k8s.objects import Pod


def needs_identity(pod: Pod) -> bool:
    """Whether the scheduler's answer for ``pod`` may depend on its name or uid (module docstring)."""
    spec = pod.spec
    return (
        bool(spec.resource_claims)
        or bool(pod.status.nominated_node_name)
        or any(volume.ephemeral is not None for volume in spec.volumes)
    )


def scheduling_key(pod: Pod) -> bytes:
    """Equal for two pods exactly when kube-scheduler reads the same of both (module docstring).

    Dicts keep their order in the key, so two pods whose labels differ only in order get two
    keys: a missed share, never a wrong one."""
    import msgspec  # deferred for start-up time

    meta = pod.metadata
    status = pod.status
    identity = needs_identity(pod)
    stripped = msgspec.structs.replace(
        pod,
        metadata=msgspec.structs.replace(
            meta,
            name=meta.name if identity else "",
            uid=meta.uid if identity else "",
            generate_name="",
            creation_timestamp=None,
            owner_references=[],
        ),
        status=msgspec.structs.replace(
            status,
            conditions=[],
            container_statuses=[],
            init_container_statuses=[],
            start_time=None,
            reason="",
            message="",
        ),
    )
    return msgspec.json.encode(stripped)
