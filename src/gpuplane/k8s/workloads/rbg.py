"""RoleBasedGroup ``workloads.x-k8s.io`` (sgl-project/rbg, commit 993491fb).

v1alpha2 (``api/workloads/v1alpha2/rolebasedgroup_types.go``): ``spec.roles[]`` with ``name``,
``replicas`` and one pattern (``Pattern``): ``standalonePattern`` (``replicas`` pods of one
template), ``leaderWorkerPattern`` (``replicas`` groups of ``size`` pods: one leader and
``size − 1`` workers, each from the template with ``leaderTemplatePatch`` / ``workerTemplatePatch``
applied) or ``customComponentsPattern`` (``components[]``, each ``size`` pods of its own
``template``, per replica). A pattern's template is inline (``template``) or a ``templateRef``
to ``spec.roleTemplates[].name`` with an optional strategic merge ``patch``.

v1alpha1 (``api/workloads/v1alpha1/rolebasedgroup_types.go``): the role holds ``template`` /
``templateRef`` itself, ``leaderWorkerSet`` (``size``, ``patchLeaderTemplate``,
``patchWorkerTemplate``) for multi-node roles, ``components[]``; ``spec.podGroupPolicy``
(``kubeScheduling``: a scheduler-plugins PodGroup; ``volcanoScheduling``: a Volcano one) gangs
every pod of the group.

Patched templates are synthetic, with each patched field mapped to the patch that wrote it
(:mod:`gpuplane.k8s.workloads.patch`).
"""

from __future__ import annotations

from typing import Any

from gpuplane.k8s.manifest import FieldPath, Manifest
from gpuplane.k8s.workloads.gangs import finish
from gpuplane.k8s.workloads.model import (
    ExpandContext,
    Gang,
    PodSet,
    as_dict,
    as_int,
    as_list,
    as_str,
    nonneg,
    role_from_name,
)
from gpuplane.k8s.workloads.patch import merge_template


def _role_templates(spec: dict) -> dict[str, int]:
    return {
        name: i
        for i, item in enumerate(as_list(spec.get("roleTemplates")))
        if (name := as_str(as_dict(item).get("name")))
    }


class _Builder:
    """PodSets of one RoleBasedGroup; knows its role templates."""

    def __init__(self, obj: Manifest, ctx: ExpandContext) -> None:
        self.obj = obj
        self.ctx = ctx
        self.spec = as_dict(obj.data.get("spec"))
        self.templates = _role_templates(self.spec)
        self.podsets: list[PodSet] = []

    def source(self, holder: dict, path: FieldPath) -> tuple[dict, FieldPath, dict | None, FieldPath] | None:
        """(base template, its path, the ``templateRef`` patch or None, the patch's path)."""
        inline = self.ctx.template(self.obj, holder, "template", (*path, "template"))
        if inline is not None:
            return inline, (*path, "template"), None, ()
        ref = as_dict(holder.get("templateRef"))
        index = self.templates.get(as_str(ref.get("name")) or "")
        if index is None:
            return None
        base_path = ("spec", "roleTemplates", index, "template")
        base = self.ctx.template(self.obj, self.spec["roleTemplates"][index], "template", base_path)
        if base is None:
            return None
        patch = ref.get("patch")
        return base, base_path, (patch if isinstance(patch, dict) else None), (*path, "templateRef", "patch")

    def add(
        self,
        name: str,
        role: str,
        count: int,
        found: tuple[dict, FieldPath, dict | None, FieldPath],
        extra: tuple[Any, FieldPath] | None = None,
        distributed: bool = False,
    ) -> None:
        template, path, patch, patch_path = found
        moves: list[tuple[FieldPath, FieldPath]] = []
        for layer, layer_path in ((patch, patch_path), extra or (None, ())):
            if isinstance(layer, dict):
                template, more = merge_template(template, layer, layer_path)
                moves = more + [m for m in moves if not any(m[0][: len(n[0])] == n[0] for n in more)]
        overrides = tuple((rel, self.obj, owner) for rel, owner in moves)
        self.podsets.append(
            PodSet(
                self.obj,
                name,
                role,
                count,
                template,
                path,
                synthetic=bool(moves),
                overrides=overrides,
                distributed=distributed,
            )
        )

    def leader_workers(
        self,
        name: str,
        replicas: int,
        size: int,
        found: tuple[dict, FieldPath, dict | None, FieldPath],
        leader_patch: tuple[Any, FieldPath],
        worker_patch: tuple[Any, FieldPath],
    ) -> None:
        multi = size > 1
        self.add(f"{name}-leader", "leader", replicas, found, leader_patch, multi)
        if multi:
            self.add(f"{name}-worker", "worker", replicas * (size - 1), found, worker_patch, True)

    def components(self, name: str, replicas: int, items: Any, path: FieldPath) -> None:
        for k, comp in enumerate(as_list(items)):
            found = self.source(as_dict(comp), (*path, k)) if isinstance(comp, dict) else None
            if found is None:
                continue
            comp_name = as_str(comp.get("name")) or f"component-{k}"
            size = nonneg(as_int(comp.get("size"), 1))
            self.add(f"{name}-{comp_name}", role_from_name(comp_name, "server"), replicas * size, found)


