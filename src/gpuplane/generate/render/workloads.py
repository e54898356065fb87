"""Workload templates: training (PyTorchJob, Indexed Job + headless Service, MPIJob, Volcano
Job, JobSet) and inference (vLLM Deployment + Service + HPA + PDB).

Shapes and hooks from reference scheduling.md §5 (job controllers) and §4 (gang/queue
labels), platform.md §4.6 (/dev/shm), §5 (startup probe, scaling metric, PDB).
"""

from __future__ import annotations

from typing import Any

from gpuplane.generate.blueprint import InferenceTemplate, TrainingTemplate
from gpuplane.generate.plan import POOL_LABEL, PoolPlan
from gpuplane.generate.render.base import Bundle, meta
from gpuplane.generate.render.scheduling import SCHED_PLUGINS_NAME
from gpuplane.generate.render.storage import claim_names
from gpuplane.generate.render.tenancy import priority_class

TRAINING_TIER_PRIORITY = {"production": "production", "research": "research", "batch": "batch"}


def _gpu_resource(plan: PoolPlan) -> str:
    if plan.pool.sharing.mode == "mig":
        return next(iter(sorted(plan.resources_per_node())))
    return "nvidia.com/gpu"


def _pod_spec(bundle: Bundle, plan: PoolPlan, tenant: str, container: dict[str, Any], *, training: bool) -> dict[str, Any]:
    bp = bundle.blueprint
    t = bp.tenant(tenant)
    claims = claim_names(bundle, tenant)
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    if training:
        w_shm = container.pop("_shm")
        volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": w_shm}})
        mounts.append({"name": "dshm", "mountPath": "/dev/shm"})
    for role, claim in sorted(claims.items()):
        if role.startswith("dataset:"):
            name = role.split(":", 1)[1]
            volumes.append({"name": name, "persistentVolumeClaim": {"claimName": claim, "readOnly": True}})
            mounts.append({"name": name, "mountPath": f"/data/{name}", "readOnly": True})
        elif role == "checkpoints" and training:
            volumes.append({"name": "checkpoints", "persistentVolumeClaim": {"claimName": claim}})
            mounts.append({"name": "checkpoints", "mountPath": "/checkpoints"})
        elif role == "model-cache" and not training:
            volumes.append({"name": "model-cache", "persistentVolumeClaim": {"claimName": claim}})
            mounts.append({"name": "model-cache", "mountPath": "/models"})
    if mounts:
        container["volumeMounts"] = mounts
    spec: dict[str, Any] = {
        "containers": [container],
        "nodeSelector": {POOL_LABEL: plan.name},
        "tolerations": plan.tolerations(),
    }
    if t is not None:
        spec["priorityClassName"] = priority_class(t.tier)
    if volumes:
        spec["volumes"] = volumes
    if training:
        spec["terminationGracePeriodSeconds"] = 120
    return spec


