"""Scheduler and queue configuration: Volcano, scheduler-plugins coscheduling, or Kueue.

- Volcano Queue (``scheduling.volcano.sh/v1beta1``): weight, capability, reclaimable; the
  scheduler config (the chart's default action/tier list, ``installer/helm/chart/volcano/
  config/volcano-scheduler.conf``; reference scheduling.md §4.2) goes in through the chart's
  ``custom.scheduler_config_override`` value (``installer/helm/chart/volcano/values.yaml``):
  a separate ConfigMap of the chart's name would be overwritten on every ``helm upgrade``.
- Coscheduling: a second scheduler profile with ``Coscheduling`` in ``multiPoint`` and as the
  only ``queueSort`` plugin, ``CoschedulingArgs.permitWaitingTimeSeconds`` (scheduler-plugins
  ``apis/config/v1``; scheduling.md §4.3).
- Kueue (``kueue.x-k8s.io/v1beta2``, storage version since v0.16): one ResourceFlavor per
  pool (nodeLabels + tolerations injected into admitted pods), one ClusterQueue per tenant,
  one LocalQueue in its namespace, cohorts for borrowing (scheduling.md §4.4).
"""

from __future__ import annotations

from typing import Any

import yaml

from gpuplane.generate import sizing
from gpuplane.generate.components import component
from gpuplane.generate.plan import NVIDIA_GPU, POOL_LABEL, PoolPlan
from gpuplane.generate.render.base import Bundle, helm_release, meta

VOLCANO = component("volcano")
KUEUE = component("kueue")
SCHED_PLUGINS_VERSION = component("scheduler-plugins").version
SCHED_PLUGINS_NAME = "scheduler-plugins-scheduler"
SCHED_PLUGINS_NS = "scheduler-plugins"
SCHED_PLUGINS_CONTROLLER = "scheduler-plugins-controller"
KUEUE_API = "kueue.x-k8s.io/v1beta2"


def quota_units(bundle: Bundle, key: str) -> str:
    """Kubernetes resource name for a blueprint quota key (GPU model or MIG profile)."""
    from gpuplane.gpu.catalog import catalog  # deferred for start-up time

    if catalog().model(key) is not None:
        return NVIDIA_GPU
    return "nvidia.com/mig-" + key.replace("+", ".")


def tenant_gpu_resources(bundle: Bundle, tenant_index: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for key, n in bundle.blueprint.tenants[tenant_index].gpu_quota.items():
        res = quota_units(bundle, key)
        out[res] = out.get(res, 0) + n
    return dict(sorted(out.items()))


# --- Volcano -----------------------------------------------------------------------------------

# ``reclaim`` is added to the chart's default actions: Queue ``spec.reclaimable`` is read only by
# the reclaim action (volcano v1.15.1 pkg/scheduler/actions/reclaim/reclaim.go, ``q.Reclaimable()``),
# so without it a production queue never takes back the GPUs it lent to research and batch
# queues (order as in volcano docs/user-guide/how_to_use_capacity_plugin.md).
VOLCANO_CONF = {
    "actions": "enqueue, allocate, backfill, reclaim",
    "tiers": [
        {
            "plugins": [
                {"name": "priority"},
                {"name": "gang", "enablePreemptable": False},
                {"name": "conformance"},
            ]
        },
        {
            "plugins": [
                {"name": "overcommit"},
                {"name": "drf", "enablePreemptable": False},
                {"name": "predicates"},
                {"name": "proportion"},
                {"name": "nodeorder"},
                {"name": "binpack"},
            ]
        },
    ],
}


def _volcano(bundle: Bundle) -> None:
    text = yaml.dump(VOLCANO_CONF, Dumper=yaml.CSafeDumper, sort_keys=False, default_flow_style=False)
    bundle.releases.append(
        helm_release(
            VOLCANO,
            "volcano-system",
            {"custom": {"scheduler_config_override": text}},
            order=20,
        )
    )
    for i, t in enumerate(bundle.blueprint.tenants):
        spec: dict[str, Any] = {"weight": t.queue_share, "reclaimable": t.tier != "production"}
        gpus = tenant_gpu_resources(bundle, i)
        if gpus:
            spec["capability"] = {k: str(v) for k, v in gpus.items()}
        bundle.add(
            "30-scheduling",
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "Queue",
                "metadata": meta(t.name),
                "spec": spec,
            },
        )
    bundle.decide(
        "scheduling",
        "scheduler.name",
        "volcano",
        "gang scheduling (PodGroup minMember) stops two distributed jobs from each holding half the "
        "GPUs they need; one Queue per tenant with weight = queue_share and capability = GPU quota",
        "scheduling.md §4.1-4.2",
    )
    bundle.decide(
        "scheduling",
        "volcano scheduler config",
        "chart value custom.scheduler_config_override",
        "gang, priority, DRF, proportion and binpack in the scheduler's tiers; set through the chart so "
        "helm upgrade keeps it (a hand-made volcano-scheduler-configmap is overwritten by the chart)",
        "volcano installer/helm/chart/volcano/values.yaml",
    )
    bundle.decide(
        "scheduling",
        "tenants[*].tier",
        "production queues reclaimable=false",
        "other queues may not reclaim GPUs lent by production; research and batch queues can be reclaimed",
        "Volcano Queue spec.reclaimable",
    )


