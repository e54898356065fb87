"""Workload templates: training (PyTorchJob, Indexed Job + headless Service, MPIJob, Volcano
Job, JobSet) and inference (vLLM Deployment + Service + HPA + PDB).

Shapes and hooks from reference scheduling.md §5 (job controllers) and §4 (gang/queue
labels), platform.md §4.6 (/dev/shm), §5 (startup probe, scaling metric, PDB). CPU and memory
requests are the pod's GPU share of its node (:mod:`gpuplane.generate.sizing`).

Launchers, one per controller, each wired to the rank and rendezvous that controller provides:

- PyTorchJob (kubeflow/training-operator v1.9 ``pkg/controller.v1/pytorch/envvar.go``): the
  operator sets ``MASTER_ADDR``/``MASTER_PORT`` (the master replica's Service) and
  ``PET_NODE_RANK``; ``spec.nprocPerNode`` becomes ``PET_NPROC_PER_NODE``.
- Indexed Job: pod hostname ``<job>-<index>``, with ``subdomain`` = a headless Service of the
  job's name it resolves as ``<job>-<index>.<job>``; the index is ``JOB_COMPLETION_INDEX``
  (Kubernetes "Job with Pod-to-Pod Communication", "Indexed completion mode").
- JobSet (kubernetes-sigs/jobset ``network.enableDNSHostnames``): hostname
  ``<jobset>-<replicatedJob>-<jobIndex>-<podIndex>``, subdomain defaults to the JobSet name;
  each child Job is Indexed, so the pod index is ``JOB_COMPLETION_INDEX``.
- Volcano Job with the ``pytorch`` plugin (volcano ``pkg/controllers/job/plugins/
  distributed-framework/pytorch/pytorch.go``): ``MASTER_ADDR`` = ``<job>-master-0.<job>`` (the
  ``svc`` plugin's headless Service), ``MASTER_PORT``, ``WORLD_SIZE`` = pods, ``RANK`` = 0 for
  the master and task index + 1 for workers.
- MPIJob v2beta1 (kubeflow/mpi-operator ``examples/v2beta1``): the launcher runs ``mpirun``
  over the hostfile the operator writes; workers run ``sshd -De`` and receive the launcher's
  SSH key at ``sshAuthMountPath``. The image needs Open MPI and openssh-server.

``$(VAR)`` in a command is expanded by the kubelet from the container's environment, which
includes the variables the controllers add when they create the pod.
"""

from __future__ import annotations

from typing import Any

from gpuplane.generate import sizing
from gpuplane.generate.blueprint import InferenceTemplate, TrainingTemplate
from gpuplane.generate.plan import POOL_LABEL, PoolPlan
from gpuplane.generate.render.base import Bundle, meta
from gpuplane.generate.render.network import pod_fabric
from gpuplane.generate.render.scheduling import SCHED_PLUGINS_NAME
from gpuplane.generate.render.storage import claim_names
from gpuplane.generate.render.tenancy import priority_class

TRAINING_TIER_PRIORITY = {"production": "production", "research": "research", "batch": "batch"}
RENDEZVOUS_PORT = 29500
HF_TOKEN_SECRET = "hf-token"


def _gpu_resource(plan: PoolPlan) -> str:
    if plan.pool.sharing.mode == "mig":
        return next(iter(sorted(plan.resources_per_node())))
    return "nvidia.com/gpu"