def _colocate(bundle: Bundle, pod: dict[str, Any], name: str) -> None:
    """Keep every rank of a job in one zone: collectives across zones run at inter-zone speed.

    A required pod affinity matching the pod's own labels is satisfiable by the first rank
    (kube-scheduler's self-affinity exception, InterPodAffinity plugin). On-prem nodes often
    carry no zone label, where a required term would match no node: a preference there.
    """
    term = {"labelSelector": {"matchLabels": {"app.kubernetes.io/name": name}}, "topologyKey": "topology.kubernetes.io/zone"}
    if bundle.blueprint.provider == "on-prem":
        pod["affinity"] = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 100, "podAffinityTerm": term}]}}
    else:
        pod["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def _container(bundle: Bundle, plan: PoolPlan, name: str, image: str, gpus: int, *, gpu: bool = True) -> dict[str, Any]:
    eph = f"{bundle.blueprint.storage.model_artifacts_gi}Gi"
    limits: dict[str, Any] = {"cpu": "8", "memory": "64Gi", "ephemeral-storage": eph}
    requests: dict[str, Any] = {"cpu": "8", "memory": "64Gi", "ephemeral-storage": eph}
    if gpu:
        limits[_gpu_resource(plan)] = gpus
    return {"name": name, "image": image, "imagePullPolicy": "IfNotPresent",
            "resources": {"limits": limits, "requests": requests}}


def _queue_labels(bundle: Bundle, w: TrainingTemplate) -> dict[str, str]:
    if bundle.blueprint.scheduler.name == "kueue":
        return {"kueue.x-k8s.io/queue-name": w.tenant}
    return {}


def _gang(bundle: Bundle, w: TrainingTemplate, pod: dict[str, Any], pod_labels: dict[str, str]) -> None:
    """Scheduler hooks on the pod template: Volcano or coscheduling gang membership."""
    s = bundle.blueprint.scheduler.name
    if s == "volcano":
        pod["schedulerName"] = "volcano"
        if w.kind in ("indexed-job", "jobset"):
            pod_labels["_volcano_group"] = w.name
    elif s == "coscheduling":
        pod["schedulerName"] = SCHED_PLUGINS_NAME
        pod_labels["scheduling.x-k8s.io/pod-group"] = w.name


def _template(pod: dict[str, Any], labels: dict[str, str], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    labels = dict(labels)
    group = labels.pop("_volcano_group", None)
    if group:
        # Volcano gang for controllers without their own PodGroup: pods join by annotation
        # scheduling.k8s.io/group-name (volcano scheduling/v1beta1 KubeGroupNameAnnotationKey).
        annotations = {**(annotations or {}), "scheduling.k8s.io/group-name": group}
    m: dict[str, Any] = {"labels": labels}
    if annotations:
        m["annotations"] = annotations
    return {"metadata": m, "spec": pod}


def _training(bundle: Bundle, w: TrainingTemplate) -> list[dict[str, Any]]:
    plan = bundle.plan(w.pool)
    labels = {"app.kubernetes.io/name": w.name}
    ann = {"karpenter.sh/do-not-disrupt": "true"} if bundle.blueprint.autoscaling.provisioner == "karpenter" else None
    out: list[dict[str, Any]] = []

    def pod(gpu: bool = True, restart: str = "OnFailure", name: str = "trainer") -> dict[str, Any]:
        c = _container(bundle, plan, name, w.image, w.gpus_per_worker, gpu=gpu)
        c["command"] = list(w.command)
        c["_shm"] = w.shm_size
        p = _pod_spec(bundle, plan, w.tenant, c, training=True)
        p["restartPolicy"] = restart
        if gpu:
            _colocate(bundle, p, w.name)
        return p

    pod_labels = dict(labels)
    if bundle.blueprint.scheduler.name == "coscheduling":
        out.append({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": meta(w.name, w.tenant),
                    "spec": {"minMember": w.workers, "scheduleTimeoutSeconds": 120}})
    if bundle.blueprint.scheduler.name == "volcano" and w.kind in ("indexed-job", "jobset"):
        out.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": meta(w.name, w.tenant),
                    "spec": {"minMember": w.workers, "queue": w.tenant}})
    job_labels = {**labels, **_queue_labels(bundle, w)}
    if w.kind == "pytorchjob":
        specs = {}
        for rtype, n in (("Master", 1), ("Worker", w.workers - 1)):
            if n == 0:
                continue
            p = pod(name="pytorch")
            pl = dict(pod_labels)
            _gang(bundle, w, p, pl)
            specs[rtype] = {"replicas": n, "restartPolicy": "OnFailure", "template": _template(p, pl, ann)}
        spec: dict[str, Any] = {"pytorchReplicaSpecs": specs, "runPolicy": {"backoffLimit": 3, "cleanPodPolicy": "None"}}
        if bundle.blueprint.scheduler.name == "volcano":
            spec["runPolicy"]["schedulingPolicy"] = {"minAvailable": w.workers, "queue": w.tenant}
        out.append({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": meta(w.name, w.tenant, job_labels), "spec": spec})
    elif w.kind in ("indexed-job", "jobset"):
        p = pod(restart="Never")
        pl = dict(pod_labels)
        _gang(bundle, w, p, pl)
        if w.kind == "indexed-job":
            p["subdomain"] = w.name
            out.append({"apiVersion": "v1", "kind": "Service", "metadata": meta(w.name, w.tenant),
                        "spec": {"clusterIP": "None", "selector": labels, "publishNotReadyAddresses": True,
                                 "ports": [{"name": "rendezvous", "port": 29500}]}})
        job_spec = {
            "completionMode": "Indexed", "completions": w.workers, "parallelism": w.workers, "backoffLimit": 0,
            "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]},
            "template": _template(p, pl, ann),
        }
        if w.kind == "indexed-job":
            out.append({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta(w.name, w.tenant, job_labels), "spec": job_spec})
        else:
            out.append({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": meta(w.name, w.tenant, job_labels),
                        "spec": {"failurePolicy": {"maxRestarts": 3}, "network": {"enableDNSHostnames": True},
                                 "replicatedJobs": [{"name": "workers", "replicas": 1, "template": {"spec": job_spec}}]}})
    elif w.kind == "mpijob":
        launcher = pod(gpu=False, name="launcher")
        launcher["containers"][0]["resources"] = {"limits": {"cpu": "1", "memory": "2Gi"}, "requests": {"cpu": "1", "memory": "2Gi"}}
        launcher["containers"][0].pop("volumeMounts", None)
        # No GPU requested: hide the node's GPUs from the CUDA image (nvidia-gpu-stack.md §6).
        launcher["containers"][0]["env"] = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}]
        launcher.pop("volumes", None)
        launcher.pop("nodeSelector", None)
        launcher.pop("tolerations", None)
        worker = pod(name="worker")
        worker["containers"][0]["command"] = ["/usr/sbin/sshd", "-De"]
        ll, wl = dict(pod_labels), dict(pod_labels)
        _gang(bundle, w, launcher, ll)
        _gang(bundle, w, worker, wl)
        spec = {"slotsPerWorker": w.gpus_per_worker, "runPolicy": {"cleanPodPolicy": "Running"},
                "mpiReplicaSpecs": {
                    "Launcher": {"replicas": 1, "template": _template(launcher, ll)},
                    "Worker": {"replicas": w.workers, "template": _template(worker, wl, ann)}}}
        if bundle.blueprint.scheduler.name == "volcano":
            spec["runPolicy"]["schedulingPolicy"] = {"minAvailable": w.workers + 1, "queue": w.tenant}
        out.append({"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": meta(w.name, w.tenant, job_labels), "spec": spec})
    else:  # volcano-job
        p = pod(restart="OnFailure")
        out.append({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": meta(w.name, w.tenant, job_labels),
                    "spec": {"schedulerName": "volcano", "queue": w.tenant, "minAvailable": w.workers, "maxRetry": 3,
                             "plugins": {"pytorch": ["--master=master", "--worker=worker", "--port=23456"], "svc": []},
                             "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
                             "tasks": [{"name": "master", "replicas": 1, "template": _template(p, pod_labels, ann)},
                                       *([{"name": "worker", "replicas": w.workers - 1, "template": _template(p, pod_labels, ann)}]
                                         if w.workers > 1 else [])]}})
    return out


