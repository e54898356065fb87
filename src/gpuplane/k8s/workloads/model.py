"""The workload model every engine reads: :class:`PodSet` (a group of identical pods a
controller creates) and :class:`Gang` (pods that must be placed together).

Why one model: lint rules, the scheduler simulator and diagnose all need "which pods
does this object create, how many, from which template, and must they start
together?". Answering that once per controller kind (this package) keeps
``spec.pytorchReplicaSpecs`` out of every rule (design.md "One model, many engines").

Templates are NOT copied: ``PodSet.template`` is the dict inside the manifest (so a
finding's field path, ``template_path``, points at the real line). The only exceptions
are templates a controller *builds* from its own fields (KServe predictors, Spark
drivers, TrainJob trainer overrides): those are marked ``synthetic=True`` and their
``template_path`` points at the controller field they were built from, so
``Manifest.field_line`` still lands on the closest real line.
"""

from __future__ import annotations

from typing import Any

import msgspec

from gpuplane.k8s.fields import as_dict, as_int, as_list, as_str, child, dig
from gpuplane.k8s.manifest import FieldPath, Manifest
from gpuplane.k8s.objects import EmptyDirSource, Pod, Volume, VolumeMount, prune_nulls
from gpuplane.lazy_pattern import LazyPattern
from gpuplane.records import Record


class Gang(Record):
    """Pods that a gang mechanism places all-or-nothing.

    ``mechanism`` says who enforces it: ``volcano`` (PodGroup + Volcano scheduler),
    ``coscheduling`` (scheduler-plugins PodGroup), ``kueue`` (admission of the whole
    workload, all-or-nothing with ``waitForPodsReady``), ``training-operator`` (the
    Kubeflow operator creates a PodGroup for its configured gang scheduler), ...
    ``min_member`` is the number of pods that must fit together (None = unknown).
    """

    __slots__ = ("mechanism", "min_member", "name", "queue")
    mechanism: str
    name: str
    min_member: int | None
    queue: str | None

    def __init__(self, mechanism: str, name: str, min_member: int | None, queue: str | None = None) -> None:
        self.mechanism = mechanism
        self.name = name
        self.min_member = min_member
        self.queue = queue