def _pod_spec(
    bundle: Bundle, plan: PoolPlan, tenant: str, container: dict[str, Any], *, training: bool
) -> dict[str, Any]:
    bp = bundle.blueprint
    t = bp.tenant(tenant)
    claims = claim_names(bundle, tenant)
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    if training:
        w_shm = container.pop("_shm")
        volumes.append({"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": w_shm}})
        mounts.append({"name": "dshm", "mountPath": "/dev/shm"})
    # One pod volume per claim; datasets mount read-only, checkpoints / model cache are folders
    # (subPath) of their volume's claim. The volume is read-only only if every mount is.
    writable: dict[str, bool] = {}
    for role, (claim, sub_path) in sorted(claims.items()):
        if role.startswith("dataset:"):
            mount = {"name": claim, "mountPath": f"/data/{claim}", "readOnly": True}
        elif role == "checkpoints" and training:
            mount = {"name": claim, "mountPath": "/checkpoints", "subPath": sub_path}
        elif role == "model-cache" and not training:
            mount = {"name": claim, "mountPath": "/models", "subPath": sub_path}
        else:
            continue
        mounts.append({k: v for k, v in mount.items() if v is not None})
        writable[claim] = writable.get(claim, False) or not mount.get("readOnly", False)
    for claim, rw in sorted(writable.items()):
        source: dict[str, Any] = {"claimName": claim}
        if not rw:
            source["readOnly"] = True
        volumes.append({"name": claim, "persistentVolumeClaim": source})
    if not training and "model-cache" not in claims:
        # No shared cache: keep downloads off the container's writable layer (imagefs), bounded.
        volumes.append(
            {"name": "model-cache", "emptyDir": {"sizeLimit": f"{bp.storage.model_artifacts_gi}Gi"}}
        )
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
    term = {
        "labelSelector": {"matchLabels": {"app.kubernetes.io/name": name}},
        "topologyKey": "topology.kubernetes.io/zone",
    }
    if bundle.blueprint.provider == "on-prem":
        pod["affinity"] = {
            "podAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": term}]
            }
        }
    else:
        pod["affinity"] = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def pod_resources(plan: PoolPlan, gpus: int, cpu: str | None, memory: str | None) -> tuple[str, str]:
    """CPU and memory of one pod: the blueprint's figures, else its GPU share of the node."""
    shape, _ = sizing.node_shape(plan.pool, plan.gpus_per_node)
    assert shape is not None  # guaranteed by check_blueprint
    units = sizing.node_units(plan.pool, plan.gpus_per_node, plan.mig_layouts)
    share = sizing.pod_share(shape, gpus if plan.pool.sharing.mode == "none" else 1, units)
    return cpu or share.cpu, memory or share.memory


def _container(
    bundle: Bundle,
    plan: PoolPlan,
    name: str,
    image: str,
    gpus: int,
    cpu: str | None = None,
    memory: str | None = None,
) -> dict[str, Any]:
    eph = f"{bundle.blueprint.storage.model_artifacts_gi}Gi"
    cpu, memory = pod_resources(plan, gpus, cpu, memory)
    limits: dict[str, Any] = {"cpu": cpu, "memory": memory, "ephemeral-storage": eph}
    requests: dict[str, Any] = {"cpu": cpu, "memory": memory, "ephemeral-storage": eph}
    limits[_gpu_resource(plan)] = gpus
    return {
        "name": name,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "resources": {"limits": limits, "requests": requests},
    }


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


def _template(
    pod: dict[str, Any], labels: dict[str, str], annotations: dict[str, str] | None = None
) -> dict[str, Any]:
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


def _torchrun(w: TrainingTemplate, rank: str, addr: str, port: str) -> list[str]:
    return [
        "torchrun",
        f"--nnodes={w.workers}",
        f"--nproc-per-node={w.gpus_per_worker}",
        f"--node-rank={rank}",
        f"--master-addr={addr}",
        f"--master-port={port}",
        *w.script,
    ]


