"""MIG reconfiguration by mig-manager that failed or is stuck."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpuplane.diagnose import inventory as inv
from gpuplane.diagnose.components import pod_problem
from gpuplane.diagnose.evidence import ClusterFinding, Evidence, ref
from gpuplane.diagnose.facts import ClusterFacts
from gpuplane.diagnose.rules._shared import (
    PAUSED,
    _finding,
    _flagged_nodes,
    _label_evidence,
    _pod_evidence,
    _problem_text,
    cluster_rule,
)
from gpuplane.k8s.objects import Node

if TYPE_CHECKING:
    from gpuplane.lint.context import LintContext

# -- mig-config-failed --------------------------------------------------------------------------


@cluster_rule(
    id="mig-config-failed",
    severity="error",
    summary="node label nvidia.com/mig.config.state is failed (or pending for long)",
)
def mig_config_failed(ctx: LintContext, facts: ClusterFacts) -> Iterator[ClusterFinding]:
    known: set[str] | None = None
    cm_name = ""
    configmap_checked = False
    for _node_inv, node, flags in _flagged_nodes(
        facts, {inv.FLAG_MIG_FAILED, inv.FLAG_MIG_PENDING, inv.FLAG_MIG_INVALID}
    ):
        if not configmap_checked:
            # deferred for start-up time
            from gpuplane.diagnose.mig import known_configs, mig_parted_configmap

            cm = mig_parted_configmap(facts.state)
            if cm is not None:
                known = known_configs(cm)
                cm_name = f"{cm.namespace}/{cm.name}" if cm.namespace else cm.name
            configmap_checked = True
        yield from _mig_findings(ctx, facts, node, flags, known, cm_name)


def _mig_findings(
    ctx: LintContext, facts: ClusterFacts, node: Node, flags: set[str], known: set[str] | None, cm_name: str
) -> Iterator[ClusterFinding]:
    name = node.metadata.name
    labels = node.metadata.labels
    config = labels.get(inv.MIG_CONFIG, "")
    state = labels.get(inv.MIG_CONFIG_STATE, "")
    evidence = [
        _label_evidence(name, inv.MIG_CONFIG, config or None, "the mig-parted entry the node asks for")
    ]
    if state:
        evidence.append(_label_evidence(name, inv.MIG_CONFIG_STATE, state, "set by the MIG manager"))
    plugin_label = labels.get(inv.DEPLOY_DEVICE_PLUGIN)
    if plugin_label == PAUSED:
        evidence.append(
            _label_evidence(
                name,
                inv.DEPLOY_DEVICE_PLUGIN,
                PAUSED,
                "the device plugin is stopped until the change completes",
            )
        )
    managers = [p for c, p in facts.components_on(name) if c.id == "mig-manager"]
    manager_problem = next((p for p in managers if pod_problem(p) is not None), None)
    for pod in managers:
        evidence.append(_pod_evidence(pod, "MIG manager on the node"))
    logs = (
        f"kubectl logs -n {managers[0].metadata.namespace} {managers[0].metadata.name} --tail=200"
        if managers
        else "kubectl logs -n gpu-operator -l app=nvidia-mig-manager --tail=200"
    )
    missing_entry = ""
    if config and known is not None and config not in known:
        missing_entry = f"; entry {config!r} does not exist in the mig-parted config {cm_name}"
        evidence.append(
            Evidence(
                "object",
                ref(
                    "v1",
                    "ConfigMap",
                    cm_name.split("/")[0] if "/" in cm_name else None,
                    cm_name.split("/")[-1],
                ),
                "data[config.yaml].mig-configs",
                sorted(known),
                f"no entry named {config}",
            )
        )
    relabel = f"kubectl label node {name} {inv.MIG_CONFIG}=<entry of the mig-parted config> --overwrite"
    obj, state_label = facts.manifest(node), ("metadata", "labels", inv.MIG_CONFIG_STATE)
    if inv.FLAG_MIG_FAILED in flags:
        message = (
            f"node {name}: the MIG manager failed to apply {inv.MIG_CONFIG}={config!r} "
            f"({inv.MIG_CONFIG_STATE}=failed){missing_entry}; its GPUs keep the previous layout or none"
        )
        yield _finding(ctx, obj, state_label, message, f"{logs}  # then: {relabel}", evidence)
    elif inv.FLAG_MIG_PENDING in flags:
        if not managers or manager_problem is not None:
            why = (
                "no MIG manager pod runs on the node"
                if not managers
                else f"the MIG manager pod is {_problem_text(manager_problem)}"
                if manager_problem
                else ""
            )
            message = (
                f"node {name}: MIG change to {config!r} is stuck ({inv.MIG_CONFIG_STATE}={state}): {why}"
                f"{missing_entry}; the device plugin stays paused, the node advertises no GPUs"
            )
            yield _finding(
                ctx, obj, state_label, message, f"{logs}  # fix the MIG manager, or {relabel}", evidence
            )
        else:
            message = (
                f"node {name}: MIG change to {config!r} in progress ({inv.MIG_CONFIG_STATE}={state})"
                f"{missing_entry}; its GPUs are withheld until it succeeds"
            )
            yield _finding(
                ctx,
                obj,
                state_label,
                message,
                f"{logs}  # if the state does not reach success within minutes",
                evidence,
                severity="warning",
            )
    if inv.FLAG_MIG_INVALID in flags:
        product = labels.get(inv.GFD_PRODUCT, "")
        evidence_invalid = [
            _label_evidence(
                name, inv.GFD_PRODUCT, product, "GFD: the MIG layout does not fit the single strategy"
            )
        ]
        message = (
            f"node {name}: GPU Feature Discovery reports {product}: with MIG strategy single every GPU "
            "must be MIG-enabled with one and the same profile"
        )
        yield _finding(
            ctx,
            obj,
            ("metadata", "labels", inv.GFD_PRODUCT),
            message,
            f"{relabel}  # an all-<profile> entry, or switch the ClusterPolicy to mig.strategy: mixed",
            evidence_invalid,
        )
