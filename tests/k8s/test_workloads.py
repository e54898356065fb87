"""Workload expansion (gpuplane.k8s.workloads): exact PodSets for every controller kind.

Expected counts follow the controllers' own rules, cited in each family module
(reference/scheduling.md §4-5): Job min(parallelism, completions), Kubeflow replicas default
1, JobSet replicas × job pods, LWS groups × size, KubeRay desired replicas × numOfHosts, ...
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.k8s.objects import node_from_dict
from gpuplane.k8s.workloads import WORKLOAD_KINDS, Gang, PodSet, Related, expand, expand_all, is_workload
from gpuplane.sources import Manifest, load_paths

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "workloads"


def _load(name: str) -> list[Manifest]:
    result = load_paths([str(FIXTURES / name)])
    assert result.errors == []
    return result.objects


def _triples(podsets: list[PodSet]) -> list[tuple[str, str, str, str, int]]:
    return [(ps.kind, ps.source.name, ps.name, ps.role, ps.count) for ps in podsets]


# -- the upstream corpus ---------------------------------------------------------------------

CORPUS_EXPECTED = [
    ("nvidia/dra-driver-gpu/gpu-test-mps.v1.yaml", "Pod", "test-pod", "test-pod", "pod", 1),
    ("nvidia/dra-driver-gpu/gpu-test1.v1.yaml", "Pod", "pod1", "pod1", "pod", 1),
    ("nvidia/dra-driver-gpu/gpu-test1.v1.yaml", "Pod", "pod2", "pod2", "pod", 1),
    ("nvidia/dra-driver-gpu/gpu-test1.v1beta1.yaml", "Pod", "pod1", "pod1", "pod", 1),
    ("nvidia/dra-driver-gpu/gpu-test1.v1beta1.yaml", "Pod", "pod2", "pod2", "pod", 1),
    ("nvidia/dra-driver-gpu/gpu-test2.v1.yaml", "Pod", "pod", "pod", "pod", 1),
    ("nvidia/dra-driver-gpu/gpu-test4-mig.v1.yaml", "Deployment", "pod", "pod", "replica", 4),
    (
        "platform/disruption/karpenter-provider-aws-workload-disruption-budget.yaml",
        "Deployment",
        "pdb",
        "pdb",
        "replica",
        10,
    ),
    (
        "platform/karpenter/azure-karpenter-gpu-placeholder-INVALID.yaml",
        "Deployment",
        "gpu-placeholders",
        "gpu-placeholders",
        "replica",
        2,
    ),
    (
        "platform/karpenter/karpenter-blueprints-gpu-workload.yaml",
        "Pod",
        "nvidia-smi",
        "nvidia-smi",
        "pod",
        1,
    ),
    (
        "platform/karpenter/karpenter-provider-aws-workload-gpu-nvidia.yaml",
        "Deployment",
        "gpu-nvidia",
        "gpu-nvidia",
        "replica",
        0,
    ),
    ("scheduling/coscheduling/podgroup-replicaset-demo.yaml", "ReplicaSet", "nginx", "nginx", "replica", 6),
    ("scheduling/kueue/jobset-tas-required.yaml", "JobSet", "jobset-tas-required", "workers", "worker", 4),
    ("scheduling/kueue/jobset.yaml", "JobSet", "sleep-job-", "workers", "worker", 1),
    ("scheduling/kueue/jobset.yaml", "JobSet", "sleep-job-", "driver", "driver", 1),
    (
        "scheduling/kueue/leaderworkerset.yaml",
        "LeaderWorkerSet",
        "nginx-leaderworkerset",
        "leader",
        "leader",
        2,
    ),
    (
        "scheduling/kueue/leaderworkerset.yaml",
        "LeaderWorkerSet",
        "nginx-leaderworkerset",
        "worker",
        "worker",
        4,
    ),
    ("scheduling/kueue/mpijob-v2beta1.yaml", "MPIJob", "pi", "launcher", "launcher", 1),
    ("scheduling/kueue/mpijob-v2beta1.yaml", "MPIJob", "pi", "worker", "worker", 2),
    ("scheduling/kueue/pytorchjob.yaml", "PyTorchJob", "pytorch-simple", "master", "master", 1),
    ("scheduling/kueue/pytorchjob.yaml", "PyTorchJob", "pytorch-simple", "worker", "worker", 1),
    ("scheduling/kueue/rayjob.yaml", "RayJob", "rayjob-sample", "head", "head", 1),
    ("scheduling/kueue/rayjob.yaml", "RayJob", "rayjob-sample", "small-group", "worker", 1),
    ("scheduling/kueue/rayjob.yaml", "RayJob", "rayjob-sample", "submitter", "submitter", 1),
    (
        "scheduling/kueue/tas-indexed-job-required.yaml",
        "Job",
        "tas-sample-required",
        "tas-sample-required",
        "pod",
        10,
    ),
    (
        "scheduling/kueue/trainjob-torch-distributed.yaml",
        "TrainJob",
        "pytorch-distributed",
        "node",
        "trainer",
        2,
    ),
    ("scheduling/volcano/vcjob-mpi.yaml", "Job", "lm-mpi-job", "mpimaster", "master", 1),
    ("scheduling/volcano/vcjob-mpi.yaml", "Job", "lm-mpi-job", "mpiworker", "worker", 2),
    ("scheduling/volcano/vcjob-nginx-gang.yaml", "Job", "test-job", "default-nginx", "worker", 6),
    ("scheduling/volcano/vcjob-pytorch-plugin.yaml", "Job", "pytorch-job", "master", "master", 1),
    ("scheduling/volcano/vcjob-pytorch-plugin.yaml", "Job", "pytorch-job", "worker", "worker", 2),
]


def test_upstream_corpus_podsets(shared_dir: Path) -> None:
    root = shared_dir / "corpus" / "upstream"
    podsets = expand_all(load_paths([str(root)]).objects)
    got = [
        (str(Path(ps.source.path).relative_to(root)), ps.kind, ps.source.name, ps.name, ps.role, ps.count)
        for ps in podsets
    ]
    assert got == CORPUS_EXPECTED
    for ps in podsets:
        ps.pod()
        assert ps.pod_error is None


def test_upstream_corpus_gangs(shared_dir: Path) -> None:
    root = shared_dir / "corpus" / "upstream" / "scheduling"
    by_name = {(ps.source.name, ps.name): ps for ps in expand_all(load_paths([str(root)]).objects)}
    # coscheduling: ReplicaSet pods join PodGroup "nginx" (minMember 3 from the PodGroup object)
    assert by_name[("nginx", "nginx")].gang == Gang("coscheduling", "nginx", 3)
    # Kueue admits the whole TrainJob (2 nodes) from LocalQueue user-queue
    assert by_name[("pytorch-distributed", "node")].gang == Gang(
        "kueue", "pytorch-distributed", 2, "user-queue"
    )
    assert by_name[("pytorch-distributed", "node")].queue == "user-queue"
    # LWS: one Kueue workload per group of size 3
    assert by_name[("nginx-leaderworkerset", "worker")].gang == Gang(
        "kueue", "nginx-leaderworkerset", 3, "user-queue"
    )
    # Volcano Job: minAvailable and default queue
    assert by_name[("test-job", "default-nginx")].gang == Gang("volcano", "test-job", 3, "default")
    assert by_name[("pytorch-job", "worker")].pod().spec.scheduler_name == "volcano"
    # TrainJob resources from resourcesPerNode land on the runtime's "node" container
    node = by_name[("pytorch-distributed", "node")]
    assert node.synthetic and node.template_source is not None
    assert node.template_source.kind == "ClusterTrainingRuntime"
    assert node.pod().spec.containers[0].resources.requests == {
        "cpu": "4",
        "memory": "8Gi",
        "nvidia.com/gpu": "1",
    }
    assert node.distributed is True


# -- own fixtures, one per controller family ----------------------------------------------------


def test_core_controllers() -> None:
    podsets = expand_all(_load("batch.yaml"))
    assert _triples(podsets) == [
        ("Job", "indexed", "indexed", "pod", 4),
        ("Job", "suspended", "suspended", "pod", 0),
        ("Job", "work-queue", "work-queue", "pod", 5),
        ("CronJob", "nightly-eval", "nightly-eval", "pod", 2),
        ("StatefulSet", "triton", "triton", "replica", 3),
        ("Deployment", "api", "api", "replica", 1),
        ("ReplicationController", "legacy", "legacy", "replica", 2),
    ]
    indexed, suspended, work_queue, cron, sts, _, _ = podsets
    assert indexed.distributed is True and work_queue.distributed is False
    assert indexed.gang == Gang("kueue", "indexed", 4, "team-gpu")
    assert suspended.gang is None and suspended.queue is None
    assert cron.template_path == ("spec", "jobTemplate", "spec", "template")
    assert cron.spec_path == ("spec", "jobTemplate", "spec", "template", "spec")
    assert [c["metadata"]["name"] for c in sts.volume_claim_templates] == ["models"]
    # the template is the manifest's own dict, not a copy
    assert sts.template is sts.source.data["spec"]["template"]
    assert sts.field_line(("spec", "containers", 0)) == sts.source.line + 11  # the containers line


def test_bare_pod_template_is_the_pod() -> None:
    pod = Manifest(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": {}}
    )
    (ps,) = expand(pod)
    assert ps.template is pod.data and ps.template_path == () and ps.spec_path == ("spec",)
    assert ps.pod().metadata.namespace == "ns"
    assert ps.pod() is ps.pod()  # converted once


def test_daemonset_with_and_without_nodes() -> None:
    objects = _load("daemonset.yaml")
    nodes = [node_from_dict(o.data) for o in _load("nodes.yaml")]
    (blind,) = expand_all(objects)
    assert (blind.count, blind.count_known) == (1, False)
    (sized,) = expand_all(objects, nodes)
    # gpu-1 (tolerated taint), gpu-2 (cordoned: controller adds the unschedulable toleration),
    # gpu-4 (PreferNoSchedule is not filtered); not gpu-3 (NoExecute) nor cpu-1 (nodeSelector)
    assert (sized.count, sized.count_known) == (3, True)
    keys = {t.key for t in sized.pod().spec.tolerations}
    assert {"nvidia.com/gpu", "node.kubernetes.io/unschedulable", "node.kubernetes.io/not-ready"} <= keys
    assert "node.kubernetes.io/network-unavailable" not in keys  # only for hostNetwork pods
    assert "tolerations" in sized.template["spec"] and len(sized.template["spec"]["tolerations"]) == 1


def test_kubeflow_training_operator() -> None:
    (master, worker) = expand_all(_load("pytorchjob-gpu.yaml"))
    assert _triples([master, worker]) == [
        ("PyTorchJob", "llama-ft", "master", "master", 1),
        ("PyTorchJob", "llama-ft", "worker", "worker", 3),
    ]
    assert worker.gang == Gang("volcano", "llama-ft", 4, "research")
    assert worker.queue == "research" and worker.priority_class == "high" and worker.distributed
    assert worker.template_path == ("spec", "pytorchReplicaSpecs", "Worker", "template")
    assert worker.pod().spec.containers[0].resources.limits == {"nvidia.com/gpu": 8}

    podsets = expand_all(_load("tfjob-elastic-pytorch.yaml"))
    assert _triples(podsets) == [
        ("TFJob", "tf-dist", "chief", "chief", 1),
        ("TFJob", "tf-dist", "ps", "ps", 2),
        ("TFJob", "tf-dist", "worker", "worker", 4),
        ("PyTorchJob", "elastic", "worker", "worker", 0),  # runPolicy.suspend
    ]
    assert podsets[0].gang is None and podsets[0].distributed
    assert podsets[3].max_count == 6


def test_mpijob() -> None:
    podsets = expand_all(_load("mpijob.yaml"))
    assert _triples(podsets) == [
        ("MPIJob", "nccl-tests", "launcher", "launcher", 1),
        ("MPIJob", "nccl-tests", "worker", "worker", 4),
    ]
    assert podsets[1].gang == Gang("mpi-operator", "nccl-tests", 5, "hpc")


def test_trainjob_with_and_without_runtime() -> None:
    podsets = expand_all(_load("trainjob-runtime.yaml"))
    assert _triples(podsets) == [
        ("TrainJob", "fine-tune", "model-initializer", "initializer", 1),
        ("TrainJob", "fine-tune", "node", "trainer", 4),
        ("TrainJob", "orphan", "node", "trainer", 2),
    ]
    init, node, orphan = podsets
    assert node.gang == Gang("coscheduling", "fine-tune", 5)
    container = node.pod().spec.containers[0]
    assert container.image == "registry.example.com/ft:1.0"
    assert container.resources.limits == {"nvidia.com/gpu": 8}
    assert [(e.name, e.value) for e in container.env] == [("NCCL_DEBUG", "INFO")]
    assert node.synthetic and not init.synthetic and init.template_source is node.template_source
    # the runtime itself is untouched
    runtime_container = node.template_source.data["spec"]["template"]["spec"]["replicatedJobs"][1][
        "template"
    ]["spec"]["template"]["spec"]["containers"][0]
    assert runtime_container["image"].startswith("pytorch/") and "resources" not in runtime_container
    assert orphan.template_path == ("spec", "trainer") and orphan.synthetic
    assert orphan.pod().spec.containers[0].resources.limits == {"nvidia.com/gpu": 4}


def test_jobset_and_leaderworkerset() -> None:
    podsets = expand_all(_load("jobset-lws.yaml"))
    assert _triples(podsets) == [
        ("JobSet", "tpu-style", "driver", "driver", 1),
        ("JobSet", "tpu-style", "workers", "worker", 8),
        ("LeaderWorkerSet", "vllm-405b", "leader", "leader", 2),
        ("LeaderWorkerSet", "vllm-405b", "worker", "worker", 2),
    ]
    assert podsets[1].gang == Gang("kueue", "tpu-style", 9, "team-gpu")
    assert podsets[1].template_path == ("spec", "replicatedJobs", 1, "template", "spec", "template")
    # no leaderTemplate: the leader uses the worker template
    assert podsets[2].template is podsets[3].template and podsets[2].distributed


def test_ray() -> None:
    podsets = expand_all(_load("ray.yaml"))
    assert _triples(podsets) == [
        ("RayJob", "batch-infer", "head", "head", 1),
        ("RayJob", "batch-infer", "gpu-group", "worker", 4),  # replicas 1 < minReplicas 2, × numOfHosts 2
        ("RayJob", "batch-infer", "cpu-group", "worker", 0),  # suspended group
        ("RayJob", "batch-infer", "submitter", "submitter", 1),
        ("RayCluster", "interactive", "head", "head", 1),
        ("RayCluster", "interactive", "worker-group-0", "worker", 3),
        ("RayService", "serve-llm", "head", "head", 1),
    ]
    assert podsets[1].max_count == 16
    submitter = podsets[3]
    assert submitter.synthetic and submitter.pod().spec.containers[0].resources.requests == {
        "cpu": "500m",
        "memory": "200Mi",
    }
    assert podsets[5].gang == Gang("volcano", "ray-interactive-pg", 4, "interactive")
    assert podsets[0].distributed and not podsets[6].distributed


def test_volcano_job() -> None:
    podsets = expand_all(_load("volcano-job.yaml"))
    assert _triples(podsets) == [
        ("Job", "dist-train", "master", "master", 1),
        ("Job", "dist-train", "worker", "worker", 2),
    ]
    worker = podsets[1]
    assert worker.gang == Gang("volcano", "dist-train", 3, "training") and worker.queue == "training"
    assert worker.pod().spec.scheduler_name == "volcano"
    assert worker.pod().spec.priority_class_name == "batch-high"
    assert "schedulerName" not in worker.template["spec"]  # injected into the typed pod only


def test_inferenceservice() -> None:
    podsets = expand_all(_load("kserve.yaml"))
    assert _triples(podsets) == [
        ("InferenceService", "llama3-8b", "predictor", "predictor", 2),
        ("InferenceService", "llama3-8b", "transformer", "transformer", 1),
        ("InferenceService", "llama3-405b", "predictor", "predictor", 1),
        ("InferenceService", "llama3-405b", "worker", "worker", 1),
    ]
    predictor = podsets[0]
    pod = predictor.pod()
    assert (
        predictor.max_count == 5 and predictor.synthetic and predictor.template_path == ("spec", "predictor")
    )
    assert pod.spec.node_selector == {"nvidia.com/gpu.product": "NVIDIA-L4"}
    (container,) = pod.spec.containers
    assert (container.name, container.image) == ("kserve-container", "kserve/huggingfaceserver:v0.14.0-gpu")
    assert container.resources.limits == {"nvidia.com/gpu": "1", "memory": "24Gi"}
    assert pod.metadata.labels == {"team": "nlp"} and pod.metadata.namespace == "serving"
    assert podsets[2].distributed and podsets[3].distributed


def test_sparkapplication() -> None:
    driver, executor = expand_all(_load("spark.yaml"))
    assert _triples([driver, executor]) == [
        ("SparkApplication", "rapids-etl", "driver", "driver", 1),
        ("SparkApplication", "rapids-etl", "executor", "executor", 3),
    ]
    # driver: 4g + max(384Mi, 0.4 × 4g) for a Python app
    assert driver.pod().spec.containers[0].resources.requests == {"cpu": "2", "memory": "5734Mi"}
    assert executor.pod().spec.containers[0].resources.limits == {
        "memory": "32768Mi",
        "cpu": "8",
        "nvidia.com/gpu": 1,
    }
    assert executor.pod().spec.node_selector == {"nvidia.com/gpu.present": "true"}
    assert executor.gang == Gang("volcano", "spark-rapids-etl-pg", 1, "etl")
    assert not executor.distributed


def test_pod_level_gangs_and_queues() -> None:
    podsets = expand_all(_load("gangs.yaml"))
    assert _triples(podsets) == [
        ("Deployment", "volcano-gang", "volcano-gang", "replica", 4),
        ("Pod", "kueue-plain", "kueue-plain", "pod", 1),
        ("Deployment", "kueue-deploy", "kueue-deploy", "replica", 2),
    ]
    assert podsets[0].gang == Gang("volcano", "pg-train", 4, "research")
    assert podsets[1].gang == Gang("kueue", "group-a", 3, "user-queue")
    # Kueue admits Deployment pods one by one: a queue but no gang
    assert podsets[2].gang is None and podsets[2].queue == "user-queue"


def test_malformed_objects_never_raise() -> None:
    podsets = expand_all(_load("malformed.yaml"))
    assert _triples(podsets) == [
        ("Deployment", "bad-template", "bad-template", "replica", 1),
        ("RayCluster", "bad-ray", "g", "worker", 0),
        # bad-spark (executor memory "lots") creates no pods: spark-submit refuses the size
        # (JavaUtils.byteStringAsMib); the old expectation of a 1g default invented pods.
    ]
    bad = podsets[0]
    pod = bad.pod()  # wrong-typed fields are dropped, the rest is kept
    assert pod.metadata.labels == {"tier": "web"}
    assert pod.spec.containers[0].image == "busybox" and pod.spec.node_selector == {}
    assert bad.pod_error is not None and "$.spec.nodeSelector" in bad.pod_error
    for junk in ({"kind": "Deployment", "apiVersion": "apps/v1", "spec": []}, {"kind": "Pod"}):
        assert isinstance(expand(Manifest(junk)), list)


def test_non_workloads_and_registry() -> None:
    service = Manifest({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}})
    assert expand(service) == [] and not is_workload(service)
    assert ("kubeflow.org", "PyTorchJob") in WORKLOAD_KINDS
    assert ("batch.volcano.sh", "Job") in WORKLOAD_KINDS and ("batch", "Job") in WORKLOAD_KINDS
    related = Related.from_objects(_load("trainjob-runtime.yaml"))
    assert len(related) == 1
    assert related.get("trainer.kubeflow.org", "TrainingRuntime", "team-a", "torch-with-init") is not None


@pytest.mark.parametrize("count", [20_000])
def test_expand_all_does_no_per_pod_work(count: int) -> None:
    """20,000 objects expand without copying templates or converting pods: checked as work done
    (each template is the source's own dict, no Pod is built), not as a wall-clock time, which
    would depend on the machine (the timing is in bench/bench_micro.py)."""
    objects = []
    for i in range(count):
        kind = ("Deployment", "Job", "PyTorchJob", "ConfigMap")[i % 4]
        if kind == "Deployment":
            data = {
                "apiVersion": "apps/v1",
                "kind": kind,
                "metadata": {"name": f"d{i}"},
                "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c"}]}}},
            }
        elif kind == "Job":
            data = {
                "apiVersion": "batch/v1",
                "kind": kind,
                "metadata": {"name": f"j{i}"},
                "spec": {"parallelism": 2, "template": {"spec": {"containers": [{"name": "c"}]}}},
            }
        elif kind == "PyTorchJob":
            tpl = {"spec": {"containers": [{"name": "pytorch"}]}}
            data = {
                "apiVersion": "kubeflow.org/v1",
                "kind": kind,
                "metadata": {"name": f"p{i}"},
                "spec": {
                    "pytorchReplicaSpecs": {
                        "Master": {"template": tpl},
                        "Worker": {"replicas": 3, "template": tpl},
                    }
                },
            }
        else:
            data = {"apiVersion": "v1", "kind": kind, "metadata": {"name": f"c{i}"}}
        objects.append(Manifest(data))
    podsets = expand_all(objects)
    assert len(podsets) == count // 4 * 4
    for ps in podsets:
        owner = ps.template_source or ps.source
        node = owner.data
        for key in ps.template_path:
            node = node[key]
        assert ps.synthetic or node is ps.template
        assert ps._pod is None


def test_suspended_workloads_keep_their_resume_size() -> None:
    """Suspended controllers create no pods (count 0, as lint sees them) but keep the size they
    resume with, which the simulator submits to Kueue."""
    job = Manifest(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j", "namespace": "ml"},
            "spec": {
                "suspend": True,
                "parallelism": 3,
                "completions": 6,
                "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}},
            },
        }
    )
    (ps,) = expand(job)
    assert (ps.count, ps.suspended, ps.resume_count) == (0, True, 3)
    ptj = Manifest(
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": "p"},
            "spec": {
                "runPolicy": {"suspend": True},
                "pytorchReplicaSpecs": {
                    "Master": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c"}]}}},
                    "Worker": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c"}]}}},
                },
            },
        }
    )
    assert [(p.name, p.count, p.suspended, p.resume_count, p.distributed) for p in expand(ptj)] == [
        ("master", 0, True, 1, False),
        ("worker", 0, True, 3, False),
    ]
    jobset = Manifest(
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "metadata": {"name": "js"},
            "spec": {
                "suspend": True,
                "replicatedJobs": [
                    {
                        "name": "w",
                        "replicas": 2,
                        "template": {
                            "spec": {"parallelism": 2, "template": {"spec": {"containers": [{"name": "c"}]}}}
                        },
                    }
                ],
            },
        }
    )
    assert [(p.count, p.resume_count) for p in expand(jobset)] == [(0, 4)]
    running = Manifest({**job.data, "spec": {**job.data["spec"], "suspend": False}})
    (ps,) = expand(running)
    assert (ps.count, ps.suspended, ps.resume_count) == (3, False, 0)
