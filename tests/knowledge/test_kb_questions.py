"""The question set: each question, the section that must be among the sources, and the
facts (exact strings, case-insensitive) a correct answer must contain.

The facts are what a GPU-platform engineer would insist on hearing; they come from
the knowledge base's verified sections, which cite upstream.
"""

from __future__ import annotations

import pytest

from gpuplane.knowledge.answer import answer


@pytest.fixture(autouse=True)
def _no_user_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never write the index cache into the user's home directory."""
    monkeypatch.setenv("GPUPLANE_CACHE_DIR", "off")


# (question, expected section id among sources, facts the answer must contain)
QUESTIONS: list[tuple[str, str, list[str]]] = [
    # GPU Operator
    (
        "How do I install the GPU Operator on nodes that already have the NVIDIA driver?",
        "gpu-operator-preinstalled-drivers",
        ["driver.enabled=false"],
    ),
    (
        "Which Helm values of the gpu-operator chart do I change when Node Feature Discovery already runs?",
        "gpu-operator-install",
        ["nfd.enabled", "false"],
    ),
    (
        "GPU operator toolkit daemonset cannot find containerd socket on RKE2",
        "gpu-operator-cloud-providers",
        ["CONTAINERD_SOCKET", "CONTAINERD_CONFIG"],
    ),
    (
        "nvidia-operator-validator stuck in Init, device plugin pods Init:0/1",
        "gpu-operator-troubleshooting",
        ["driver", "toolkit"],
    ),
    (
        "What does the node label nvidia.com/gpu.deploy.operands=false do?",
        "gpu-operator-node-labels",
        ["nvidia.com/gpu.deploy.operands=false"],
    ),
    # device plugin
    (
        "What error does the device plugin give when time-slicing replicas is 1?",
        "device-plugin-config-file",
        ["number of replicas must be >= 2"],
    ),
    (
        "How do I give one node pool a different device plugin config than another?",
        "device-plugin-per-node-config",
        ["nvidia.com/device-plugin.config"],
    ),
    (
        "Which label tells me the GPU model of a node?",
        "gpu-feature-discovery-labels",
        ["nvidia.com/gpu.product"],
    ),
    # exposing GPUs to pods
    (
        "Can a container set a GPU request without a GPU limit?",
        "requesting-gpus-in-pods",
        ["Limit must be set for non overcommitable resources"],
    ),
    (
        "Can a pod request half a GPU with nvidia.com/gpu: 0.5?",
        "requesting-gpus-in-pods",
        ["whole", "time-slicing", "MIG"],
    ),
    (
        "My pod without a GPU request can see all GPUs with nvidia-smi. Why?",
        "nvidia-visible-devices-isolation",
        ["NVIDIA_VISIBLE_DEVICES", "void"],
    ),
    (
        "How do I stop unprivileged pods from using NVIDIA_VISIBLE_DEVICES to get GPUs?",
        "nvidia-visible-devices-isolation",
        ["accept-nvidia-visible-devices-envvar-when-unprivileged", "volume-mounts"],
    ),
    (
        "init container requests 4 GPUs and main container 1 GPU, how many GPUs does the pod reserve?",
        "init-containers-gpu",
        ["4 GPUs"],
    ),
    (
        "Pod asks for nvidia.com/gpus and stays Pending forever",
        "gpu-resource-names",
        ["nvidia.com/gpus", "Insufficient nvidia.com/gpus"],
    ),
    # sharing
    (
        "Should I use time-slicing or MIG for notebooks of different tenants?",
        "gpu-sharing-comparison",
        ["memory isolation", "MIG"],
    ),
    (
        "How many nvidia.com/gpu does a node with 8 GPUs advertise with time-slicing replicas 10?",
        "gpu-time-slicing",
        ["80"],
    ),
    (
        "UnexpectedAdmissionError maximum request size for shared resources is 1",
        "shared-gpu-requests",
        ["failRequestsGreaterThanOne"],
    ),
    ("Does MPS give each pod a memory limit on the GPU?", "gpu-mps", ["1/replicas"]),
    (
        "Which resource name does a pod request for a MIG 3g.40gb slice with the mixed strategy?",
        "mig-strategies",
        ["nvidia.com/mig-3g.40gb"],
    ),
    ("How many 1g.10gb MIG instances fit on an A100 80GB?", "mig-profiles", ["1g.10gb", "(7)"]),
    (
        "nvidia.com/mig.config.state is failed on my node",
        "mig-manager-parted",
        ["nvidia.com/mig.config.state", "failed"],
    ),
    (
        "How do I request a GPU with DRA and a ResourceClaimTemplate?",
        "dra-overview",
        ["resourceClaimTemplateName", "gpu.nvidia.com"],
    ),
    # unschedulable / multi-tenancy
    (
        "What does 0/12 nodes are available: 10 Insufficient nvidia.com/gpu mean in FailedScheduling?",
        "failedscheduling-messages",
        ["Insufficient nvidia.com/gpu", "preemption"],
    ),
    (
        "GPU pod pending with node(s) had untolerated taint(s)",
        "gpu-taints-tolerations",
        ["nvidia.com/gpu", "NoSchedule", "ExtendedResourceToleration"],
    ),
    ("How do I keep CPU-only pods off GPU nodes?", "cpu-pods-on-gpu-nodes", ["taint"]),
    (
        "Free GPUs in the cluster but my 8-GPU pod is pending, how do I bin-pack GPUs?",
        "gpu-fragmentation-binpacking",
        ["MostAllocated", "nvidia.com/gpu"],
    ),
    (
        "Why does my node show nvidia.com/gpu capacity 8 but allocatable 7?",
        "gpu-health-xid",
        ["unhealthy", "allocatable"],
    ),
    # node affinity and topology spread
    (
        "How do I pin a pod to A100 or H100 nodes with node affinity?",
        "gpu-node-selection",
        ["nvidia.com/gpu.product", "requiredDuringSchedulingIgnoredDuringExecution"],
    ),
    (
        "What does nodeTaintsPolicy do in topologySpreadConstraints?",
        "topology-spread-constraints",
        ["nodeTaintsPolicy", "Ignore"],
    ),
    (
        "Should distributed training ranks be spread across zones with topology spread?",
        "training-locality",
        ["topology.kubernetes.io/zone"],
    ),
    # training jobs
    (
        "How do workers of an Indexed Job find rank 0?",
        "indexed-job-training",
        ["subdomain", "headless Service"],
    ),
    ("How many Master replicas can a PyTorchJob have?", "pytorchjob", ["exactly 1"]),
    ("Should the MPIJob launcher request GPUs?", "mpijob", ["launcher", "runLauncherAsWorker"]),
    (
        "What is a TrainJob runtimeRef and ClusterTrainingRuntime?",
        "trainjob-trainer-v2",
        ["ClusterTrainingRuntime", "runtimeRef"],
    ),
    ("How does JobSet give pods stable DNS names?", "jobset", ["subdomain"]),
    # gang scheduling
    (
        "Why does the default scheduler partially schedule my multi-node training job?",
        "gang-scheduling-why",
        ["one pod", "gang"],
    ),
    (
        "What happens if PodGroup minMember is larger than the number of pods?",
        "gang-min-available",
        ["never"],
    ),
    (
        "How do I configure the coscheduling plugin with a PodGroup label?",
        "coscheduling-plugin",
        ["scheduling.x-k8s.io/pod-group", "minMember"],
    ),
    (
        "Volcano queue resource quota insufficient, what does it mean?",
        "volcano-scheduler",
        ["queue resource quota insufficient", "capability"],
    ),
    (
        "Pods have schedulerName volcano and no events at all",
        "custom-scheduler-name",
        ["schedulerName", "FailedScheduling"],
    ),
    # Kueue
    (
        "How do I set up Kueue ClusterQueue and LocalQueue with GPU quota?",
        "kueue-overview",
        ["nominalQuota", "kueue.x-k8s.io/queue-name"],
    ),
    (
        "Kueue workload says couldn't assign flavors to pod set insufficient unused quota",
        "kueue-pending-workloads",
        ["couldn't assign flavors"],
    ),
    (
        "How can one team borrow idle GPUs from another team's Kueue quota?",
        "kueue-cohorts-preemption",
        ["cohort", "borrowingLimit"],
    ),
    # quotas and priorities
    ("Which ResourceQuota key limits GPUs in a namespace?", "gpu-resourcequota", ["requests.nvidia.com/gpu"]),
    (
        "Is limits.nvidia.com/gpu enforced in a ResourceQuota?",
        "gpu-resourcequota",
        ["limits.nvidia.com/gpu", "enforced"],
    ),
    (
        "Where does the exceeded quota error for requests.nvidia.com/gpu show up when a Job creates pods?",
        "quota-admission-errors",
        ["FailedCreate"],
    ),
    (
        "How should I design PriorityClasses for production inference vs research notebooks?",
        "priorityclasses-gpu-tiers",
        ["preemptionPolicy", "Never"],
    ),
    (
        "Can my training job use system-node-critical priority?",
        "system-priority-classes",
        ["system-node-critical"],
    ),
    # autoscaling
    (
        "Cluster autoscaler does not scale up my GPU node group from zero",
        "cluster-autoscaler-scale-from-zero",
        ["k8s.io/cluster-autoscaler/node-template/resources/nvidia.com/gpu"],
    ),
    (
        "How long does a new GPU node take before nvidia.com/gpu is allocatable?",
        "cluster-autoscaler-gpu",
        ["15 minutes"],
    ),
    (
        "When does cluster autoscaler remove an idle GPU node?",
        "cluster-autoscaler-scale-down-gpu",
        ["scale-down-gpu-utilization-threshold", "0.5"],
    ),
    ("How do I reduce GPU node cold start latency for inference?", "gpu-cold-start", ["image"]),
    (
        "Karpenter NodePool for GPUs: how do I limit the number of GPUs?",
        "karpenter-gpu-nodepool",
        ["limits", "nvidia.com/gpu"],
    ),
    (
        "How do I stop Karpenter consolidation from killing my training job?",
        "karpenter-disruption",
        ["karpenter.sh/do-not-disrupt"],
    ),
    (
        "Karpenter GPU node never gets karpenter.sh/initialized",
        "karpenter-gpu-troubleshooting",
        ["device plugin"],
    ),
    (
        "Image pull fails on Karpenter GPU nodes because the root volume is too small",
        "karpenter-ec2nodeclass-gpu",
        ["20Gi", "blockDeviceMappings"],
    ),
    # storage
    (
        "How do I fix a Multi-Attach error when training workers share a PVC?",
        "access-modes-multi-attach",
        ["ReadWriteOnce", "ReadWriteMany"],
    ),
    (
        "Which CSI driver and deploymentType do I use for FSx for Lustre?",
        "fsx-lustre-csi",
        ["fsx.csi.aws.com", "SCRATCH_2"],
    ),
    (
        "Is there a CSI driver for GPFS / IBM Storage Scale?",
        "parallel-filesystems-csi",
        ["spectrumscale.csi.ibm.com"],
    ),
    (
        "volume node affinity conflict for my GPU pod with an EBS volume",
        "volume-binding-mode",
        ["WaitForFirstConsumer"],
    ),
    (
        "Where should a model server download a 100 GB model without getting evicted?",
        "ephemeral-storage-models",
        ["ephemeral-storage", "sizeLimit"],
    ),
    # /dev/shm
    (
        "What is the default /dev/shm size in a Kubernetes container and how do I increase it?",
        "dev-shm-sizing",
        ["64 MiB", "medium: Memory"],
    ),
    ("DataLoader worker is killed by signal: Bus error", "dev-shm-errors", ["Bus error", "/dev/shm"]),
    # inference serving
    (
        "My vLLM pod is killed by the liveness probe while loading the model",
        "inference-startup-probes",
        ["startupProbe", "failureThreshold"],
    ),
    (
        "How do I autoscale LLM inference on queue depth instead of CPU?",
        "inference-autoscaling-metrics",
        ["vllm:num_requests_waiting"],
    ),
    (
        "Rolling update of my GPU deployment is stuck with a pending pod",
        "gpu-rolling-updates",
        ["maxUnavailable", "maxSurge"],
    ),
    # observability
    ("Which DCGM exporter metric shows GPU utilization?", "dcgm-exporter", ["DCGM_FI_DEV_GPU_UTIL"]),
    # paraphrased questions (QA: everyday wording, request words, plurals, no exact section terms)
    (
        "how to stop CPU pods landing on GPU nodes",
        "cpu-pods-on-gpu-nodes",
        ["operator: Exists", "toleration"],
    ),
    (
        "which taint keeps non-GPU workloads off my GPU node pool",
        "cpu-pods-on-gpu-nodes",
        ["nvidia.com/gpu:NoSchedule"],
    ),
    (
        "how can several small inference pods share one GPU",
        "gpu-sharing-comparison",
        ["time-slicing", "MPS", "MIG"],
    ),
    (
        "distributed training workers should all start together or not at all",
        "gang-scheduling-why",
        ["one pod per scheduling cycle"],
    ),
    (
        "notebook pods run forever on expensive idle GPU nodes, how do I get the nodes removed",
        "cluster-autoscaler-scale-down-gpu",
        ["--scale-down-gpu-utilization-threshold"],
    ),
    ("split an A100 into smaller slices for different teams", "mig-profiles", ["MIG"]),
    (
        "training job pods end up in different availability zones",
        "training-locality",
        ["topology.kubernetes.io/zone"],
    ),
    # acronyms (regression: "Is DRA stable?" answered with the Indexed Job section's "Stable DNS")
    (
        "Is DRA stable?",
        "dra-overview",
        ["GA", "v1.34", "resource.k8s.io/v1", "enabled by default", "Classic DRA", "removed"],
    ),
    ("Does MPS isolate GPU memory between clients?", "gpu-mps", ["MPS"]),
    ("Do I need a PDB for my inference deployment?", "inference-pdb", ["maxUnavailable"]),
    ("RWX volume for a shared training dataset", "rwx-shared-datasets", ["ReadWriteMany"]),
]


@pytest.mark.parametrize(("question", "section", "facts"), QUESTIONS, ids=[q[0][:60] for q in QUESTIONS])
def test_question(question: str, section: str, facts: list[str]) -> None:
    result = answer(question)
    ids = [s["section"] for s in result.sources]
    assert section in ids, f"{section} not among sources {ids}"
    text = result.answer.lower()
    missing = [f for f in facts if f.lower() not in text]
    assert not missing, f"answer lacks {missing}:\n{result.answer}"


def test_question_set_size() -> None:
    assert len(QUESTIONS) >= 40
