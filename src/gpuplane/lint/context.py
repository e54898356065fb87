"""What a rule sees: the input objects, their PodSets (expanded once), the cluster.

Rules never re-derive shared facts: PodSets come from the workload model
(design.md "One model, many engines"), GPU requests and the AI kind groups are
computed once per PodSet here and cached, and kind indexes are built once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from gpuplane.k8s.validation import ResourceError, container_resource_errors
from gpuplane.lint import kinds
from gpuplane.lint.finding import Finding, PatchOp
from gpuplane.records import Record
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.k8s.cluster import ClusterState
    from gpuplane.k8s.workloads import ExpansionProblem, PodSet
    from gpuplane.lint.cluster_nodes import ClusterNodes
    from gpuplane.ruleset import RuleMeta

_T = TypeVar("_T")

APP_AND_INIT = ("initContainers", "containers")
ALL_SECTIONS = ("initContainers", "containers", "ephemeralContainers")


class ContainerRef(Record):
    """One container of a pod template and where it sits in its object.

    ``path`` is relative to the object root (``Manifest.data``), e.g.
    ``("spec", "template", "spec", "containers", 0)``. The context hands out the
    same refs to every rule, so per-container facts (GPU requests) are computed once
    (the ``_`` caches, which equality and ``repr`` leave out).
    """

    __slots__ = ("_api_errors", "_blocks", "_gpu", "data", "index", "path", "section")
    data: dict[str, Any]
    path: FieldPath
    section: str
    index: int
    _gpu: dict[str, int] | None
    _blocks: dict[str, dict[str, Any]] | None
    _api_errors: list[ResourceError] | None

    def __init__(self, data: dict[str, Any], path: FieldPath, section: str, index: int) -> None:
        self.data = data
        self.path = path
        self.section = section
        self.index = index
        self._gpu = None
        self._blocks = None
        self._api_errors = None

    def gpu_requests(self) -> dict[str, int]:
        """:func:`kinds.container_gpu_requests` of this container, computed once (do not mutate)."""
        found = self._gpu
        if found is None:
            found = self._gpu = kinds.container_gpu_requests(self.data)
        return found

    def api_errors(self) -> list[ResourceError]:
        """The API server's extended-resource errors for this container
        (:func:`gpuplane.k8s.validation.container_resource_errors`), computed once for the
        rules that report them (do not mutate)."""
        found = self._api_errors
        if found is None:
            found = self._api_errors = container_resource_errors(self.data)
        return found

    @property
    def name(self) -> str:
        return str(self.data.get("name") or f"{self.section}[{self.index}]")

    def resources(self, kind: str) -> dict[str, Any]:
        """``resources.requests`` or ``resources.limits`` (empty dict when absent or mistyped; do not mutate)."""
        blocks = self._blocks
        if blocks is None:
            blocks = self._blocks = {}
            res = self.data.get("resources")
            if isinstance(res, dict):
                for name in ("limits", "requests"):
                    value = res.get(name)
                    if isinstance(value, dict):
                        blocks[name] = value
        found = blocks.get(kind)
        if found is None:
            if kind in ("limits", "requests"):
                return {}
            res = self.data.get("resources")
            value = res.get(kind) if isinstance(res, dict) else None
            return value if isinstance(value, dict) else {}
        return found

    def env(self) -> Iterator[tuple[int, dict[str, Any]]]:
        env = self.data.get("env")
        if isinstance(env, list):
            for i, item in enumerate(env):
                if isinstance(item, dict):
                    yield i, item


class LintContext:
    """Shared, read-only view of one lint run, plus the ``report`` helper for rules."""

    def __init__(
        self,
        objects: list[Manifest],
        podsets: list[PodSet],
        cluster: ClusterState | None = None,
        expansion_problems: list[ExpansionProblem] | None = None,
        admission_plugins: frozenset[str] = frozenset(),
    ) -> None:
        self.objects = objects
        # admission plugins the user declares the API server runs (.gpuplane.yaml cluster:)
        self.admission_plugins = admission_plugins
        self.podsets = podsets
        self.cluster = cluster
        # objects / templates the workload model could not expand (reported by pod-template-invalid)
        self.expansion_problems = expansion_problems or []
        self.rule: RuleMeta | None = None  # set by the engine while a rule runs
        self._by_kind: dict[str, list[Manifest]] | None = None
        self._with_cluster: dict[tuple[str, str | None], list[Manifest]] = {}
        # kinds some rule looked up: their input objects count as analysed (lint.coverage)
        self.read_kinds: set[str] = set()
        # findings (by id; kept alive here so ids stay unique) on fields a controller decides
        # alone (PodSet.closed): not reported
        self.controller_owned: dict[int, Finding] = {}
        # closed / synthetic template paths by holder (_template_indexes)
        self._templates: tuple[dict[int, list[FieldPath]], dict[int, list[FieldPath]]] | None = None
        self._gpu_requests: dict[int, dict[str, int]] = {}
        self._gpu_podsets: list[PodSet] | None = None
        self._gpu_claim_templates: set[str] | None = None
        self._containers: dict[tuple[int, tuple[str, ...]], list[ContainerRef]] = {}
        self._gpu_ids: set[int] | None = None
        self._overrides: dict[int, list[tuple[FieldPath, Manifest, FieldPath]]] | None = None
        self._cluster_nodes: ClusterNodes | None = None
        self._once: dict[str, Any] = {}

    def once(self, key: str, build: Callable[[], _T]) -> _T:
        """``build()``, computed on the first call of the run and shared by every rule that asks
        with the same ``key`` (by convention the helper's qualified name). For the walks several
        rules of a theme make over every pod set (diagnose lints every pod of a snapshot); the
        value is shared, so callers must not mutate it."""
        if key in self._once:
            return self._once[key]
        found = self._once[key] = build()
        return found

    # -- objects -------------------------------------------------------------------------------

    def by_kind(
        self, kind: str, group: str | None = None, *, include_cluster: bool = False
    ) -> list[Manifest]:
        """Input objects of ``kind`` (optionally of API ``group``; ``""`` is core).

        With ``include_cluster`` the cluster's objects of that kind are appended
        (those not also in the input, by namespace/name): use it to look things up
        (PriorityClasses, Namespaces, queues), never to report findings on.
        """
        self.read_kinds.add(kind)
        if self._by_kind is None:
            index: dict[str, list[Manifest]] = {}
            for obj in self.objects:
                index.setdefault(obj.kind, []).append(obj)
            self._by_kind = index
        found = self._by_kind.get(kind, [])
        if group is not None:
            found = [o for o in found if o.group == group]
        if include_cluster and self.cluster is not None:
            # kept per (kind, group): rules look things up per pod set (a PriorityClass by name),
            # which would otherwise rebuild the list from the cluster for every pod set
            merged = self._with_cluster.get((kind, group))
            if merged is None:
                seen = {(o.namespace, o.name) for o in found}
                extra = [
                    m
                    for m in _cluster_objects(self.cluster, kind)
                    if (group is None or m.group == group) and (m.namespace, m.name) not in seen
                ]
                merged = self._with_cluster[(kind, group)] = [*found, *extra] if extra else found
            found = merged
        return found

    def cluster_nodes(self) -> ClusterNodes:
        """The ``--cluster`` nodes grouped into shapes for the rules' node questions, shared by
        every rule of the run (:mod:`gpuplane.lint.cluster_nodes`); only with a cluster."""
        found = self._cluster_nodes
        if found is None:
            if self.cluster is None:
                raise ValueError("cluster_nodes() needs a cluster")
            from gpuplane.lint.cluster_nodes import ClusterNodes  # for start-up time: cluster runs only

            found = self._cluster_nodes = ClusterNodes(self.cluster)
        return found

    # -- pod sets ------------------------------------------------------------------------------

    @staticmethod
    def holder(ps: PodSet) -> Manifest:
        """The object whose data holds ``ps``'s template (a TrainJob's runtime, else the source):
        report template findings on it so paths and lines are right."""
        return ps.template_source or ps.source

    def containers(self, ps: PodSet, sections: Sequence[str] = APP_AND_INIT) -> Iterator[ContainerRef]:
        """Containers of ``ps``'s pod template, with their paths in :meth:`holder`'s data.

        Built once per pod set and section list (every rule walks them; the pod sets live
        as long as the context, so their ids are stable keys).
        """
        key = (id(ps), tuple(sections))
        found = self._containers.get(key)
        if found is None:
            if len(key[1]) == 1:
                found = self._section_refs(ps, key[1][0])
            else:
                found = [ref for section in key[1] for ref in self._section_refs(ps, section)]
            self._containers[key] = found
        return iter(found)

    def _section_refs(self, ps: PodSet, section: str) -> list[ContainerRef]:
        """The refs of one section, built once: every section list shares them (and their caches)."""
        key = (id(ps), (section, ""))
        found = self._containers.get(key)
        if found is None:
            found = self._containers[key] = []
            items = pod_spec(ps).get(section)
            if isinstance(items, list):
                base = (*ps.template_path, "spec", section)
                for i, item in enumerate(items):
                    if isinstance(item, dict):
                        found.append(ContainerRef(item, (*base, i), section, i))
        return found

    def gpu_requests(self, ps: PodSet) -> dict[str, int]:
        """Accelerator requests of one pod of ``ps`` (summed over app containers, as
        :func:`kinds.gpu_requests` sums them), cached; built from the shared container refs."""
        key = id(ps)
        found = self._gpu_requests.get(key)
        if found is None:
            found = {}
            for ref in self._section_refs(ps, "containers"):
                for name, count in ref.gpu_requests().items():
                    found[name] = found.get(name, 0) + count
            self._gpu_requests[key] = found
        return found

    def gpu_podsets(self) -> list[PodSet]:
        """PodSets that ask for any accelerator (device-plugin resource or a GPU DRA claim)."""
        if self._gpu_podsets is None:
            templates = self._claim_templates()
            self._gpu_podsets = [
                ps
                for ps in self.podsets
                if self.gpu_requests(ps) or kinds.init_gpu_requests(ps) or kinds.has_gpu_claim(ps, templates)
            ]
        return self._gpu_podsets

    def is_gpu(self, ps: PodSet) -> bool:
        ids = self._gpu_ids
        if ids is None:
            ids = self._gpu_ids = {id(p) for p in self.gpu_podsets()}
        return id(ps) in ids

    def _claim_templates(self) -> set[str]:
        """Names of ResourceClaimTemplates/ResourceClaims in the input that ask for a GPU device class."""
        if self._gpu_claim_templates is None:
            names: set[str] = set()
            for kind in ("ResourceClaimTemplate", "ResourceClaim"):
                for obj in self.by_kind(kind, include_cluster=True):
                    if kinds.claim_object_is_gpu(obj.data):
                        names.add(obj.name)
            self._gpu_claim_templates = names
        return self._gpu_claim_templates

    # -- findings ------------------------------------------------------------------------------

    def report(
        self,
        obj: Manifest,
        path: FieldPath,
        message: str,
        fix: str,
        *,
        severity: str | None = None,
        patch: Sequence[PatchOp] = (),
        unsafe: bool | None = None,
    ) -> Finding:
        """A finding of the running rule (its id and default severity filled in). ``unsafe``
        overrides the rule's fix safety for this finding's patch (None: the rule's)."""
        meta = self.rule
        if meta is None:
            raise RuntimeError("LintContext.report() called outside a rule run")
        path = tuple(path)
        patch = tuple(patch)
        controller_field = self._closed_field(obj, path)
        if self._override_index().get(id(obj)):
            moved = self._owner(obj, path, message, patch)
            if moved[1] != path or moved[0] is not obj:
                controller_field = False
            obj, path, patch = moved
        synthetic = self._synthetic_index().get(id(obj))
        if synthetic and any(path[: len(base)] == base for base in synthetic):
            real = existing_prefix(obj.data, path)
            if len(real) < len(path):
                # a field of a template the controller builds: point at the field it was built
                # from (no invented path in JSON/SARIF); a patch there would write invented fields
                path, patch = real, ()
        safety = meta.fix_safety if unsafe is None else ("unsafe" if unsafe else "safe")
        finding = Finding(meta.id, severity or meta.severity, obj, path, message, fix, patch, safety)
        if controller_field:
            self.controller_owned[id(finding)] = finding
        return finding

    def _closed_field(self, obj: Manifest, path: FieldPath) -> bool:
        """``path`` lies in the pod template of a ``closed`` PodSet held by ``obj`` (a pod the
        controller builds; :meth:`report` clears this when an override maps the field to one the
        user wrote)."""
        for base in self._template_indexes()[0].get(id(obj), ()):
            n = len(base)
            if path[:n] == base and len(path) > n and path[n] in ("spec", "metadata"):
                return True
        return False

    def _synthetic_index(self) -> dict[int, list[FieldPath]]:
        """Object (by id) -> ``template_path`` of each synthetic template it holds."""
        return self._template_indexes()[1]

    def _template_indexes(self) -> tuple[dict[int, list[FieldPath]], dict[int, list[FieldPath]]]:
        """Object (by id) -> ``template_path`` of each ``closed`` PodSet it holds, and the same for
        each ``synthetic`` one: built once, in one pass over the PodSets."""
        if self._templates is None:
            closed: dict[int, list[FieldPath]] = {}
            synthetic: dict[int, list[FieldPath]] = {}
            for ps in self.podsets:
                for flag, index in ((ps.closed, closed), (ps.synthetic, synthetic)):
                    if flag:
                        index.setdefault(id(self.holder(ps)), []).append(tuple(ps.template_path))
            self._templates = (closed, synthetic)
        return self._templates

    # -- overridden template fields ------------------------------------------------------------

    @staticmethod
    def writable(ps: PodSet, path: FieldPath) -> bool:
        """Whether a patch at ``path`` (in :meth:`holder`'s data) edits a field the user wrote:
        any field of a real template, or of a synthetic one only where another object's field
        overrides it (a TrainJob's ``resourcesPerNode``), since :meth:`report` moves the patch there."""
        if not ps.synthetic:
            return True
        base = len(ps.template_path)
        if tuple(path[:base]) != tuple(ps.template_path):
            return False
        rel = tuple(path[base:])
        return any(rel[: len(prefix)] == prefix for prefix, _, _ in ps.overrides)

    def _override_index(self) -> dict[int, list[tuple[FieldPath, Manifest, FieldPath]]]:
        """Template holder (by id) -> ``(absolute prefix, owner, owner path)`` of the fields
        another object overrides (``PodSet.overrides``: a TrainJob's trainer fields replacing
        its runtime's container fields). Built once; empty for inputs without such PodSets."""
        if self._overrides is None:
            index: dict[int, list[tuple[FieldPath, Manifest, FieldPath]]] = {}
            for ps in self.podsets:
                if ps.overrides:
                    holder = self.holder(ps)
                    for prefix, owner, owner_path in ps.overrides:
                        index.setdefault(id(holder), []).append(
                            ((*ps.template_path, *prefix), owner, owner_path)
                        )
            self._overrides = index
        return self._overrides

    def _owner(
        self, obj: Manifest, path: FieldPath, message: str, patch: tuple[PatchOp, ...]
    ) -> tuple[Manifest, FieldPath, tuple[PatchOp, ...]]:
        """Move a finding on an overridden template field (and its patches) to the object
        and field that wrote it. Rules report on ``holder(ps)``; when several TrainJobs share
        one runtime, the owner is the one the message names (every rule's message starts with
        ``where(ps, ...)``, the workload's ``Kind namespace/name``)."""
        owners: list[tuple[int, Manifest, FieldPath]] = []
        for prefix, owner, owner_path in self._overrides.get(id(obj), ()) if self._overrides else ():
            if path[: len(prefix)] == prefix:
                owners.append((len(prefix), owner, owner_path))
        if len({id(o) for _, o, _ in owners}) > 1:
            owners = [entry for entry in owners if object_label(entry[1]) in message]
        if len({id(o) for _, o, _ in owners}) != 1:
            return obj, path, patch
        cut, owner, owner_path = owners[0]
        prefix = path[:cut]

        def moved(p: FieldPath) -> FieldPath:
            return (*owner_path, *p[cut:]) if p[:cut] == prefix else p

        new_patch = tuple(op.at(moved(op.path)) for op in patch)
        return owner, moved(path), new_patch


def object_label(obj: Manifest) -> str:
    """How every finding names an object: ``Kind namespace/name``, or ``Kind name`` when the
    object has no namespace (cluster-scoped kinds, and manifests that leave it to kubectl).

    One helper for every rule, so the same object reads the same in every message.
    """
    ns = obj.namespace
    return f"{obj.kind} {ns}/{obj.name}" if ns else f"{obj.kind} {obj.name}"


def existing_prefix(data: Any, path: FieldPath) -> FieldPath:
    """The longest prefix of ``path`` that exists in ``data`` (maps by key, lists by index)."""
    node = data
    for depth, step in enumerate(path):
        found = (isinstance(node, dict) and isinstance(step, str) and step in node) or (
            isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
        )
        if not found:
            return tuple(path[:depth])
        node = node[step]
    return tuple(path)


def join_labels(labels: Iterable[str], limit: int = 3) -> str:
    """``a, b, c and 2 more``: the distinct labels in first-seen order.

    The same object can reach a list twice (the same workload in two input files, a node
    both in the input and the cluster); a message names it once.
    """
    distinct = list(dict.fromkeys(labels))
    shown = ", ".join(distinct[:limit])
    return shown + (f" and {len(distinct) - limit} more" if len(distinct) > limit else "")


def pod_spec(ps: PodSet) -> dict[str, Any]:
    """The pod spec dict of a PodSet's template (empty when missing or mistyped)."""
    template = ps.template
    spec = template.get("spec") if type(template) is dict else None
    return spec if type(spec) is dict else {}


def _cluster_objects(cluster: Any, kind: str) -> list[Manifest]:
    """The cluster's objects of ``kind`` as Manifests, whatever shape ClusterState keeps them in."""
    getter = getattr(cluster, "by_kind", None)
    if getter is None:
        return []
    out: list[Manifest] = []
    for item in getter(kind) or ():
        if isinstance(item, Manifest):
            out.append(item)
        elif isinstance(item, dict):
            out.append(Manifest(item))
    return out