# --- Coscheduling --------------------------------------------------------------------------------


def _coscheduling(bundle: Bundle) -> None:
    ns = SCHED_PLUGINS_NS
    cfg = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {"leaderElect": False},
        "profiles": [
            {
                "schedulerName": SCHED_PLUGINS_NAME,
                "plugins": {
                    "multiPoint": {"enabled": [{"name": "Coscheduling"}]},
                    "queueSort": {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]},
                },
                "pluginConfig": [{"name": "Coscheduling", "args": {"permitWaitingTimeSeconds": 60}}],
            }
        ],
    }
    labels = {"app.kubernetes.io/name": SCHED_PLUGINS_NAME}
    bundle.add("00-namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": meta(ns)})
    bundle.add(
        "30-scheduling",
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(SCHED_PLUGINS_NAME, ns)},
    )
    bundle.add(
        "30-scheduling",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": meta(SCHED_PLUGINS_NAME),
            "rules": [
                {
                    "apiGroups": ["scheduling.x-k8s.io"],
                    "resources": ["podgroups", "podgroups/status", "elasticquotas"],
                    "verbs": ["get", "list", "watch", "update", "patch"],
                },
                {
                    "apiGroups": ["coordination.k8s.io"],
                    "resources": ["leases"],
                    "verbs": ["create", "get", "update"],
                },
            ],
        },
    )
    for role in ("system:kube-scheduler", "system:volume-scheduler", SCHED_PLUGINS_NAME):
        binding = f"{SCHED_PLUGINS_NAME}-{role.replace(':', '-').removeprefix('system-')}"
        bundle.add(
            "30-scheduling", _service_account_binding(binding, "ClusterRole", role, SCHED_PLUGINS_NAME, ns)
        )
    bundle.add(
        "30-scheduling",
        _service_account_binding(
            f"{SCHED_PLUGINS_NAME}-auth-reader",
            "Role",
            "extension-apiserver-authentication-reader",
            SCHED_PLUGINS_NAME,
            ns,
            binding_namespace="kube-system",
        ),
    )
    bundle.add(
        "30-scheduling",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta(f"{SCHED_PLUGINS_NAME}-config", ns),
            "data": {"scheduler-config.yaml": yaml.dump(cfg, Dumper=yaml.CSafeDumper, sort_keys=True)},
        },
    )
    bundle.add(
        "30-scheduling",
        _critical_deployment(
            SCHED_PLUGINS_NAME,
            ns,
            labels,
            {
                "name": "scheduler",
                "image": f"registry.k8s.io/scheduler-plugins/kube-scheduler:{SCHED_PLUGINS_VERSION}",
                "command": [
                    "/bin/kube-scheduler",
                    "--config=/etc/kubernetes/scheduler-config.yaml",
                ],
                "livenessProbe": {
                    "httpGet": {"path": "/healthz", "port": 10259, "scheme": "HTTPS"},
                    "initialDelaySeconds": 15,
                },
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 10259, "scheme": "HTTPS"}},
                "resources": {
                    "requests": {"cpu": "100m", "memory": "256Mi"},
                    "limits": {"memory": "1Gi"},
                },
                "securityContext": _non_root(),
                "volumeMounts": [{"name": "config", "mountPath": "/etc/kubernetes", "readOnly": True}],
            },
            volumes=[{"name": "config", "configMap": {"name": f"{SCHED_PLUGINS_NAME}-config"}}],
        ),
    )
    _coscheduling_controller(bundle)
    bundle.shared["crd_urls"].append(
        f"https://raw.githubusercontent.com/kubernetes-sigs/scheduler-plugins/{SCHED_PLUGINS_VERSION}/"
        "config/crd/bases/scheduling.x-k8s.io_podgroups.yaml"
    )
    bundle.decide(
        "scheduling",
        "scheduler.name",
        f"coscheduling ({SCHED_PLUGINS_NAME})",
        "a second scheduler whose Permit stage holds a PodGroup's pods until minMember fit; the default "
        "scheduler keeps serving everything else",
        "scheduling.md §4.3",
    )


