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

import copy
import shlex
from collections.abc import Callable
from typing import Any

from gpuplane.generate import sizing
from gpuplane.generate.blueprint import RAY_VERSION, InferenceTemplate, TrainingTemplate
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
    if w.kind == "trainjob":
        return _torchrun(w, "$(PET_NODE_RANK)", "$(PET_MASTER_ADDR)", "$(PET_MASTER_PORT)")
    if w.kind == "rayjob":
        # The Ray job's entrypoint, run by the submitter against the cluster (Ray Train places the ranks).
        return ["python", *w.script] if w.script[0].endswith(".py") else list(w.script)
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
        c = _container(bundle, plan, name, w.container_image, w.gpus_per_worker, w.cpu, w.memory)
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
    if w.kind in ("trainjob", "rayjob"):
        # Their controllers create the PodGroup themselves (see _trainjob / _rayjob).
        return out + (
            _trainjob(bundle, w, pod, pod_labels, ann)
            if w.kind == "trainjob"
            else _rayjob(bundle, w, pod, pod_labels, ann)
        )
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


def _trainjob(
    bundle: Bundle,
    w: TrainingTemplate,
    pod: Callable[..., dict[str, Any]],
    pod_labels: dict[str, str],
    ann: dict[str, str] | None,
) -> list[dict[str, Any]]:
    """A Kubeflow Trainer v2 TrainJob and the namespaced TrainingRuntime it references.

    The gang is the runtime's ``podGroupPolicy``: the trainer creates one PodGroup per TrainJob with
    ``minMember`` = the sum of its PodSets' counts, here the ``numNodes`` trainer pods, and labels
    (coscheduling: ``scheduling.x-k8s.io/pod-group``) or annotates (Volcano:
    ``scheduling.k8s.io/group-name``) every pod itself (kubeflow/trainer v2.3.0
    ``pkg/runtime/framework/plugins/volcano/volcano.go`` Build / EnforcePodGroupPolicy,
    ``plugins/coscheduling/coscheduling.go``). It does not set the pod's scheduler: the runtime's pod
    template names it. The Volcano queue is the ``scheduling.volcano.sh/queue-name`` annotation of
    the runtime's template (docs/operator-guides/job-scheduling/volcano.md). The torch plugin sets
    ``PET_NNODES``, ``PET_NODE_RANK`` (the Job completion index), ``PET_MASTER_ADDR`` (=
    ``<trainjob>-node-0-0.<trainjob>``) and ``PET_MASTER_PORT`` on the container named ``node`` of
    the replicated Job ``node`` (``plugins/torch/torch.go``, ``pkg/constants``).
    """
    s = bundle.blueprint.scheduler.name
    p = pod(restart="Never", name="node")
    template_meta: dict[str, Any] = {}
    runtime_spec: dict[str, Any] = {"mlPolicy": {"numNodes": w.workers, "torch": {}}}
    if s == "volcano":
        p["schedulerName"] = "volcano"
        runtime_spec["podGroupPolicy"] = {"volcano": {}}
        template_meta["annotations"] = {"scheduling.volcano.sh/queue-name": w.tenant}
    elif s == "coscheduling":
        p["schedulerName"] = SCHED_PLUGINS_NAME
        runtime_spec["podGroupPolicy"] = {"coscheduling": {"scheduleTimeoutSeconds": 120}}
    pod_template = _template(p, pod_labels, ann)
    job_template = {
        "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
        "spec": {"template": pod_template},
    }
    jobset = {"replicatedJobs": [{"name": "node", "template": job_template}]}
    runtime_spec["template"] = {**({"metadata": template_meta} if template_meta else {}), "spec": jobset}
    runtime = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainingRuntime",
        "metadata": meta(w.name, w.tenant, {"trainer.kubeflow.org/framework": "torch"}),
        "spec": runtime_spec,
    }
    job = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": meta(w.name, w.tenant, {"app.kubernetes.io/name": w.name, **_queue_labels(bundle, w)}),
        "spec": {
            "runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": w.name},
            "trainer": {
                "numNodes": w.workers,
                "numProcPerNode": w.gpus_per_worker,
                "command": launch_command(w),
            },
        },
    }
    return [runtime, job]