def expand_rolebasedgroup(obj: Manifest, ctx: ExpandContext) -> list[PodSet]:
    b = _Builder(obj, ctx)
    for index, role in enumerate(as_list(b.spec.get("roles"))):
        if not isinstance(role, dict):
            continue
        path: FieldPath = ("spec", "roles", index)
        name = as_str(role.get("name")) or f"role-{index}"
        replicas = nonneg(as_int(role.get("replicas"), 1))
        standalone = role.get("standalonePattern")
        lwp = role.get("leaderWorkerPattern")
        custom = role.get("customComponentsPattern")
        if isinstance(standalone, dict):
            found = b.source(standalone, (*path, "standalonePattern"))
            if found is not None:
                b.add(name, role_from_name(name, "server"), replicas, found)
        elif isinstance(lwp, dict):
            lw_path = (*path, "leaderWorkerPattern")
            found = b.source(lwp, lw_path)
            if found is not None:
                size = nonneg(as_int(lwp.get("size"), 1))
                b.leader_workers(
                    name,
                    replicas,
                    size,
                    found,
                    (lwp.get("leaderTemplatePatch"), (*lw_path, "leaderTemplatePatch")),
                    (lwp.get("workerTemplatePatch"), (*lw_path, "workerTemplatePatch")),
                )
        elif isinstance(custom, dict):
            b.components(
                name, replicas, custom.get("components"), (*path, "customComponentsPattern", "components")
            )
        elif isinstance(role.get("components"), list):  # v1alpha1
            b.components(name, replicas, role.get("components"), (*path, "components"))
        else:  # v1alpha1: the role holds the template
            found = b.source(role, path)
            if found is None:
                continue
            lws = role.get("leaderWorkerSet")
            if isinstance(lws, dict):
                b.leader_workers(
                    name,
                    replicas,
                    nonneg(as_int(lws.get("size"), 1)),
                    found,
                    (lws.get("patchLeaderTemplate"), (*path, "leaderWorkerSet", "patchLeaderTemplate")),
                    (lws.get("patchWorkerTemplate"), (*path, "leaderWorkerSet", "patchWorkerTemplate")),
                )
            else:
                b.add(
                    name,
                    role_from_name(name, "server"),
                    replicas,
                    found,
                    (role.get("templatePatch"), (*path, "templatePatch")),
                )
    if not b.podsets:
        return []
    return finish(obj, b.podsets, ctx.related, kueue_whole=False, native=_group_gang(obj, b.spec, b.podsets))


GANG_ANNOTATION = "rbg.workloads.x-k8s.io/group-gang-scheduling"
GANG_VOLCANO_QUEUE = "rbg.workloads.x-k8s.io/group-gang-scheduling-volcano-queue"


def _group_gang(obj: Manifest, spec: dict, podsets: list[PodSet]) -> Gang | None:
    """One PodGroup named after the group holding every pod: v1alpha1 ``podGroupPolicy``, or the
    annotation ``rbg.workloads.x-k8s.io/group-gang-scheduling: "true"`` (api/workloads/constants/
    annotation.go ``GangSchedulingAnnotationKey``; the PodGroup is the scheduler-plugins or Volcano
    one of the controller's ``--scheduler-name``)."""
    policy = as_dict(spec.get("podGroupPolicy"))
    total = sum(ps.count for ps in podsets)
    if obj.annotations.get(GANG_ANNOTATION) == "true":
        queue = as_str(obj.annotations.get(GANG_VOLCANO_QUEUE))
        return Gang("volcano" if queue else "coscheduling", obj.name, total, queue)
    if isinstance(policy.get("kubeScheduling"), dict):
        return Gang("coscheduling", obj.name, total)
    if isinstance(policy.get("volcanoScheduling"), dict):
        queue = as_str(as_dict(policy["volcanoScheduling"]).get("queue"))
        return Gang("volcano", obj.name, total, queue)
    return None