def _coscheduling_controller(bundle: Bundle) -> None:
    """The scheduler-plugins controller: it drives each PodGroup's status (Pending -> Scheduling ->
    Running -> Finished/Failed, running/succeeded/failed counts; scheduler-plugins v0.34.7
    ``pkg/controllers/podgroup_controller.go`` Reconcile). The scheduler never writes it, so
    without the controller no PodGroup ever reports that its gang ran or failed.

    Objects as kubernetes-sigs/scheduler-plugins v0.34.7 installs them
    (``manifests/install/charts/as-a-second-scheduler``: ``controller`` values, the
    ``scheduler-plugins-controller`` ClusterRole in ``templates/rbac.yaml``, the controller
    Deployment in ``templates/deployment.yaml``).
    """
    ns = SCHED_PLUGINS_NS
    name = SCHED_PLUGINS_CONTROLLER
    labels = {"app.kubernetes.io/name": name}
    bundle.add("30-scheduling", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta(name, ns)})
    bundle.add(
        "30-scheduling",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": meta(name),
            "rules": [
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
                {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch", "update"]},
                {
                    "apiGroups": ["coordination.k8s.io"],
                    "resources": ["leases"],
                    "verbs": ["create", "get", "update"],
                },
                {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch", "patch"]},
                {
                    "apiGroups": ["scheduling.x-k8s.io"],
                    "resources": ["podgroups", "elasticquotas", "podgroups/status", "elasticquotas/status"],
                    "verbs": ["get", "list", "watch", "create", "delete", "update", "patch"],
                },
            ],
        },
    )
    bundle.add("30-scheduling", _service_account_binding(name, "ClusterRole", name, name, ns))
    bundle.add(
        "30-scheduling",
        _critical_deployment(
            name,
            ns,
            labels,
            {
                "name": "controller",
                "image": f"registry.k8s.io/scheduler-plugins/controller:{SCHED_PLUGINS_VERSION}",
                "imagePullPolicy": "IfNotPresent",
                "resources": {
                    "requests": {"cpu": "50m", "memory": "128Mi"},
                    "limits": {"memory": "512Mi"},
                },
                "securityContext": _non_root(),
            },
        ),
    )
    bundle.decide(
        "scheduling",
        "scheduler.name coscheduling",
        f"{name} {SCHED_PLUGINS_VERSION}",
        "the PodGroup controller maintains PodGroup status (phase and pod counts); the scheduler never "
        "writes it, so without the controller a gang's progress and failure are invisible",
        "kubernetes-sigs/scheduler-plugins pkg/controllers/podgroup_controller.go; "
        "manifests/install/charts/as-a-second-scheduler",
    )


# --- Kueue ---------------------------------------------------------------------------------------


def _host_quota(plan: PoolPlan, units: int) -> tuple[str, str]:
    """CPU and memory that ``units`` GPU units of a pool bring: the same share pods are sized with,
    so a quota admits exactly the pods its GPUs can run (sizing.py)."""
    shape, _ = sizing.node_shape(plan.pool, plan.gpus_per_node)
    assert shape is not None  # guaranteed by check_blueprint
    share = sizing.pod_share(shape, units, sizing.node_units(plan.pool, plan.gpus_per_node, plan.mig_layouts))
    return share.cpu, share.memory


# The chart's default integrations (kueue v0.19.2 charts/kueue/values.yaml,
# managerConfig.controllerManagerConfigYaml ``integrations.frameworks``): kubeflow.org/pytorchjob is
# commented out there, so a PyTorchJob's queue-name label is ignored and the job runs unadmitted.
KUEUE_DEFAULT_FRAMEWORKS = (
    "batch/job",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/rayservice",
    "ray.io/raycluster",
    "jobset.x-k8s.io/jobset",
    "workload.codeflare.dev/appwrapper",
    "trainer.kubeflow.org/trainjob",
    "pod",
    "deployment",
    "statefulset",
    "leaderworkerset.x-k8s.io/leaderworkerset",
)
KUEUE_KIND_FRAMEWORK = {"pytorchjob": "kubeflow.org/pytorchjob"}
FABRIC_RESOURCE_PREFIX = {"efa": "vpc.amazonaws.com/efa", "infiniband": "rdma/", "roce": "rdma/"}


def kueue_values(bundle: Bundle) -> dict[str, Any]:
    """Chart values: the manager configuration with every framework the templates use enabled.

    The chart takes the whole configuration as one string, so it is written out in full: the
    chart's defaults (health, metrics and webhook ports, leader election) plus the integrations.
    """
    kinds = {w.kind for w in bundle.blueprint.workloads.training}
    extra = sorted(KUEUE_KIND_FRAMEWORK[k] for k in kinds if k in KUEUE_KIND_FRAMEWORK)
    prefixes = dict(FABRIC_RESOURCE_PREFIX)
    if bundle.blueprint.network.mode == "sriov":
        # The SR-IOV device plugin's resource shares nvidia.com/ with the GPUs: exclude it by its full name.
        prefixes.update(infiniband="nvidia.com/hostdev", roce="nvidia.com/hostdev")
    fabric = sorted({prefixes[p.fabric] for p in bundle.plans if p.fabric in prefixes})
    if not extra and not fabric:
        return {}
    config: dict[str, Any] = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        "metrics": {"bindAddress": ":8443"},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        "integrations": {"frameworks": [*KUEUE_DEFAULT_FRAMEWORKS, *extra]},
    }
    if fabric:
        # Kueue admits a workload only when every resource it requests is covered by its ClusterQueue;
        # fabric devices are not quota, so they are excluded by prefix (kueue v0.19.2 Configuration
        # resources.excludeResourcePrefixes, charts/kueue/values.yaml).
        config["resources"] = {"excludeResourcePrefixes": fabric}
    text = yaml.dump(config, Dumper=yaml.CSafeDumper, sort_keys=False, default_flow_style=False)
    return {"managerConfig": {"controllerManagerConfigYaml": text}}