def launch_command(w: TrainingTemplate, role: str = "worker") -> list[str]:
    """The command of one rank (or of the MPI launcher / workers) for the template's controller."""
    if w.command is not None:
        return list(w.command)
    if w.kind == "pytorchjob":
        return _torchrun(w, "$(PET_NODE_RANK)", "$(MASTER_ADDR)", "$(MASTER_PORT)")
    if w.kind == "indexed-job":
        return _torchrun(w, "$(JOB_COMPLETION_INDEX)", f"{w.name}-0.{w.name}", str(RENDEZVOUS_PORT))
    if w.kind == "jobset":
        return _torchrun(w, "$(JOB_COMPLETION_INDEX)", f"{w.name}-workers-0-0.{w.name}", str(RENDEZVOUS_PORT))
    if w.kind == "volcano-job":
        return _torchrun(w, "$(RANK)", "$(MASTER_ADDR)", "$(MASTER_PORT)")
    if role == "worker":
        return ["/usr/sbin/sshd", "-De"]
    program = ["python", *w.script] if w.script[0].endswith(".py") else list(w.script)
    return [
        "mpirun",
        "-np",
        str(w.workers * w.gpus_per_worker),
        "--allow-run-as-root",
        "-bind-to",
        "none",
        "-map-by",
        "slot",
        "-x",
        "NCCL_DEBUG=INFO",
        "-x",
        "LD_LIBRARY_PATH",
        "-x",
        "PATH",
        "-mca",
        "pml",
        "ob1",
        "-mca",
        "btl",
        "^openib",
        *program,
    ]


def mpijob_gang_minimum(w: TrainingTemplate) -> int:
    """Pods the MPIJob's gang must hold before it may run: the workers only.

    With ``launcherCreationPolicy: WaitForWorkersReady`` mpi-operator creates the launcher Job
    only once every worker pod is Ready (kubeflow/mpi-operator v0.8.0
    ``pkg/controller/mpi_job_controller.go`` syncHandler: ``LauncherCreationPolicyAtStartup ||
    countReadyWorkerPods(worker) == len(worker)``), while the PodGroup it creates for Volcano or
    scheduler-plugins takes ``minMember`` from ``schedulingPolicy.minAvailable``, defaulting to
    workers + 1 (``pkg/controller/podgroup.go`` calculateMinAvailable). A gang of workers + 1
    therefore waits for a launcher that is only created after the gang runs: the job never
    starts (kubeflow/mpi-operator#608). The launcher joins the running group afterwards.
    """
    return w.workers