class PodSet(Record):
    """A group of identical pods created by one controller object.

    Extra fields beyond the shared contract:
    - ``volume_claim_templates``: StatefulSet / LeaderWorkerSet PVC templates (each pod gets its own claims).
    - ``count_known``: False when ``count`` is a placeholder (a DaemonSet expanded without nodes).
    - ``max_count``: upper bound for elastic / autoscaled sets (PyTorch elastic, Ray, KServe), else None.
    - ``suspended`` / ``resume_count``: the controller is suspended (``spec.suspend``,
      ``runPolicy.suspend``): it creates no pods now, so ``count`` is 0 for every engine that
      looks at the present (lint, diagnose); ``resume_count`` is the ``count`` the set will have
      once the suspension is lifted (Kueue lifts it on admission, reference/scheduling.md §4.4),
      which is what the simulator submits to Kueue.
    - ``priority_class``: priority class the gang/PodGroup carries (``runPolicy.schedulingPolicy.priorityClass``).
    - ``template_source``: the object whose data holds ``template`` when it is not ``source``
      (a TrainJob's pods come from its TrainingRuntime); None means ``source``.
    - ``synthetic``: the template was built or patched from controller fields (not the dict at ``template_path``).
    - ``overrides``: for a synthetic template, which of its fields another object writes:
      ``(prefix, owner, owner_path)`` with ``prefix`` relative to the template (e.g.
      ``("spec", "containers", 0, "resources")`` replaced by a TrainJob's
      ``("spec", "trainer", "resourcesPerNode")``), so findings on those fields point at the
      field the user wrote, not at the runtime field it replaced.
    - ``managed_shm``: the controller that mounts a memory-backed ``emptyDir`` at ``/dev/shm`` in the
      pod's first app container when that container mounts nothing there (KubeAI: volume ``dshm``
      without a size limit, internal/modelcontroller/engine_vllm.go; KubeRay: volume
      ``shared-mem``, ``sizeLimit`` = the container's memory limit, else its request;
      ray-operator/controllers/ray/common/pod.go ``BuildPod`` -> ``addEmptyDir(...,
      SharedMemoryVolumeName, "/dev/shm", StorageMediumMemory)`` and ``makeEmptyDirVolume``).
      :meth:`pod` adds that volume and mount, so every engine sees the pod the controller creates.
    - ``closed``: the controller builds the whole pod (a KubeAI Model, a NIMService): the template's
      fields that no ``overrides`` entry maps to a field of the object are the controller's own
      choices, so a finding on one of them is nothing the user can act on in this object, and
      lint does not report it.
    - ``injected``: ``{"metadata": {...}, "spec": {...}}`` the controller adds to every pod it creates
      (DaemonSet tolerations, Volcano Job ``schedulerName``); applied to :meth:`pod` only, never
      to ``template``, so field paths stay true. Lists are appended, maps merged, scalars set when unset.
    """

    __slots__ = (
        "_pod",
        "closed",
        "count",
        "count_known",
        "distributed",
        "gang",
        "injected",
        "managed_shm",
        "max_count",
        "name",
        "overrides",
        "pod_error",
        "priority_class",
        "queue",
        "resume_count",
        "role",
        "source",
        "suspended",
        "synthetic",
        "template",
        "template_path",
        "template_source",
        "volume_claim_templates",
    )
    source: Manifest
    name: str
    role: str
    count: int
    template: dict
    template_path: FieldPath
    gang: Gang | None
    queue: str | None
    distributed: bool
    volume_claim_templates: list[dict]
    count_known: bool
    max_count: int | None
    priority_class: str | None
    template_source: Manifest | None
    synthetic: bool
    injected: dict | None
    overrides: tuple[tuple[FieldPath, Manifest, FieldPath], ...]
    pod_error: str | None
    suspended: bool
    resume_count: int
    managed_shm: str | None
    closed: bool
    _pod: Pod | None  # the typed pod, once converted

    def __init__(
        self,
        source: Manifest,
        name: str,
        role: str,
        count: int,
        template: dict,
        template_path: FieldPath,
        gang: Gang | None = None,
        queue: str | None = None,
        distributed: bool = False,
        volume_claim_templates: list[dict] | None = None,
        count_known: bool = True,
        max_count: int | None = None,
        priority_class: str | None = None,
        template_source: Manifest | None = None,
        synthetic: bool = False,
        injected: dict | None = None,
        overrides: tuple[tuple[FieldPath, Manifest, FieldPath], ...] = (),
        pod_error: str | None = None,
        suspended: bool = False,
        resume_count: int = 0,
        managed_shm: str | None = None,
        closed: bool = False,
    ) -> None:
        self.source = source
        self.name = name
        self.role = role
        self.count = count
        self.template = template
        self.template_path = template_path
        self.gang = gang
        self.queue = queue
        self.distributed = distributed
        self.volume_claim_templates = [] if volume_claim_templates is None else volume_claim_templates
        self.count_known = count_known
        self.max_count = max_count
        self.priority_class = priority_class
        self.template_source = template_source
        self.synthetic = synthetic
        self.injected = injected
        self.overrides = overrides
        self.pod_error = pod_error
        self.suspended = suspended
        self.resume_count = resume_count
        self.managed_shm = managed_shm
        self.closed = closed
        self._pod = None

    @property
    def spec_path(self) -> FieldPath:
        """Path of the pod spec inside the source object (``("spec",)`` for a bare Pod)."""
        return (*self.template_path, "spec")

    @property
    def kind(self) -> str:
        return self.source.kind

    @property
    def key(self) -> str:
        """``Kind/namespace/name:podset`` — a stable id for reports and JSON."""
        return f"{self.source.kind}/{self.source.namespace or 'default'}/{self.source.name}:{self.name}"

    def pod(self) -> Pod:
        """The template as a typed :class:`Pod`, converted on first use and cached.

        Never raises: a field with a type the API would reject is dropped (recorded in
        ``pod_error``) so one bad label does not hide the rest of the template from the
        engines. ``metadata.namespace`` defaults to the controller's namespace.
        """
        if self._pod is None:
            self._pod, self.pod_error = _convert_template(self.template, self.source.namespace, self.injected)
            if self.managed_shm:
                volume, sized = MANAGED_SHM_VOLUMES.get(self.managed_shm, (MANAGED_SHM_VOLUME, True))
                _add_managed_shm(self._pod, volume, sized=sized)
        return self._pod

    def shm_managed(self, index: int, section: str = "containers") -> bool:
        """True when the controller gives container ``index`` of ``section`` its ``/dev/shm``
        (see ``managed_shm``): only the first app container, and only when it mounts nothing there."""
        if not self.managed_shm or section != "containers" or index != 0:
            return False
        return shm_mount_index(dig(self.template, "spec", "containers", 0)) is None

    def field_line(self, path: FieldPath) -> int:
        """Line of ``path`` (relative to the pod template) in the file that holds the template
        (or in the object that overrides that field, see ``overrides``)."""
        for prefix, owner, owner_path in self.overrides:
            if path[: len(prefix)] == prefix:
                return owner.field_line((*owner_path, *path[len(prefix) :]))
        holder = self.template_source or self.source
        return holder.field_line((*self.template_path, *path))


