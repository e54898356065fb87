"""Job controllers the chosen training templates need: their CRDs and operators, pinned.

A PyTorchJob, JobSet or MPIJob applied to a cluster without its controller is either refused
(no CRD) or accepted and never run (CRD without operator). Versions match the CRDs the
generated objects are validated against (/work/shared/corpus/crds/SOURCES.md):

- PyTorchJob ``kubeflow.org/v1``: Kubeflow training-operator v1.9.4 (repository renamed
  kubeflow/trainer; v1 lives on ``release-1.9``), standalone kustomize overlay
  ``manifests/overlays/standalone`` (Kubeflow docs "Training Operator installation"). Its
  deployment ``training-operator`` (namespace ``kubeflow``) takes ``--gang-scheduler-name=volcano``
  to create Volcano PodGroups from ``runPolicy.schedulingPolicy``.
- JobSet ``jobset.x-k8s.io/v1alpha2``: kubernetes-sigs/jobset v0.12.0 release manifests
  (``releases/download/v0.12.0/manifests.yaml``, JobSet README "Installation").
- MPIJob ``kubeflow.org/v2beta1``: kubeflow/mpi-operator v0.8.0 ``deploy/v2beta1/mpi-operator.yaml``
  (mpi-operator README). Deployment ``mpi-operator`` (namespace ``mpi-operator``); gang
  scheduling through ``--gang-scheduling=volcano`` (mpi-operator ``cmd/mpi-operator`` options).

- TrainJob ``trainer.kubeflow.org/v1alpha1``: Kubeflow Trainer v2.3.0 ``manifests/overlays/manager``,
  which also installs JobSet v0.12.0 (``manifests/third-party/jobset``), so a blueprint with both
  kinds installs JobSet once, through the trainer. No flag is needed for gang scheduling: the
  runtime's ``podGroupPolicy`` selects the Volcano or coscheduling plugin.
- RayJob ``ray.io/v1``: the ``kuberay-operator`` chart 1.7.0 (``helm-chart/kuberay-operator``); with
  Volcano, ``batchScheduler.name: volcano`` makes the operator create each RayJob's PodGroup.
- LeaderWorkerSet ``leaderworkerset.x-k8s.io/v1``: the ``lws`` chart 0.10.0
  (``oci://registry.k8s.io/lws/charts``, LWS installation docs); with Volcano,
  ``gangSchedulingManagement.schedulerProvider: volcano`` (one PodGroup per group). The chart's
  ``image.manager.tag`` defaults to ``main`` with ``pullPolicy: Always`` at the v0.10.0 tag
  (charts/lws/values.yaml), so the release pins the tag.

All manifests are applied server-side: their CRDs exceed the client-side apply annotation limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuplane.generate.components import component
from gpuplane.generate.render.base import Bundle, helm_release


@dataclass(frozen=True, slots=True)
class RemoteManifest:
    """An upstream install applied as is (``kubectl apply --server-side -f/-k``)."""

    name: str
    ref: str
    kustomize: bool
    version: str
    source: str
    kinds: tuple[str, ...]


def _remote(name: str, kustomize: bool, kinds: tuple[str, ...]) -> RemoteManifest:
    """The pinned upstream install ``name`` (version, ref and citation from data/components.yaml)."""
    pinned = component(name)
    assert pinned.ref is not None, f"components.yaml: {name} has no ref"
    return RemoteManifest(name, pinned.ref, kustomize, pinned.version, pinned.source, kinds)


TRAINING_OPERATOR = _remote("training-operator", True, kinds=("pytorchjob",))
JOBSET = _remote("jobset", False, kinds=("jobset",))
MPI_OPERATOR = _remote("mpi-operator", False, kinds=("mpijob",))
TRAINER = _remote("trainer", True, kinds=("trainjob",))
CONTROLLERS = (TRAINING_OPERATOR, JOBSET, MPI_OPERATOR, TRAINER)
KUBERAY = component("kuberay-operator")
LWS = component("lws")


def _gang_patch(deployment: str, namespace: str, path: str, flag: str) -> dict[str, Any]:
    """A kustomize JSON6902 patch appending one flag to the controller's container."""
    return {
        "target": {"kind": "Deployment", "name": deployment, "namespace": namespace},
        "patch": f"- op: add\n  path: /spec/template/spec/containers/0/{path}/-\n  value: {flag}\n",
    }