def _training(bundle: Bundle, w: TrainingTemplate) -> list[dict[str, Any]]:
    plan = bundle.plan(w.pool)
    labels = {"app.kubernetes.io/name": w.name}
    ann = (
        {"karpenter.sh/do-not-disrupt": "true"}
        if bundle.blueprint.autoscaling.provisioner == "karpenter"
        else None
    )
    out: list[dict[str, Any]] = []
    # Multi-node ranks use the pool's fabric (render/network.py): its resource, NCCL/libfabric env.
    fabric = pod_fabric(bundle, plan, w.gpus_per_worker, w.tenant) if w.workers > 1 else {}
    # (plan.fabric is none for pools without multi-node training or with shared GPUs)
    if fabric.get("annotations"):
        ann = {**(ann or {}), **fabric["annotations"]}

    def pod(restart: str = "OnFailure", name: str = "trainer", role: str = "worker") -> dict[str, Any]:
        c = _container(bundle, plan, name, w.image, w.gpus_per_worker, w.cpu, w.memory)
        c["command"] = launch_command(w, role)
        for res, n in fabric.get("resources", {}).items():
            c["resources"]["limits"][res] = n
            c["resources"]["requests"][res] = n
        if fabric.get("env"):
            c["env"] = list(fabric["env"])
        if fabric.get("capabilities"):
            c["securityContext"] = {"capabilities": {"add": list(fabric["capabilities"])}}
        c["_shm"] = w.shm_size
        p = _pod_spec(bundle, plan, w.tenant, c, training=True)
        p["restartPolicy"] = restart
        _colocate(bundle, p, w.name)
        return p

    pod_labels = dict(labels)
    if bundle.blueprint.scheduler.name == "coscheduling":
        out.append(
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "PodGroup",
                "metadata": meta(w.name, w.tenant),
                "spec": {"minMember": w.workers, "scheduleTimeoutSeconds": 120},
            }
        )
    if bundle.blueprint.scheduler.name == "volcano" and w.kind in ("indexed-job", "jobset"):
        out.append(
            {
                "apiVersion": "scheduling.volcano.sh/v1beta1",
                "kind": "PodGroup",
                "metadata": meta(w.name, w.tenant),
                "spec": {"minMember": w.workers, "queue": w.tenant},
            }
        )
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
        spec: dict[str, Any] = {
            "pytorchReplicaSpecs": specs,
            "nprocPerNode": str(w.gpus_per_worker),
            "runPolicy": {"backoffLimit": 3, "cleanPodPolicy": "None"},
        }
        if bundle.blueprint.scheduler.name == "volcano":
            spec["runPolicy"]["schedulingPolicy"] = {"minAvailable": w.workers, "queue": w.tenant}
        out.append(
            {
                "apiVersion": "kubeflow.org/v1",
                "kind": "PyTorchJob",
                "metadata": meta(w.name, w.tenant, job_labels),
                "spec": spec,
            }
        )
    elif w.kind in ("indexed-job", "jobset"):
        p = pod(restart="Never")
        pl = dict(pod_labels)
        _gang(bundle, w, p, pl)
        if w.kind == "indexed-job":
            p["subdomain"] = w.name
            out.append(
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "metadata": meta(w.name, w.tenant),
                    "spec": {
                        "clusterIP": "None",
                        "selector": labels,
                        "publishNotReadyAddresses": True,
                        "ports": [{"name": "rendezvous", "port": RENDEZVOUS_PORT}],
                    },
                }
            )
        job_spec = {
            "completionMode": "Indexed",
            "completions": w.workers,
            "parallelism": w.workers,
            "backoffLimit": 0,
            "podFailurePolicy": {
                "rules": [
                    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}
                ]
            },
            "template": _template(p, pl, ann),
        }
        if w.kind == "indexed-job":
            out.append(
                {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "metadata": meta(w.name, w.tenant, job_labels),
                    "spec": job_spec,
                }
            )
        else:
            out.append(
                {
                    "apiVersion": "jobset.x-k8s.io/v1alpha2",
                    "kind": "JobSet",
                    "metadata": meta(w.name, w.tenant, job_labels),
                    "spec": {
                        "failurePolicy": {"maxRestarts": 3},
                        "network": {"enableDNSHostnames": True},
                        "replicatedJobs": [
                            {"name": "workers", "replicas": 1, "template": {"spec": job_spec}}
                        ],
                    },
                }
            )
    elif w.kind == "mpijob":
        launcher = pod(name="launcher", role="launcher")
        lc = launcher["containers"][0]
        lc["resources"] = {"limits": {"cpu": "1", "memory": "2Gi"}, "requests": {"cpu": "1", "memory": "2Gi"}}
        lc.pop("volumeMounts", None)
        lc.pop("securityContext", None)
        # No GPU requested: hide the node's GPUs from the CUDA image (nvidia-gpu-stack.md §6).
        lc["env"] = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}]
        for key in ("volumes", "nodeSelector", "tolerations", "affinity"):
            launcher.pop(key, None)
        worker = pod(name="worker")
        ll, wl = dict(pod_labels), dict(pod_labels)
        _gang(bundle, w, launcher, ll)
        _gang(bundle, w, worker, wl)
        spec = {
            "slotsPerWorker": w.gpus_per_worker,
            "mpiImplementation": "OpenMPI",
            "sshAuthMountPath": "/root/.ssh",
            "launcherCreationPolicy": "WaitForWorkersReady",
            "runPolicy": {"cleanPodPolicy": "Running"},
            "mpiReplicaSpecs": {
                "Launcher": {
                    "replicas": 1,
                    "restartPolicy": "OnFailure",
                    "template": _template(launcher, ll),
                },
                "Worker": {"replicas": w.workers, "template": _template(worker, wl, ann)},
            },
        }
        if bundle.blueprint.scheduler.name == "volcano":
            spec["runPolicy"]["schedulingPolicy"] = {
                "minAvailable": mpijob_gang_minimum(w),
                "queue": w.tenant,
            }
        out.append(
            {
                "apiVersion": "kubeflow.org/v2beta1",
                "kind": "MPIJob",
                "metadata": meta(w.name, w.tenant, job_labels),
                "spec": spec,
            }
        )
    else:  # volcano-job
        p = pod(restart="OnFailure")
        out.append(
            {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "metadata": meta(w.name, w.tenant, job_labels),
                "spec": {
                    "schedulerName": "volcano",
                    "queue": w.tenant,
                    "minAvailable": w.workers,
                    "maxRetry": 3,
                    "plugins": {"pytorch": ["--master=master", "--worker=worker", "--port=23456"], "svc": []},
                    "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
                    "tasks": [
                        {"name": "master", "replicas": 1, "template": _template(p, pod_labels, ann)},
                        *(
                            [
                                {
                                    "name": "worker",
                                    "replicas": w.workers - 1,
                                    "template": _template(p, pod_labels, ann),
                                }
                            ]
                            if w.workers > 1
                            else []
                        ),
                    ],
                },
            }
        )
    return out