def _kueue(bundle: Bundle) -> None:
    bp = bundle.blueprint
    values = kueue_values(bundle)
    if values:
        bundle.decide(
            "scheduling",
            "kueue integrations",
            "kubeflow.org/pytorchjob enabled",
            "the chart's default configuration leaves the PyTorchJob integration off: the job's queue-name "
            "label would be ignored and it would run without admission",
            "kubernetes-sigs/kueue v0.19.2 charts/kueue/values.yaml integrations.frameworks",
        )
    bundle.releases.append(
        helm_release(
            KUEUE,
            "kueue-system",
            values,
            order=20,
        )
    )
    for plan in bundle.plans:
        spec: dict[str, Any] = {"nodeLabels": {POOL_LABEL: plan.name}}
        tolerations = plan.tolerations()
        if tolerations:
            spec["tolerations"] = tolerations
        bundle.add(
            "30-scheduling",
            {"apiVersion": KUEUE_API, "kind": "ResourceFlavor", "metadata": meta(plan.name), "spec": spec},
        )
    bundle.decide(
        "scheduling",
        "gpu_pools",
        "one ResourceFlavor per pool",
        "Kueue injects the flavor's nodeLabels and tolerations into admitted pods, so a workload lands on "
        "the pool whose quota admitted it",
        "scheduling.md §4.4",
    )
    cohorts = sorted({t.cohort for t in bp.tenants if t.cohort})
    for c in cohorts:
        bundle.add(
            "30-scheduling", {"apiVersion": KUEUE_API, "kind": "Cohort", "metadata": meta(c), "spec": {}}
        )
    for i, t in enumerate(bp.tenants):
        gpus = tenant_gpu_resources(bundle, i)
        flavors_allowed = t.flavors if t.flavors is not None else [p.name for p in bundle.plans]
        flavors: list[tuple[str, dict[str, Any]]] = []
        for plan in bundle.plans:
            if plan.name not in flavors_allowed:
                continue
            offered = plan.resources_max()
            names = [r for r in offered if r in gpus]
            if not names:
                continue
            resources: list[dict[str, Any]] = []
            for r in sorted(names):
                take = min(gpus[r], offered[r])
                gpus[r] -= take
                resources.append({"name": r, "nominalQuota": take})
            total = sum(x["nominalQuota"] for x in resources) or 1
            host_cpu, host_mem = _host_quota(plan, total)
            cpu = t.cpu or host_cpu
            mem = t.memory or host_mem
            flavors.append(
                (plan.name, {"cpu": cpu, "memory": mem, **{x["name"]: x["nominalQuota"] for x in resources}})
            )
        # One resource group: Kueue allows a resource in one group only ("Each resource and each flavor
        # can only form part of one resource group", kueue v0.19.2 apis/kueue/v1beta2/clusterqueue_types.go;
        # pkg/webhooks/clusterqueue_webhook.go validateResourceGroups rejects a repeated one as Duplicate),
        # and cpu/memory come with every pool. Each flavor lists every covered resource, in order (CEL
        # "flavors must have the same number of resources as the coveredResources"), 0 where it has none.
        covered = ["cpu", "memory", *sorted({r for _, q in flavors for r in q} - {"cpu", "memory"})]
        groups = (
            [
                {
                    "coveredResources": covered,
                    "flavors": [
                        {
                            "name": name,
                            "resources": [{"name": r, "nominalQuota": q.get(r, 0)} for r in covered],
                        }
                        for name, q in flavors
                    ],
                }
            ]
            if flavors
            else []
        )
        spec = {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": t.name}},
            "queueingStrategy": "BestEffortFIFO",
            "preemption": {
                "withinClusterQueue": "LowerPriority",
                "reclaimWithinCohort": "Any" if t.tier == "production" else "LowerPriority",
            },
            "resourceGroups": groups,
        }
        if t.cohort:
            spec["cohortName"] = t.cohort
        bundle.add(
            "30-scheduling",
            {"apiVersion": KUEUE_API, "kind": "ClusterQueue", "metadata": meta(t.name), "spec": spec},
        )
        bundle.add(
            "30-scheduling",
            {
                "apiVersion": KUEUE_API,
                "kind": "LocalQueue",
                "metadata": meta(t.name, t.name),
                "spec": {"clusterQueue": t.name},
            },
        )
    bundle.decide(
        "scheduling",
        "scheduler.name",
        "kueue",
        "Kueue admits whole workloads against quota (all pods or none), so a multi-node job never holds "
        "half its GPUs; pods are then placed by kube-scheduler",
        "scheduling.md §4.1, §4.4",
    )
    bundle.decide(
        "scheduling",
        "tenants[*]",
        "ClusterQueue per tenant + LocalQueue in its namespace",
        "the tenant's GPU quota becomes nominalQuota per flavor; cpu/memory are covered too because Kueue "
        "only admits workloads whose every requested resource is covered (the host CPU/memory those GPUs "
        "bring, as pods are sized, unless the tenant sets cpu/memory)",
        "Kueue ClusterQueue resourceGroups",
    )
    if cohorts:
        bundle.decide(
            "scheduling",
            "tenants[*].cohort",
            ", ".join(cohorts),
            "queues in one cohort borrow each other's idle quota; production reclaims with Any, others "
            "only from lower priority",
            "platform.md §1.6",
        )