def render(bundle: Bundle) -> None:
    bp = bundle.blueprint
    kinds = {w.kind for w in bp.workloads.training}
    manifests: list[RemoteManifest] = bundle.shared.setdefault("manifests", [])
    patches: list[dict[str, Any]] = bundle.shared.setdefault("kustomize_patches", [])
    volcano = bp.scheduler.name == "volcano"
    for ctl in CONTROLLERS:
        used = sorted(k for k in ctl.kinds if k in kinds)
        if not used:
            continue
        if ctl is JOBSET and "trainjob" in kinds:
            continue  # the trainer's overlay installs the same JobSet release
        manifests.append(ctl)
        bundle.decide(
            "controllers",
            f"workloads.training kind {', '.join(used)}",
            f"{ctl.name} {ctl.version}",
            "the template's custom resource needs its CRD and a running controller; the version matches "
            "the CRD schema the output is validated against",
            ctl.source,
        )
        if volcano and ctl is TRAINING_OPERATOR:
            patches.append(
                _gang_patch("training-operator", "kubeflow", "command", "--gang-scheduler-name=volcano")
            )
        if volcano and ctl is MPI_OPERATOR:
            patches.append(_gang_patch("mpi-operator", "mpi-operator", "args", "--gang-scheduling=volcano"))
        if volcano and ctl in (TRAINING_OPERATOR, MPI_OPERATOR):
            bundle.decide(
                "controllers",
                f"{ctl.name} gang scheduling",
                "volcano",
                "with the flag the operator creates a Volcano PodGroup from runPolicy.schedulingPolicy, so "
                "the launcher and every rank are admitted together",
                ctl.source,
            )
    if "rayjob" in kinds:
        _kuberay(bundle)
    if any(w.nodes > 1 for w in bp.workloads.inference):
        _lws(bundle)
    if "mpijob" in kinds:
        bundle.note(
            "70-workloads",
            "MPIJob images must contain Open MPI and openssh-server: workers run `sshd -De` and "
            "the launcher reaches them over SSH with the key mpi-operator mounts at /root/.ssh",
        )


def _kuberay(bundle: Bundle) -> None:
    volcano = bundle.blueprint.scheduler.name == "volcano"
    values: dict[str, Any] = {"batchScheduler": {"name": "volcano"}} if volcano else {}
    bundle.releases.append(
        helm_release(
            KUBERAY,
            "kuberay-system",
            values,
            order=25,
        )
    )
    bundle.decide(
        "controllers",
        "workloads.training kind rayjob",
        f"kuberay-operator {KUBERAY.version}" + (", batchScheduler volcano" if volcano else ""),
        "the RayJob needs KubeRay's CRDs and operator"
        + (
            "; with batchScheduler volcano the operator creates each RayJob's PodGroup (head + workers, the "
            "submitter left out) and sets schedulerName volcano on its pods"
            if volcano
            else ""
        ),
        KUBERAY.source,
    )


def _lws(bundle: Bundle) -> None:
    volcano = bundle.blueprint.scheduler.name == "volcano"
    values: dict[str, Any] = {"image": {"manager": {"tag": f"v{LWS.version}", "pullPolicy": "IfNotPresent"}}}
    if volcano:
        values["gangSchedulingManagement"] = {"schedulerProvider": "volcano"}
    bundle.releases.append(
        helm_release(
            LWS,
            "lws-system",
            values,
            order=25,
        )
    )
    bundle.decide(
        "controllers",
        "workloads.inference nodes > 1",
        f"lws {LWS.version}" + (", gang scheduling volcano" if volcano else ""),
        "a multi-node replica is a LeaderWorkerSet group; the chart's manager image tag defaults to main, so "
        "the release pins it"
        + ("; the Volcano provider gives each group a PodGroup of minMember = size" if volcano else ""),
        LWS.source,
    )