def _inference(bundle: Bundle, w: InferenceTemplate) -> list[dict[str, Any]]:
    plan = bundle.plan(w.pool)
    labels = {"app.kubernetes.io/name": w.name}
    c = _container(bundle, plan, "vllm", w.image, w.gpus, w.cpu, w.memory)
    util = sizing.gpu_memory_utilization(plan.replicas)
    c["args"] = [
        "--model",
        w.model,
        "--port",
        "8000",
        "--download-dir",
        "/models",
        "--gpu-memory-utilization",
        f"{float(util):g}",
    ]
    if w.gpus > 1:
        c["args"] += ["--tensor-parallel-size", str(w.gpus)]
    c["env"] = [{"name": "HF_HOME", "value": "/models"}]
    if sizing.is_gated(w.model):
        # Gated model: the token comes from a Secret the user creates (gpuplane never writes Secrets);
        # optional, so the pod still starts when the weights are already in the cache.
        c["env"].append(
            {
                "name": "HF_TOKEN",
                "valueFrom": {"secretKeyRef": {"name": HF_TOKEN_SECRET, "key": "token", "optional": True}},
            }
        )
    c["ports"] = [{"name": "http", "containerPort": 8000}]
    period = 10
    c["startupProbe"] = {
        "httpGet": {"path": "/health", "port": "http"},
        "periodSeconds": period,
        "failureThreshold": max(w.startup_budget_s // period, 1),
    }
    c["readinessProbe"] = {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 5}
    c["livenessProbe"] = {
        "httpGet": {"path": "/health", "port": "http"},
        "periodSeconds": 15,
        "failureThreshold": 4,
    }
    p = _pod_spec(bundle, plan, w.tenant, c, training=False)
    if w.gpus > 1:
        p["volumes"] = [
            *p.get("volumes", []),
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}},
        ]
        c.setdefault("volumeMounts", []).append({"name": "dshm", "mountPath": "/dev/shm"})
    p["topologySpreadConstraints"] = [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": labels},
        },
        {
            "maxSkew": 1,
            "topologyKey": "kubernetes.io/hostname",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": labels},
        },
    ]
    deploy_labels = dict(labels)
    if bundle.blueprint.scheduler.name == "kueue":
        # Kueue admits a Deployment's pods only through the LocalQueue named by this label on the
        # Deployment's metadata (kueue v0.19.2 site/content/en/docs/tasks/run/deployment.md, "Queue
        # selection"); without it the serving ClusterQueue's quota is never used.
        deploy_labels["kueue.x-k8s.io/queue-name"] = w.tenant
    deploy = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": meta(w.name, w.tenant, deploy_labels),
        "spec": {
            "replicas": w.min_replicas,
            "selector": {"matchLabels": labels},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
            "template": _template(p, labels),
        },
    }
    if w.scale_metric == "queue":
        metric = {
            "type": "Pods",
            "pods": {
                "metric": {"name": "vllm_num_requests_waiting"},
                "target": {"type": "AverageValue", "averageValue": w.target},
            },
        }
    else:
        metric = {
            "type": "Pods",
            "pods": {
                "metric": {"name": "DCGM_FI_DEV_GPU_UTIL"},
                "target": {"type": "AverageValue", "averageValue": w.target},
            },
        }
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": meta(w.name, w.tenant),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": w.name},
            "minReplicas": w.min_replicas,
            "maxReplicas": w.max_replicas,
            "metrics": [metric],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 600}},
        },
    }
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": meta(w.name, w.tenant),
        "spec": {
            "maxUnavailable": 1,
            "selector": {"matchLabels": labels},
            "unhealthyPodEvictionPolicy": "AlwaysAllow",
        },
    }
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta(w.name, w.tenant, labels),
        "spec": {"selector": labels, "ports": [{"name": "http", "port": 8000, "targetPort": "http"}]},
    }
    return [deploy, svc, hpa, pdb]


