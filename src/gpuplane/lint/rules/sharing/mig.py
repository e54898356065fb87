"""MIG: profiles, strategies, mig-parted configs and MIG devices per container."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpuplane.gpu.config_files import MIG_PARTED_CONFIG_KIND
from gpuplane.gpu.labels import GPU_PRODUCT as GPU_PRODUCT_LABEL
from gpuplane.gpu.labels import MIG_CONFIG as MIG_CONFIG_LABEL
from gpuplane.gpu.labels import MIG_STRATEGY as MIG_STRATEGY_LABEL
from gpuplane.k8s.kindless import PSEUDO_GROUP
from gpuplane.lint.context import object_label as obj_label
from gpuplane.lint.finding import Finding
from gpuplane.lint.rules._common import where
from gpuplane.lint.rules.sharing._shared import (
    _MIG_HINT,
    _classify,
    _configmap_data,
    _container_requests,
)
from gpuplane.ruleset import rule
from gpuplane.sources.manifest import FieldPath, Manifest

if TYPE_CHECKING:
    from gpuplane.k8s.workloads import PodSet
    from gpuplane.lint.context import LintContext

NVIDIA_GPU = "nvidia.com/gpu"


def _known_profiles() -> dict[str, list[str]]:
    """MIG profile name -> models that offer it (from the hardware catalog)."""
    from gpuplane.gpu.catalog import catalog  # deferred for start-up time

    out: dict[str, list[str]] = {}
    for model in catalog().models.values():
        for p in model.mig_profiles:
            out.setdefault(p.name, []).append(model.name)
    return out


def _advertised(ctx: LintContext) -> set[str]:
    names: set[str] = set()
    if ctx.cluster is not None:
        for node in ctx.cluster.nodes:
            for name, qty in node.status.allocatable.items():
                if str(qty).strip() not in ("0", ""):
                    names.add(name)
    return names


def _single_strategy_nodes(ctx: LintContext) -> list[str]:
    if ctx.cluster is None:
        return []
    return [
        n.metadata.name for n in ctx.cluster.nodes if n.metadata.labels.get(MIG_STRATEGY_LABEL) == "single"
    ]


@rule(
    id="mig-profile-unknown",
    severity="error",
    category="sharing",
    summary="nvidia.com/mig-<profile> request that no GPU model offers (ctx: that no node advertises).",
    context="optional",
)
def mig_profile_unknown(ctx: LintContext) -> Iterator[Finding]:
    known: dict[str, list[str]] | None = None
    advertised: set[str] | None = None
    single_strategy: bool | None = None  # both walk every node: once per run, not per request
    for ps in ctx.gpu_podsets():
        for c in ctx.containers(ps):
            for name, _count, path in _container_requests(c):
                res = _classify(name)
                if res is None or not res.mig_profile:
                    continue
                if known is None:
                    known = _known_profiles()
                profile = res.mig_profile
                if profile not in known:
                    yield ctx.report(
                        ps.source,
                        path,
                        f"{where(ps, c)} asks for {name}: no GPU model offers the MIG profile "
                        f"{profile}, so no node ever advertises it and the pod stays Pending "
                        f"(Insufficient {name}).",
                        "Use a MIG profile of your GPU model (e.g. 1g.10gb, 2g.20gb, 3g.40gb on A100-80GB/H100; "
                        "1g.5gb, 2g.10gb, 3g.20gb on A100-40GB); see gpuplane advise mig.",
                    )
                    continue
                if ctx.cluster is None or not ctx.cluster.nodes:
                    continue
                if advertised is None:
                    advertised = _advertised(ctx)
                if name in advertised:
                    continue
                if single_strategy is None:
                    single_strategy = bool(_single_strategy_nodes(ctx))
                if single_strategy:
                    continue
                yield ctx.report(
                    ps.source,
                    path,
                    f"{where(ps, c)} asks for {name} (offered by {', '.join(known[profile][:3])}), "
                    "but no node of the cluster advertises it: the pod stays Pending "
                    f"(Insufficient {name}).",
                    "Request a MIG profile the nodes are partitioned into, or repartition GPUs with "
                    f"{MIG_CONFIG_LABEL} (mixed strategy) to offer {profile}.",
                )


@rule(
    id="mig-strategy-mismatch",
    severity="error",
    category="sharing",
    summary="MIG request that the nodes' MIG strategy (single / mixed) never advertises.",
    context="required",
)
def mig_strategy_mismatch(ctx: LintContext) -> Iterator[Finding]:
    if ctx.cluster is None or not ctx.cluster.nodes:
        return
    # deferred for start-up time: a one-file lint of a mig-parted ConfigMap needs no node model
    from gpuplane.k8s.selectors import node_selection_key

    # The verdict depends on the pod only through its node selection and the resource name, so it
    # is computed once per distinct (selection, name), over node shapes (lint.cluster_nodes):
    # diagnose runs this rule on every workload of a cluster, and walking every node for every pod
    # set cost pods x nodes.
    verdicts: dict[tuple[bytes, str], tuple[str, ...] | None] = {}
    for ps in ctx.gpu_podsets():
        requests = [(c, name, path) for c in ctx.containers(ps) for name, _n, path in _container_requests(c)]
        if not requests:
            continue
        key = node_selection_key(ps.pod())
        for c, name, path in requests:
            res = _classify(name)
            if res is None or res.vendor != "nvidia" or (res.kind != "mig" and name != NVIDIA_GPU):
                continue
            if (key, name) not in verdicts:
                verdicts[(key, name)] = _strategy_verdict(ctx, ps, name, res.kind == "mig")
            verdict = verdicts[(key, name)]
            if verdict is None:
                continue
            if res.kind == "mig":
                yield ctx.report(
                    ps.source,
                    path,
                    f"{where(ps, c)} asks for {name}, but its candidate nodes "
                    f"({', '.join(verdict)}) run the MIG single strategy, which advertises MIG slices as "
                    f"{NVIDIA_GPU}: {name} never appears and the pod stays Pending.",
                    f"Request {NVIDIA_GPU} (pin the slice type with nodeSelector {GPU_PRODUCT_LABEL}), or switch "
                    "those nodes to the mixed strategy.",
                )
            else:
                yield ctx.report(
                    ps.source,
                    path,
                    f"{where(ps, c)} asks for {NVIDIA_GPU}, but every candidate GPU node runs the "
                    "MIG mixed strategy with all GPUs MIG-enabled: they advertise only nvidia.com/mig-* "
                    "resources, so the pod stays Pending (Insufficient nvidia.com/gpu).",
                    "Request a MIG profile resource (nvidia.com/mig-<profile>) or keep some GPUs with MIG disabled "
                    f"({MIG_CONFIG_LABEL}=all-disabled) for whole-GPU pods.",
                )


def _strategy_verdict(ctx: LintContext, ps: PodSet, name: str, mig: bool) -> tuple[str, ...] | None:
    """Why ``name`` is never advertised to ``ps``'s candidate nodes (its nodeSelector and required
    node affinity, matched as kube-scheduler's NodeAffinity filter does), or None when it may be:
    for a MIG resource, the first single-strategy candidates; for ``nvidia.com/gpu``, ``()`` when
    every candidate GPU node is mixed with all GPUs MIG-enabled. Asked once per node shape (the
    selection's labels, the strategy label, the resources)."""
    cluster = ctx.cluster
    if cluster is None:
        return None
    view = ctx.cluster_nodes()
    shapes, candidates = view.selected(ps.pod(), reads=(MIG_STRATEGY_LABEL,))
    rep = {s: view.nodes[shapes.reps[s]] for s in candidates}

    def strategy(s: int) -> str | None:
        return rep[s].metadata.labels.get(MIG_STRATEGY_LABEL)

    def count(s: int, resource: str) -> int:
        """The node's allocatable ``resource`` as the cluster model parses it (``Quantity.Value()``)."""
        return cluster.allocatable(rep[s].metadata.name).get(resource, 0)

    mig_shapes = [s for s in candidates if strategy(s)]
    if not mig_shapes:
        return None
    if mig:
        if any(count(s, name) for s in candidates):
            return None
        single = [s for s in mig_shapes if strategy(s) == "single"]
        return tuple(view.names(shapes, single, 3)) if single else None
    gpu_shapes = [
        s
        for s in candidates
        if strategy(s) or any(k.startswith("nvidia.com/") for k in rep[s].status.allocatable)
    ]
    if not gpu_shapes or any(count(s, NVIDIA_GPU) for s in gpu_shapes):
        return None
    if not all(strategy(s) == "mixed" for s in gpu_shapes):
        return None
    return ()


def _fits_some_model(profiles: dict[str, int]) -> tuple[bool, str]:
    """Does the layout fit one GPU of at least one catalog model offering all its profiles?"""
    from gpuplane.gpu.catalog import catalog  # deferred for start-up time
    from gpuplane.gpu.mig import layout_fits

    wanted = [p for p, n in profiles.items() if n]
    reason = ""
    offered = False
    for model in catalog().models.values():
        if not model.mig_capable or any(model.profile(p) is None for p in wanted):
            continue
        offered = True
        ok, why = layout_fits(model, profiles)
        if ok:
            return True, ""
        reason = reason or why
    if not offered:
        # Profiles of a GPU the catalog does not know (NVIDIA ships entries for new GPUs
        # first): not proven wrong, so not reported.
        return True, ""
    return False, reason


def _mig_parted_configs(
    ctx: LintContext,
) -> list[tuple[Manifest, str, FieldPath | None, str | dict[str, Any]]]:
    """Every mig-parted config of the input: ``(object, label, anchor, text or document)``.

    ConfigMap keys are YAML text, so their findings sit on the key (``anchor``); a
    config file (``MigPartedConfig`` pseudo-object, ``data`` = the document) has no
    anchor: findings point at the field itself (``("data", *path)``).
    """
    out: list[tuple[Manifest, str, FieldPath | None, str | dict[str, Any]]] = []
    for cm in ctx.by_kind("ConfigMap", ""):
        for key, value in _configmap_data(cm).items():
            if isinstance(value, str) and _MIG_HINT.search(value):
                out.append((cm, f"mig-parted config {key} of {obj_label(cm)}", ("data", str(key)), value))
    for obj in ctx.by_kind(MIG_PARTED_CONFIG_KIND, PSEUDO_GROUP):
        document = obj.data.get("data")
        out.append(
            (obj, f"mig-parted config file {obj.name}", None, document if isinstance(document, dict) else {})
        )
    return out


@rule(
    id="mig-config-invalid",
    severity="error",
    category="sharing",
    summary="mig-parted config or nvidia.com/mig.config label that does not fit the GPU.",
    context="optional",
)
def mig_config_invalid(ctx: LintContext) -> Iterator[Finding]:
    parted = _mig_parted_configs(ctx)
    if not parted:
        return  # nor any label to check against a config (_check_mig_labels needs its entries)
    # deferred for start-up time: input without a mig-parted config never loads the catalog
    from gpuplane.gpu.catalog import catalog
    from gpuplane.gpu.mig import layout_fits, parse_mig_parted_config

    all_entries: dict[str, list[Any]] = {}
    cat = catalog()
    for cm, label, anchor, content in parted:
        configs, problems = parse_mig_parted_config(content)
        for problem in problems:
            where = ".".join(str(p) for p in problem.path)
            yield ctx.report(
                cm,
                anchor if anchor is not None else ("data", *problem.path),
                f"{label}: " + (f"{where}: " if where else "") + problem.message,
                "Fix the mig-parted config (version: v1, mig-configs: name -> [{devices, mig-enabled, mig-devices}]).",
                severity="warning" if problem.severity == "warning" else None,
            )
        for name, entries in configs.items():
            all_entries[name] = entries
            for i, entry in enumerate(entries):
                if not entry.mig_enabled or not entry.mig_devices:
                    continue
                models = [m for pci in entry.device_filter if (m := cat.model_for_pci_id(pci)) is not None]
                entry_path = anchor if anchor is not None else ("data", "mig-configs", name, i)
                if models:
                    for model in models:
                        ok, reason = layout_fits(model, entry.mig_devices)
                        if not ok:
                            yield ctx.report(
                                cm,
                                entry_path,
                                f"{label}: mig-configs.{name}[{i}] does not fit "
                                f"{model.name}: {reason}; the MIG manager fails (mig.config.state=failed).",
                                f"Choose profiles and counts that fit {model.name} (see gpuplane advise mig).",
                            )
                    continue
                if entry.device_filter:
                    continue  # filter names GPUs the catalog does not know
                ok, reason = _fits_some_model(entry.mig_devices)
                if not ok:
                    yield ctx.report(
                        cm,
                        entry_path,
                        f"{label}: mig-configs.{name}[{i}] fits no GPU: "
                        f"{reason}; the MIG manager fails (mig.config.state=failed).",
                        "Choose profiles and counts that fit the target GPU (see gpuplane advise mig).",
                    )
    yield from _check_mig_labels(ctx, all_entries)


def _check_mig_labels(ctx: LintContext, entries: dict[str, list[Any]]) -> Iterator[Finding]:
    """``nvidia.com/mig.config`` values on input Nodes / NodePool templates (and cluster nodes)."""
    from gpuplane.gpu.catalog import catalog  # deferred for start-up time
    from gpuplane.gpu.mig import layout_fits

    if not entries:
        return
    cat = catalog()
    targets: list[tuple[Manifest | None, FieldPath, dict[str, Any], str]] = []
    for node in ctx.by_kind("Node", ""):
        targets.append((node, ("metadata", "labels", MIG_CONFIG_LABEL), node.labels, f"Node {node.name}"))
    for pool in ctx.by_kind("NodePool", "karpenter.sh"):
        labels = pool.get("spec", "template", "metadata", "labels", default={})
        if isinstance(labels, dict):
            targets.append(
                (
                    pool,
                    ("spec", "template", "metadata", "labels", MIG_CONFIG_LABEL),
                    labels,
                    f"NodePool {pool.name}",
                )
            )
    if ctx.cluster is not None:
        for n in ctx.cluster.nodes:
            targets.append((None, (), n.metadata.labels, f"node {n.metadata.name}"))
    cm_anchor = _mig_parted_configs(ctx)
    for obj, path, labels, what in targets:
        value = labels.get(MIG_CONFIG_LABEL)
        if not value or value == "all-disabled":
            continue
        value = str(value)
        problem = None
        if value not in entries:
            problem = f'{what} asks for MIG config "{value}", which the mig-parted config does not define'
            fix = f'Use one of {", ".join(sorted(entries)[:6])} or add a "{value}" entry to the mig-parted config.'
        else:
            model = cat.model_for_node_labels({k: str(v) for k, v in labels.items()})
            if model is None:
                continue
            for entry in entries[value]:
                if entry.device_filter and not any(
                    cat.model_for_pci_id(p) is model for p in entry.device_filter
                ):
                    continue
                if entry.mig_enabled and entry.mig_devices:
                    ok, reason = layout_fits(model, entry.mig_devices)
                    if not ok:
                        problem = (
                            f'{what} ({model.name}) asks for MIG config "{value}" that does not fit: {reason}'
                        )
                        fix = f"Pick a MIG config whose profiles fit {model.name}."
                        break
        if problem is None:
            continue
        if obj is not None:
            yield ctx.report(obj, path, problem + "; the MIG manager fails (mig.config.state=failed).", fix)
        elif cm_anchor:
            cm, _label, anchor, _content = cm_anchor[0]
            yield ctx.report(
                cm,
                anchor or ("data", "mig-configs"),
                problem + "; the MIG manager fails (mig.config.state=failed).",
                fix,
            )


@rule(
    id="mig-multiple-devices-per-container",
    severity="warning",
    category="sharing",
    summary="One container asks for >1 MIG device: a CUDA process uses only one MIG instance.",
)
def mig_multiple_devices_per_container(ctx: LintContext) -> Iterator[Finding]:
    for ps in ctx.gpu_podsets():
        for c in ctx.containers(ps):
            mig = [
                (name, count, path)
                for name, count, path in _container_requests(c)
                if (res := _classify(name)) is not None and res.mig_profile
            ]
            total = sum(count for _n, count, _p in mig)
            if total < 2:
                continue
            _name, _count, path = mig[0]
            shown = ", ".join(f"{n}: {k}" for n, k, _p in mig)
            yield ctx.report(
                ps.source,
                path,
                f"{where(ps, c)} asks for {total} MIG devices ({shown}): a CUDA process uses only "
                "one MIG instance, so the others stay reserved and idle.",
                "Request one larger MIG profile (e.g. nvidia.com/mig-3g.40gb: 1), or split the work into one slice "
                "per container.",
            )
