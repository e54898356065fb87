"""CEL fragments shared by the exported policies, written for the Kubernetes CEL environment.

The environment is the API server's base environment (kubernetes/kubernetes
``staging/src/k8s.io/apiserver/pkg/cel/environment/base.go``): homogeneous aggregate literals, the
Kubernetes ``quantity`` library (``staging/src/k8s.io/apiserver/pkg/cel/library/quantity.go``, in the
base environment since 1.28) and the cel-go strings extension version 2 (``join``, since 1.29).
``admissionregistration.k8s.io/v1`` ValidatingAdmissionPolicy needs 1.30, so every function used here
exists wherever the exported objects can be created.

Every fragment is total on the objects the API server admits: fields are tested with ``has()``
before they are read and values are type-tested before ``quantity()`` parses them, because an
expression that errors fails the request under the default ``failurePolicy: Fail``.
"""

from __future__ import annotations

# (API group, kind) -> where its pod specs are. Mirrors gpuplane.k8s.workloads.expand.EXPANDERS for
# every controller whose pod templates are written in the object itself; tests/policy checks the two
# agree on every fixture. TrainJob (pods from a referenced runtime), InferenceService and
# SparkApplication (pods synthesised by their operators) are left out: their pod specs are not in
# the object.
_TEMPLATE = ("template", "spec")
_RAY_CLUSTER = "ray"  # marker: headGroupSpec + workerGroupSpecs under the given prefix

POD_SPEC_PATHS: dict[tuple[str, str], tuple[object, ...]] = {
    ("", "Pod"): (("spec",),),
    ("apps", "Deployment"): (("spec", *_TEMPLATE),),
    ("apps", "ReplicaSet"): (("spec", *_TEMPLATE),),
    ("", "ReplicationController"): (("spec", *_TEMPLATE),),
    ("apps", "StatefulSet"): (("spec", *_TEMPLATE),),
    ("apps", "DaemonSet"): (("spec", *_TEMPLATE),),
    ("batch", "Job"): (("spec", *_TEMPLATE),),
    ("batch", "CronJob"): (("spec", "jobTemplate", "spec", *_TEMPLATE),),
    ("kubeflow.org", "PyTorchJob"): (("map", "pytorchReplicaSpecs"),),
    ("kubeflow.org", "TFJob"): (("map", "tfReplicaSpecs"),),
    ("kubeflow.org", "XGBoostJob"): (("map", "xgbReplicaSpecs"),),
    ("kubeflow.org", "PaddleJob"): (("map", "paddleReplicaSpecs"),),
    ("kubeflow.org", "MXJob"): (("map", "mxReplicaSpecs"),),
    ("kubeflow.org", "JAXJob"): (("map", "jaxReplicaSpecs"),),
    ("kubeflow.org", "MPIJob"): (("map", "mpiReplicaSpecs"),),
    ("jobset.x-k8s.io", "JobSet"): (("list", ("spec", "replicatedJobs"), ("template", "spec", *_TEMPLATE)),),
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): (
        ("spec", "leaderWorkerTemplate", "leaderTemplate", "spec"),
        ("spec", "leaderWorkerTemplate", "workerTemplate", "spec"),
    ),
    ("ray.io", "RayCluster"): ((_RAY_CLUSTER, ("spec",)),),
    ("ray.io", "RayJob"): (
        (_RAY_CLUSTER, ("spec", "rayClusterSpec")),
        ("spec", "submitterPodTemplate", "spec"),
    ),
    ("ray.io", "RayService"): ((_RAY_CLUSTER, ("spec", "rayClusterConfig")),),
    ("batch.volcano.sh", "Job"): (("list", ("spec", "tasks"), _TEMPLATE),),
}

# kind -> plural resource name for matchConstraints (the REST resource the API server matches on)
RESOURCES: dict[tuple[str, str], str] = {
    ("", "Pod"): "pods",
    ("apps", "Deployment"): "deployments",
    ("apps", "ReplicaSet"): "replicasets",
    ("", "ReplicationController"): "replicationcontrollers",
    ("apps", "StatefulSet"): "statefulsets",
    ("apps", "DaemonSet"): "daemonsets",
    ("batch", "Job"): "jobs",
    ("batch", "CronJob"): "cronjobs",
    ("kubeflow.org", "PyTorchJob"): "pytorchjobs",
    ("kubeflow.org", "TFJob"): "tfjobs",
    ("kubeflow.org", "XGBoostJob"): "xgboostjobs",
    ("kubeflow.org", "PaddleJob"): "paddlejobs",
    ("kubeflow.org", "MXJob"): "mxjobs",
    ("kubeflow.org", "JAXJob"): "jaxjobs",
    ("kubeflow.org", "MPIJob"): "mpijobs",
    ("jobset.x-k8s.io", "JobSet"): "jobsets",
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): "leaderworkersets",
    ("ray.io", "RayCluster"): "rayclusters",
    ("ray.io", "RayJob"): "rayjobs",
    ("ray.io", "RayService"): "rayservices",
    ("batch.volcano.sh", "Job"): "jobs",
    ("", "ResourceQuota"): "resourcequotas",
}


def select(base: str, path: tuple[str, ...]) -> tuple[str, str]:
    """``(guard, value)``: a ``has()`` chain true when every field of ``path`` under ``base`` is
    present, and the selection itself."""
    guards, cur = [], base
    for field in path:
        cur = f"{cur}.{field}"
        guards.append(f"has({cur})")
    return " && ".join(guards) or "true", cur


def _optional_list(base: str, path: tuple[str, ...]) -> str:
    guard, value = select(base, path)
    return f"({guard} ? [{value}] : [])"