def render(bundle: Bundle) -> None:
    bp = bundle.blueprint
    for w in bp.workloads.training:
        for obj in _training(bundle, w):
            bundle.add("70-workloads", obj)
    for served in bp.workloads.inference:
        for obj in _inference(bundle, served):
            bundle.add("70-workloads", obj)
    if bp.workloads.training:
        bundle.decide(
            "workloads",
            "workloads.training",
            "/dev/shm memory emptyDir, 120s grace, checkpoints RWX",
            "the 64 MiB default /dev/shm breaks DataLoader workers and NCCL; a grace period lets ranks write "
            "a checkpoint on SIGTERM",
            "platform.md §4.6, §1.6",
        )
    for w in bp.workloads.training:
        plan = bundle.plan(w.pool)
        cpu, mem = pod_resources(plan, w.gpus_per_worker, w.cpu, w.memory)
        bundle.decide(
            "workloads",
            f"workloads.training.{w.name}",
            f"{cpu} CPU / {mem} per pod, launcher: {launch_command(w, 'launcher')[0]}",
            "requests are the pod's GPU share of a node after the system reserve, so every rank fits and "
            "/dev/shm (charged to the memory limit) has room; ranks get node rank and rendezvous from "
            f"the {w.kind} controller",
            "generate/sizing.py; platform.md §4.6",
        )
    for served in bp.workloads.inference:
        plan = bundle.plan(served.pool)
        cpu, mem = pod_resources(plan, served.gpus, served.cpu, served.memory)
        util = sizing.gpu_memory_utilization(plan.replicas)
        bundle.decide(
            "workloads",
            f"workloads.inference.{served.name}",
            f"{cpu} CPU / {mem}, --gpu-memory-utilization {float(util):g}",
            "vLLM pre-allocates this fraction of the GPU; shared GPUs (no memory isolation) split 0.9 "
            "between their replicas"
            if plan.replicas > 1
            else "vLLM's default fraction of a whole GPU; CPU/memory are the pod's GPU share of the node",
            "vLLM engine args (gpu_memory_utilization); nvidia-gpu-stack.md §1.4",
        )
    if bp.workloads.inference:
        bundle.decide(
            "workloads",
            "workloads.inference",
            "startupProbe + HPA on queue depth + PDB maxUnavailable 1",
            "weight loading takes minutes, so a startupProbe holds liveness off; vLLM queue depth tracks "
            "saturation where CPU does not; the PDB keeps serving during drains and AlwaysAllow stops "
            "never-ready pods from blocking them",
            "platform.md §5.1-5.4, §1.7",
        )
        bundle.decide(
            "workloads",
            "Deployment.strategy",
            "maxSurge 0, maxUnavailable 1",
            "a surge pod needs a spare GPU that a full pool does not have; rollouts would stall",
            "platform.md §5.4",
        )