def _inference(bundle: Bundle, w: InferenceTemplate) -> list[dict[str, Any]]:
    plan = bundle.plan(w.pool)
    labels = {"app.kubernetes.io/name": w.name}
    c = _container(bundle, plan, "vllm", w.image, w.gpus)
    c["args"] = ["--model", w.model, "--port", "8000", "--download-dir", "/models"]
    c["env"] = [{"name": "HF_HOME", "value": "/models"}]
    c["ports"] = [{"name": "http", "containerPort": 8000}]
    period = 10
    c["startupProbe"] = {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": period,
                         "failureThreshold": max(w.startup_budget_s // period, 1)}
    c["readinessProbe"] = {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 5}
    c["livenessProbe"] = {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 15, "failureThreshold": 4}
    p = _pod_spec(bundle, plan, w.tenant, c, training=False)
    if w.gpus > 1:
        p["volumes"] = [*p.get("volumes", []), {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}}]
        c.setdefault("volumeMounts", []).append({"name": "dshm", "mountPath": "/dev/shm"})
    p["topologySpreadConstraints"] = [
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
         "labelSelector": {"matchLabels": labels}},
        {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "ScheduleAnyway",
         "labelSelector": {"matchLabels": labels}},
    ]
    deploy = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(w.name, w.tenant, labels),
        "spec": {"replicas": w.min_replicas, "selector": {"matchLabels": labels},
                 "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
                 "template": _template(p, labels)},
    }
    if w.scale_metric == "queue":
        metric = {"type": "Pods", "pods": {"metric": {"name": "vllm_num_requests_waiting"},
                                           "target": {"type": "AverageValue", "averageValue": w.target}}}
    else:
        metric = {"type": "Pods", "pods": {"metric": {"name": "DCGM_FI_DEV_GPU_UTIL"},
                                           "target": {"type": "AverageValue", "averageValue": w.target}}}
    hpa = {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": meta(w.name, w.tenant),
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": w.name},
                 "minReplicas": w.min_replicas, "maxReplicas": w.max_replicas, "metrics": [metric],
                 "behavior": {"scaleDown": {"stabilizationWindowSeconds": 600}}},
    }
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": meta(w.name, w.tenant),
           "spec": {"maxUnavailable": 1, "selector": {"matchLabels": labels}, "unhealthyPodEvictionPolicy": "AlwaysAllow"}}
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": meta(w.name, w.tenant, labels),
           "spec": {"selector": labels, "ports": [{"name": "http", "port": 8000, "targetPort": "http"}]}}
    return [deploy, svc, hpa, pdb]


def render(bundle: Bundle) -> None:
    bp = bundle.blueprint
    for w in bp.workloads.training:
        for obj in _training(bundle, w):
            bundle.add("70-workloads", obj)
    for w in bp.workloads.inference:
        for obj in _inference(bundle, w):
            bundle.add("70-workloads", obj)
    if bp.workloads.training:
        bundle.decide("workloads", "workloads.training", "/dev/shm memory emptyDir, 120s grace, checkpoints RWX",
                      "the 64 MiB default /dev/shm breaks DataLoader workers and NCCL; a grace period lets ranks write "
                      "a checkpoint on SIGTERM", "platform.md §4.6, §1.6")
    if bp.workloads.inference:
        bundle.decide("workloads", "workloads.inference", "startupProbe + HPA on queue depth + PDB maxUnavailable 1",
                      "weight loading takes minutes, so a startupProbe holds liveness off; vLLM queue depth tracks "
                      "saturation where CPU does not; the PDB keeps serving during drains and AlwaysAllow stops "
                      "never-ready pods from blocking them", "platform.md §5.1-5.4, §1.7")
        bundle.decide("workloads", "Deployment.strategy", "maxSurge 0, maxUnavailable 1",
                      "a surge pod needs a spare GPU that a full pool does not have; rollouts would stall",
                      "platform.md §5.4")