def _rayjob(
    bundle: Bundle,
    w: TrainingTemplate,
    pod: Callable[..., dict[str, Any]],
    pod_labels: dict[str, str],
    ann: dict[str, str] | None,
) -> list[dict[str, Any]]:
    """A KubeRay RayJob of ``workers`` GPU pods: the head is rank 0's pod, ``workers - 1`` join it.

    The head carries GPUs like every worker, so the job's pods are exactly ``workers`` GPU shares
    (what the tenant's Kueue quota and the Volcano queue are sized in) and ``submissionMode:
    HTTPMode`` has the operator submit the entrypoint itself: no submitter pod to fit beside them.

    Volcano (operator started with ``batchScheduler.name: volcano``): KubeRay creates the PodGroup
    ``ray-<rayjob>-pg`` with ``minMember`` = head + desired workers (a K8sJobMode submitter would be
    left out of it on purpose, since it waits for the cluster), sets ``schedulerName: volcano`` on
    every pod and takes the queue from the RayJob's ``volcano.sh/queue-name`` label and the priority
    from ``ray.io/priority-class-name`` (ray-project/kuberay v1.7.0
    ``ray-operator/controllers/ray/batchscheduler/volcano/volcano_scheduler.go`` handleRayJob,
    createPodGroup, AddMetadataToChildResource). Autoscaling is off (minReplicas = replicas =
    maxReplicas), so the gang is the whole cluster. Kueue admits the RayJob from its queue-name
    label and requires ``shutdownAfterJobFinishes`` (kubernetes-sigs/kueue v0.19.2
    ``pkg/controller/jobs/rayjob/rayjob_webhook.go``).
    """
    s = bundle.blueprint.scheduler.name

    def ray_pod(name: str) -> dict[str, Any]:
        p = pod(name=name)
        p.pop("restartPolicy", None)  # RayCluster pods keep the default; KubeRay replaces failed workers
        p["containers"][0].pop("command", None)  # KubeRay writes `ray start` itself
        if s == "volcano":
            # KubeRay sets it too (AddMetadataToChildResource); written out so the manifest says its scheduler.
            p["schedulerName"] = "volcano"
        return p

    head = ray_pod("ray-head")
    head["containers"][0]["ports"] = [
        {"name": "gcs-server", "containerPort": 6379},
        {"name": "dashboard", "containerPort": 8265},
        {"name": "client", "containerPort": 10001},
    ]
    labels = {"app.kubernetes.io/name": w.name, **_queue_labels(bundle, w)}
    if s == "volcano":
        labels["volcano.sh/queue-name"] = w.tenant
        t = bundle.blueprint.tenant(w.tenant)
        if t is not None:
            labels["ray.io/priority-class-name"] = priority_class(t.tier)
    cluster: dict[str, Any] = {
        "rayVersion": RAY_VERSION,
        "headGroupSpec": {
            "rayStartParams": {"dashboard-host": "0.0.0.0"},
            "template": _template(head, pod_labels, ann),
        },
    }
    if w.workers > 1:
        cluster["workerGroupSpecs"] = [
            {
                "groupName": "gpu",
                "replicas": w.workers - 1,
                "minReplicas": w.workers - 1,
                "maxReplicas": w.workers - 1,
                "rayStartParams": {},
                "template": _template(ray_pod("ray-worker"), pod_labels, ann),
            }
        ]
    job = {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": meta(w.name, w.tenant, labels),
        "spec": {
            "entrypoint": shlex.join(launch_command(w)),
            "submissionMode": "HTTPMode",
            "shutdownAfterJobFinishes": True,
            "ttlSecondsAfterFinished": 600,
            "rayClusterSpec": cluster,
        },
    }
    return [job]


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
    if w.nodes > 1:
        return _leaderworkerset(bundle, w, p, labels)
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
    return [deploy, *_serving_objects(w, labels, labels, {"apiVersion": "apps/v1", "kind": "Deployment"})]


def _serving_objects(
    w: InferenceTemplate, labels: dict[str, str], serve_selector: dict[str, str], target: dict[str, str]
) -> list[dict[str, Any]]:
    """The Service (to the pods that serve HTTP), the HPA on ``target`` and the PDB of one template."""
    metric_name = "vllm_num_requests_waiting" if w.scale_metric == "queue" else "DCGM_FI_DEV_GPU_UTIL"
    metric = {
        "type": "Pods",
        "pods": {
            "metric": {"name": metric_name},
            "target": {"type": "AverageValue", "averageValue": w.target},
        },
    }
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": meta(w.name, w.tenant),
        "spec": {
            "scaleTargetRef": {**target, "name": w.name},
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
        "spec": {"selector": serve_selector, "ports": [{"name": "http", "port": 8000, "targetPort": "http"}]},
    }
    return [svc, hpa, pdb]