SHM_PATH = "/dev/shm"
MANAGED_SHM_VOLUME = "shared-mem"  # KubeRay's SharedMemoryVolumeName
# controller -> (its /dev/shm volume name, whether it sets a sizeLimit)
# (NIM: nimservice_types.go GetVolumes "dshm"; Dynamo: its operator's /dev/shm volume, named here "dshm")
MANAGED_SHM_VOLUMES: dict[str, tuple[str, bool]] = {
    "KubeRay": (MANAGED_SHM_VOLUME, True),
    "KubeAI": ("dshm", False),
    "NIM": ("dshm", False),
    "Dynamo": ("dshm", False),
}


def shm_mount_index(container: Any) -> int | None:
    """Index of the ``volumeMounts`` entry of ``container`` (a dict) at ``/dev/shm``, else None."""
    mounts = container.get("volumeMounts") if isinstance(container, dict) else None
    if not isinstance(mounts, list):
        return None
    for j, mount in enumerate(mounts):
        path = mount.get("mountPath") if isinstance(mount, dict) else None
        if isinstance(path, str) and path.rstrip("/") == SHM_PATH:
            return j
    return None


def _add_managed_shm(pod: Pod, volume: str = MANAGED_SHM_VOLUME, *, sized: bool = True) -> None:
    """Add the controller's memory-backed ``/dev/shm`` to the first app container, as KubeRay's
    ``addEmptyDir`` does: skipped when the container already mounts ``/dev/shm``; the volume is
    added unless one of that name exists; ``sizeLimit`` is the memory limit, else the request
    (``sized``; KubeAI's ``dshm`` has no limit)."""
    containers = pod.spec.containers
    if not containers or any(m.mount_path.rstrip("/") == SHM_PATH for m in containers[0].volume_mounts):
        return
    first = containers[0]
    if not any(v.name == volume for v in pod.spec.volumes):
        size = first.resources.limits.get("memory", first.resources.requests.get("memory")) if sized else None
        pod.spec.volumes = [
            *pod.spec.volumes,
            Volume(name=volume, empty_dir=EmptyDirSource(medium="Memory", size_limit=size)),
        ]
    first.volume_mounts = [*first.volume_mounts, VolumeMount(name=volume, mount_path=SHM_PATH)]


class ExpansionProblem(Record):
    """A controller field that keeps expansion from building a pod template (``template: 5``,
    a replica spec that is a list, an expander that failed on hostile input).

    Expansion never raises and never drops such an object silently: the problem is recorded
    here (``path`` is the offending field in ``source``; ``got`` the JSON type found there, or
    None when the failure is not a type error) and lint's ``pod-template-invalid`` reports it.
    """

    __slots__ = ("detail", "got", "path", "source")
    source: Manifest
    path: FieldPath
    detail: str
    got: str | None

    def __init__(self, source: Manifest, path: FieldPath, detail: str, got: str | None = None) -> None:
        self.source = source
        self.path = path
        self.detail = detail
        self.got = got