def _ray(prefix: tuple[str, ...]) -> str:
    head = _optional_list("object", (*prefix, "headGroupSpec", *_TEMPLATE))
    guard, groups = select("object", (*prefix, "workerGroupSpecs"))
    g_guard, g_value = select("g", _TEMPLATE)
    workers = f"({guard} ? {groups}.filter(g, {g_guard}).map(g, {g_value}) : [])"
    return f"{head} + {workers}"


def _specs_of(entry: object) -> str:
    if not isinstance(entry, tuple):
        raise TypeError(entry)
    if entry and entry[0] == "map":
        field = str(entry[1])
        guard, replicas = select("object", ("spec", field))
        r_guard, r_value = select("r", _TEMPLATE)
        return f"({guard} ? {replicas}.map(k, {replicas}[k]).filter(r, {r_guard}).map(r, {r_value}) : [])"
    if entry and entry[0] == "list":
        list_path, item_path = entry[1], entry[2]
        assert isinstance(list_path, tuple) and isinstance(item_path, tuple)
        guard, items = select("object", list_path)
        i_guard, i_value = select("i", item_path)
        return f"({guard} ? {items}.filter(i, {i_guard}).map(i, {i_value}) : [])"
    if entry and entry[0] == _RAY_CLUSTER:
        prefix = entry[1]
        assert isinstance(prefix, tuple)
        return _ray(prefix)
    return _optional_list("object", tuple(str(p) for p in entry))


def is_kind(group: str, kind: str) -> str:
    """CEL: the admitted object is ``group``/``kind`` (apiVersion carries the group)."""
    version = "object.apiVersion == 'v1'" if not group else f"object.apiVersion.startsWith('{group}/')"
    return f"(object.kind == '{kind}' && {version})"


def pod_specs(kinds: list[tuple[str, str]]) -> str:
    """CEL list of every pod spec written in the object, for the given kinds (``[]`` otherwise)."""
    expr = "[]"
    for group, kind in reversed(kinds):
        specs = " + ".join(_specs_of(e) for e in POD_SPEC_PATHS[(group, kind)])
        expr = f"{is_kind(group, kind)} ? ({specs}) : {expr}"
    return expr


def containers_of(spec: str) -> str:
    """CEL list of the app and init containers of pod spec ``spec`` (the two sections whose
    resources the API validates; ephemeral containers take no resources)."""
    return (
        f"((has({spec}.containers) ? {spec}.containers : []) + "
        f"(has({spec}.initContainers) ? {spec}.initContainers : []))"
    )


def is_extended_resource(name: str) -> str:
    """CEL for ``helper.IsExtendedResourceName`` (kubernetes ``pkg/apis/core/v1/helper/helpers.go``):
    not native (native: no ``/`` or a ``kubernetes.io/`` name), not a ``requests.`` quota key, and
    ``requests.<name>`` a qualified name (DNS-1123 subdomain prefix of at most 253 characters, name
    of at most 63): as :func:`gpuplane.k8s.validation.is_extended_resource`."""
    subdomain = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
    qualified = r"([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]"
    return (
        f"({name}.contains('/') && !{name}.contains('kubernetes.io/') && !{name}.startsWith('requests.')"
        f" && {name}.matches('^{subdomain}/{qualified}$') && {name}.indexOf('/') <= 244)"
    )


def quantity_text(value: str) -> str:
    """CEL: the written value as the string ``quantity()`` parses (CRDs keep YAML numbers as
    numbers; core objects reach admission with canonical quantity strings)."""
    return f"(type({value}) == string ? {value} : string({value}))"


def is_quantity(value: str) -> str:
    """CEL: ``value`` is a string or number that parses as a quantity."""
    return (
        f"((type({value}) == string || type({value}) == int || type({value}) == double) && "
        f"isQuantity({quantity_text(value)}))"
    )


def quantity(value: str) -> str:
    return f"quantity({quantity_text(value)})"


def accepted_as_integer(q: str) -> str:
    """CEL: quantity ``q`` passes the API's integer check for extended resources,
    ``MilliValue() % 1000 == 0`` (``ValidateResourceQuantityValue`` in kubernetes
    ``pkg/apis/core/validation/validation.go``).

    ``isInteger()`` alone is not that check: it is ``Quantity.AsInt64()``, false for ``1000m`` or
    ``1.0``, which the API accepts. ``MilliValue()`` rounds away from zero (apimachinery
    ``negativeScaleInt64``), so a value ``x >= 0`` passes when ``k - 0.001 < x <= k`` for the integer
    ``k = ceil(x)``, one of ``trunc(x)`` and ``trunc(x) + 1``; a negative one when ``k <= x < k + 0.001``
    for ``k`` one of ``trunc(x)`` and ``trunc(x) - 1``. The approximate float only picks the two
    candidates; the comparisons are exact. Values of 10^15 and beyond are left to the API. ``q`` may
    read ``k`` and ``c`` (the loop variables of the callers), never ``whole``.
    """
    f = f"{q}.asApproximateFloat()"
    whole = "quantity(string(whole))"
    up = (
        f"[int({f}), int({f}) + 1].exists(whole, {q}.compareTo({whole}) <= 0 && "
        f"{q}.isGreaterThan({whole}.sub(quantity('1m'))))"
    )
    down = (
        f"[int({f}), int({f}) - 1].exists(whole, {q}.compareTo({whole}) >= 0 && "
        f"{q}.isLessThan({whole}.add(quantity('1m'))))"
    )
    near = f"({q}.isLessThan(quantity('0')) ? {down} : {up})"
    return f"({q}.isInteger() || {f} >= 1e15 || {f} <= -1e15 || {near})"