def _leaderworkerset(
    bundle: Bundle, w: InferenceTemplate, leader: dict[str, Any], labels: dict[str, str]
) -> list[dict[str, Any]]:
    """One replica = one LeaderWorkerSet group of ``nodes`` pods: vLLM over a Ray cluster.

    The leader starts the Ray head and ``vllm serve`` with ``--pipeline-parallel-size`` = nodes,
    each worker joins it at ``$(LWS_LEADER_ADDRESS)``; LWS sets ``LWS_LEADER_ADDRESS`` and
    ``LWS_GROUP_SIZE`` in every pod (kubernetes-sigs/lws v0.10.0
    ``api/leaderworkerset/v1/leaderworkerset_types.go``) and the vLLM image ships
    ``examples/online_serving/multi-node-serving.sh`` (lws docs/examples/vllm/GPU/lws.yaml).
    ``RecreateGroupOnPodRestart``: a Ray cluster that lost a pod cannot serve, so the group restarts.
    The default ``startupPolicy: LeaderCreated`` creates every pod of a group at once, so LWS's
    Volcano provider gives each group a PodGroup of ``minMember`` = size (1 with ``LeaderReady``,
    whose workers come only after the leader is Ready: ``pkg/schedulerprovider/volcano_provider.go``);
    the pods must name the volcano scheduler themselves (lws docs/examples/sample/gang-scheduling).
    Kueue admits each group as a unit from the LeaderWorkerSet's queue-name label.
    """
    s = bundle.blueprint.scheduler.name
    # Spread replicas over hosts only: a zone spread would also pull one group's pipeline stages apart.
    leader["topologySpreadConstraints"] = [
        t for t in leader["topologySpreadConstraints"] if t["topologyKey"] != "topology.kubernetes.io/zone"
    ]
    c = leader["containers"][0]
    args = c.pop("args")
    # The vllm-openai image's entrypoint, which the Deployment form runs with these args.
    serve = [
        "python3",
        "-m",
        "vllm.entrypoints.openai.api_server",
        *args,
        "--pipeline-parallel-size",
        str(w.nodes),
    ]
    if not any(v["name"] == "dshm" for v in leader.get("volumes", [])):
        # Ray's object store and NCCL use /dev/shm on every pod of the group.
        leader["volumes"] = [
            *leader.get("volumes", []),
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}},
        ]
        c.setdefault("volumeMounts", []).append({"name": "dshm", "mountPath": "/dev/shm"})
    c["command"] = [
        "sh",
        "-c",
        "bash /vllm-workspace/examples/online_serving/multi-node-serving.sh leader "
        "--ray_cluster_size=$(LWS_GROUP_SIZE) && exec " + shlex.join(serve),
    ]
    worker = copy.deepcopy(leader)
    wc = worker["containers"][0]
    wc["command"] = [
        "sh",
        "-c",
        "bash /vllm-workspace/examples/online_serving/multi-node-serving.sh worker "
        "--ray_address=$(LWS_LEADER_ADDRESS)",
    ]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        wc.pop(probe, None)  # workers run Ray only; the leader serves HTTP
    wc.pop("ports", None)
    if s == "volcano":
        leader["schedulerName"] = worker["schedulerName"] = "volcano"
    leader_labels = {**labels, "role": "leader"}
    lws_meta = meta(
        w.name, w.tenant, {**labels, **({"kueue.x-k8s.io/queue-name": w.tenant} if s == "kueue" else {})}
    )
    if s == "volcano":
        lws_meta["annotations"] = {"scheduling.volcano.sh/queue-name": w.tenant}
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": lws_meta,
        "spec": {
            "replicas": w.min_replicas,
            "startupPolicy": "LeaderCreated",
            "leaderWorkerTemplate": {
                "size": w.nodes,
                "restartPolicy": "RecreateGroupOnPodRestart",
                "leaderTemplate": _template(leader, leader_labels),
                "workerTemplate": _template(worker, labels),
            },
        },
    }
    target = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet"}
    return [lws, *_serving_objects(w, labels, leader_labels, target)]


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