def json_type(value: Any) -> str:
    """The JSON type name of a decoded YAML/JSON value (encoding/json's wording)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


class Related:
    """Objects a workload refers to, indexed by (group, kind, namespace, name).

    Used to resolve a TrainJob's ``runtimeRef``, the PodGroup a pod joins (Volcano or
    coscheduling) and a KServe model's ServingRuntime. Cluster-scoped kinds are
    indexed with namespace ``None``.
    """

    INDEXED: frozenset[tuple[str, str]] = frozenset(
        {
            ("trainer.kubeflow.org", "TrainingRuntime"),
            ("trainer.kubeflow.org", "ClusterTrainingRuntime"),
            ("scheduling.volcano.sh", "PodGroup"),
            ("scheduling.x-k8s.io", "PodGroup"),
            ("scheduling.sigs.k8s.io", "PodGroup"),
            ("serving.kserve.io", "ServingRuntime"),
            ("serving.kserve.io", "ClusterServingRuntime"),
        }
    )
    CLUSTER_SCOPED: frozenset[tuple[str, str]] = frozenset(
        {("trainer.kubeflow.org", "ClusterTrainingRuntime"), ("serving.kserve.io", "ClusterServingRuntime")}
    )

    __slots__ = ("_index",)

    def __init__(self) -> None:
        self._index: dict[tuple[str, str, str | None, str], Manifest] = {}

    @classmethod
    def from_objects(cls, objects: list[Manifest]) -> Related:
        related = cls()
        for obj in objects:
            related.add(obj)
        return related

    def add(self, obj: Manifest) -> None:
        gk = (obj.group, obj.kind)
        if gk in self.INDEXED:
            ns = None if gk in self.CLUSTER_SCOPED else (obj.namespace or "default")
            self._index[(gk[0], gk[1], ns, obj.name)] = obj

    def get(self, group: str, kind: str, namespace: str | None, name: str) -> Manifest | None:
        ns = None if (group, kind) in self.CLUSTER_SCOPED else (namespace or "default")
        return self._index.get((group, kind, ns, name))

    def __len__(self) -> int:
        return len(self._index)


# -- small, defensive field readers (malformed input must never raise) ----------------------


def nonneg(value: int | None) -> int:
    return value if value is not None and value > 0 else 0


# -- typed conversion of templates ---------------------------------------------------------

_ERROR_PATH = LazyPattern(r"at `\$((?:\.[^.\[`]+|\[\d+\]|\[\.\.\.\])*)`")
_STEP = LazyPattern(r"\.([^.\[`]+)|\[(\d+)\]|(\[\.\.\.\])")
_MAX_REPAIRS = 20
_ANY_KEY = "[...]"  # msgspec's marker for "some value of this map"


def _convert_template(
    template: dict, namespace: str | None, injected: dict | None = None
) -> tuple[Pod, str | None]:
    """Typed Pod of a template; drop fields of the wrong type instead of failing.

    Fast path: most templates hold no ``null`` and no mistyped field, and then converting the
    raw dict gives exactly the Pod the pruned copy gives (every optional field of the typed
    model defaults to None, which is what a ``null`` decodes to; a ``null`` anywhere else fails
    the conversion and takes the slow path). That skips the recursive copy, which costs more
    than the C conversion itself (lint converts every template once: ``pod-template-invalid``).
    """
    if isinstance(template, dict):
        try:
            pod = msgspec.convert(
                _injected_copy(template, injected) if injected else template, Pod, strict=False
            )
        except msgspec.ValidationError:
            pass
        else:
            if not pod.metadata.namespace and namespace:
                pod.metadata.namespace = namespace
            return pod, None
    data = prune_nulls(template) if isinstance(template, dict) else {}
    if injected:
        _inject(data, injected)
    errors: list[str] = []
    repaired: Pod | None = None
    for _ in range(_MAX_REPAIRS):
        try:
            repaired = msgspec.convert(data, Pod, strict=False)
            break
        except msgspec.ValidationError as exc:
            message = str(exc)
            errors.append(message)
            if not _repair(data, message):
                break
    pod = repaired if repaired is not None else Pod()
    if not pod.metadata.namespace and namespace:
        pod.metadata.namespace = namespace
    return pod, ("; ".join(errors) or None)


def _injected_copy(data: dict, extra: dict) -> dict:
    """``data`` with ``extra`` merged as :func:`_inject` does, copying only the maps on the way
    (the template itself is the manifest's and must not change)."""
    out = dict(data)
    for key, value in extra.items():
        current = out.get(key)
        if isinstance(value, dict):
            out[key] = _injected_copy(current if isinstance(current, dict) else {}, value)
        elif isinstance(value, list):
            out[key] = [*(current if isinstance(current, list) else []), *value]
        elif current is None or current == "":
            out[key] = value
    return out


def _inject(data: dict, extra: dict) -> None:
    """Merge controller-added fields into the (already copied) template data."""
    for key, value in extra.items():
        current = data.get(key)
        if isinstance(value, dict):
            if not isinstance(current, dict):
                current = data[key] = {}
            _inject(current, value)
        elif isinstance(value, list):
            data[key] = [*(current if isinstance(current, list) else []), *value]
        elif current is None or current == "":
            data[key] = value


def _repair(data: dict, message: str) -> bool:
    """Remove the value a msgspec error points at (the pruned copy is ours to mutate)."""
    match = _ERROR_PATH.search(message)
    if not match:
        return False
    path: list[str | int] = []
    for name, index, _any in _STEP.findall(match.group(1)):
        path.append(name if name else (int(index) if index else _ANY_KEY))
    if not path:
        return False
    if path[-1] == _ANY_KEY:
        # a map value of the wrong type (a number as a label value, a list as a quantity):
        # keep the well-typed entries only
        parent = dig(data, *path[:-1])
        if not isinstance(parent, dict):
            return False
        allowed: tuple[type, ...] = (str,) if "Expected `str`" in message else (str, int, float)
        bad = [k for k, v in parent.items() if isinstance(v, bool) or not isinstance(v, allowed)]
        for key in bad:
            del parent[key]
        return bool(bad)
    node = dig(data, *path[:-1])
    last = path[-1]
    if isinstance(node, dict) and last in node:
        del node[last]
        return True
    if isinstance(node, list) and isinstance(last, int) and 0 <= last < len(node):
        del node[last]
        return True
    return False


class ExpandContext(Record):
    """What an expander may look at besides the object: cluster nodes and related objects;
    ``problems`` collects the fields that kept a template from being built (None: not wanted)."""

    __slots__ = ("nodes", "problems", "related")
    nodes: list | None
    related: Related | None
    problems: list[ExpansionProblem] | None

    def __init__(
        self,
        nodes: list | None = None,
        related: Related | None = None,
        problems: list[ExpansionProblem] | None = None,
    ) -> None:
        self.nodes = nodes
        self.related = related
        self.problems = problems

    def template(self, obj: Manifest, container: Any, key: str | int, path: FieldPath) -> dict | None:
        """``container[key]`` when it is a pod template mapping. A value of another type
        (anything but a missing/null one) is recorded as an :class:`ExpansionProblem` at ``path``."""
        value = child(container, key)
        if isinstance(value, dict):
            return value
        if value is not None and self.problems is not None:
            self.problems.append(ExpansionProblem(obj, path, "not a pod template", json_type(value)))
        return None


def job_pod_count(job_spec: dict) -> int:
    """Pods a batch/v1 Job runs at once: ``min(parallelism, completions)``.

    ``parallelism`` defaults to 1; a Job without ``completions`` runs ``parallelism`` pods
    (work-queue mode); ``parallelism: 0`` pauses it. Kueue sizes the Job's PodSet the same
    way (reference/scheduling.md §4.4; staging/src/k8s.io/api/batch/v1/types.go).
    """
    parallelism = nonneg(as_int(job_spec.get("parallelism"), 1))
    completions = as_int(job_spec.get("completions"), None)
    if completions is not None:
        return min(parallelism, nonneg(completions))
    return parallelism


def suspend(podsets: list[PodSet], suspended: bool) -> list[PodSet]:
    """Mark ``podsets`` suspended when ``suspended``: ``count`` becomes 0 (no pods exist while the
    controller is suspended), the size to resume with is kept in ``resume_count``.

    Called by the expanders before gangs and ``distributed`` are derived, so every engine reading
    ``count`` sees exactly what exists now; the simulator resumes from ``resume_count``.
    """
    if suspended:
        for ps in podsets:
            ps.resume_count = ps.count
            ps.count = 0
            ps.suspended = True
    return podsets


def mark_distributed(podsets: list[PodSet]) -> int:
    """Mark every PodSet of one workload distributed when the workload runs more than one pod
    in total (the ranks of a training job, the tasks of a Volcano Job ...); returns that total.

    One definition for the controllers whose pods all belong to one computation, so lint rules
    and the scheduler agree on which workloads are multi-pod.
    """
    total = sum(ps.count for ps in podsets)
    for ps in podsets:
        ps.distributed = total > 1
    return total


# Role names: a fixed vocabulary so engines can match on them.
KNOWN_ROLES: frozenset[str] = frozenset(
    {
        "master",
        "worker",
        "chief",
        "ps",
        "evaluator",
        "launcher",
        "driver",
        "executor",
        "head",
        "leader",
        "predictor",
        "transformer",
        "explainer",
        "trainer",
        "initializer",
        "node",
        "scheduler",
        "server",
        "submitter",
    }
)
_ROLE_HINTS = ("master", "launcher", "chief", "driver", "leader", "head", "evaluator", "executor", "worker")


def role_from_name(name: str, default: str) -> str:
    """Normalize a replica/task/job name to a role: exact match, then a known word inside it."""
    lowered = name.lower()
    if lowered in KNOWN_ROLES:
        return lowered
    for hint in _ROLE_HINTS:
        if hint in lowered:
            return hint
    return default


__all__ = ["as_dict", "as_int", "as_list", "as_str", "dig"]  # re-exported for the workload modules