def render(bundle: Bundle) -> None:
    name = bundle.blueprint.scheduler.name
    if name == "volcano":
        _volcano(bundle)
    elif name == "coscheduling":
        _coscheduling(bundle)
    elif name == "kueue":
        _kueue(bundle)
    else:
        bundle.decide(
            "scheduling",
            "scheduler.name",
            "default",
            "no gang scheduler: multi-pod training jobs can deadlock partially scheduled",
            "scheduling.md §4.1",
        )


def _service_account_binding(
    name: str,
    role_kind: str,
    role: str,
    account: str,
    namespace: str,
    binding_namespace: str | None = None,
) -> dict[str, Any]:
    """The RBAC binding ``name`` granting ``role`` (a ClusterRole, or a Role of
    ``binding_namespace``) to the ServiceAccount ``namespace/account``: a RoleBinding in
    ``binding_namespace`` when one is given, else a cluster-wide ClusterRoleBinding."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding" if binding_namespace else "ClusterRoleBinding",
        "metadata": meta(name, binding_namespace),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": namespace}],
    }


def _critical_deployment(
    name: str,
    namespace: str,
    labels: dict[str, str],
    container: dict[str, Any],
    volumes: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A one-replica control-plane Deployment ``namespace/name`` (the scheduler-plugins chart's
    scheduler and controller): run by the ServiceAccount of the same name, at priority
    ``system-cluster-critical``, its one container ``container``."""
    pod_spec: dict[str, Any] = {
        "serviceAccountName": name,
        "priorityClassName": "system-cluster-critical",
        "containers": [container],
    }
    if volumes:
        pod_spec["volumes"] = volumes
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(name, namespace, labels),
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        },
    }


def _non_root() -> dict[str, Any]:
    """The scheduler-plugins chart's container securityContext: uid 65532 (distroless nonroot), no
    privilege escalation. A new dict each call, so no two objects share one (YAML would alias it)."""
    return {"allowPrivilegeEscalation": False, "runAsNonRoot": True, "runAsUser": 65532}
