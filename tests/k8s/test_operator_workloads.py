"""Expanders of the AI operators' custom resources: pod counts, roles, GPUs, gangs and where
their fields sit (fixtures written from each project's API types, cited in the modules)."""

from __future__ import annotations

from gpuplane.k8s.workloads import expand_all
from gpuplane.lint import kinds
from gpuplane.sources.loader import load_text


def _podsets(text: str, *, discover: bool = False):
    loaded = load_text(text, "in.yaml")
    assert not loaded.errors
    return expand_all(loaded.objects, discover=discover)


def _summary(podsets):
    return [(p.name, p.role, p.count) for p in podsets]


GPU = "resources: {limits: {nvidia.com/gpu: 2}}"


def test_stormservice_counts_rolesets_roles_and_pod_groups() -> None:
    text = f"""\
apiVersion: orchestration.aibrix.ai/v1alpha1
kind: StormService
metadata: {{name: pd}}
spec:
  replicas: 2
  template:
    spec:
      schedulingStrategy:
        coschedulingSchedulingStrategy: {{}}
      roles:
        - name: prefill
          replicas: 3
          template:
            spec:
              containers: [{{name: p, image: vllm/vllm-openai:v0.10.0, {GPU}}}]
        - name: decode
          replicas: 1
          podGroupSize: 2
          template:
            spec:
              containers: [{{name: d, image: vllm/vllm-openai:v0.10.0, {GPU}}}]
"""
    podsets = _podsets(text)
    assert _summary(podsets) == [("prefill", "server", 6), ("decode", "server", 4)]
    assert [p.distributed for p in podsets] == [False, True]
    assert [(p.gang.mechanism, p.gang.min_member) for p in podsets] == [("coscheduling", 5)] * 2
    assert podsets[0].template_path == ("spec", "template", "spec", "roles", 0, "template")
    assert kinds.is_inference(podsets[0])


def test_rayclusterfleet_is_a_fleet_of_kuberay_clusters() -> None:
    text = f"""\
apiVersion: orchestration.aibrix.ai/v1alpha1
kind: RayClusterFleet
metadata: {{name: fleet}}
spec:
  replicas: 2
  template:
    spec:
      headGroupSpec:
        template:
          spec:
            containers: [{{name: head, image: rayproject/ray:2.40.0, {GPU}}}]
      workerGroupSpecs:
        - groupName: gpu
          replicas: 3
          template:
            spec:
              containers: [{{name: w, image: rayproject/ray:2.40.0, {GPU}}}]
"""
    podsets = _podsets(text)
    assert _summary(podsets) == [("head", "head", 2), ("gpu", "worker", 6)]
    assert all(p.managed_shm == "KubeRay" for p in podsets)


def test_rolebasedgroup_patterns_and_template_refs() -> None:
    text = f"""\
apiVersion: workloads.x-k8s.io/v1alpha2
kind: RoleBasedGroup
metadata:
  name: g
  annotations: {{rbg.workloads.x-k8s.io/group-gang-scheduling: "true"}}
spec:
  roleTemplates:
    - name: base
      template:
        spec:
          containers:
            - name: engine
              image: lmsysorg/sglang:v0.5.5
  roles:
    - name: router
      replicas: 1
      standalonePattern:
        template:
          spec:
            containers: [{{name: r, image: router:1}}]
    - name: backend
      replicas: 2
      leaderWorkerPattern:
        size: 3
        templateRef:
          name: base
          patch:
            spec:
              containers:
                - name: engine
                  {GPU}
        workerTemplatePatch:
          spec:
            containers:
              - name: engine
                args: [--worker]
"""
    podsets = _podsets(text)
    assert _summary(podsets) == [
        ("router", "server", 1),
        ("backend-leader", "leader", 2),
        ("backend-worker", "worker", 4),
    ]
    leader, worker = podsets[1], podsets[2]
    assert leader.template["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": 2}}
    assert worker.template["spec"]["containers"][0]["args"] == ["--worker"]
    # patched fields point at the patch that wrote them, the rest at the role template
    assert leader.field_line(("spec", "containers", 0, "resources", "limits")) == 31
    assert worker.field_line(("spec", "containers", 0, "args")) == 36
    assert leader.field_line(("spec", "containers", 0, "image")) == 13
    assert podsets[0].gang is not None and podsets[0].gang.min_member == 7


def test_kaito_workspace_template_gets_kaitos_tolerations_and_presets_are_skipped() -> None:
    text = f"""\
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata: {{name: custom}}
resource:
  count: 2
  instanceType: Standard_NC24ads_A100_v4
inference:
  template:
    spec:
      containers: [{{name: llm, image: kaito-base:0.2.0, {GPU}}}]
---
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata: {{name: preset}}
resource: {{instanceType: Standard_NC24ads_A100_v4}}
inference: {{preset: {{name: phi-4}}}}
"""
    (ps,) = _podsets(text)
    assert (ps.name, ps.count, ps.template_path) == ("custom", 2, ("inference", "template"))
    assert [t.key for t in ps.pod().spec.tolerations] == ["nvidia.com/gpu", "sku"]


def test_nimservice_is_the_pod_the_nim_operator_builds() -> None:
    text = """\
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata: {name: llama}
spec:
  image: {repository: nvcr.io/nim/meta/llama3-8b-instruct, tag: "1.0.3"}
  replicas: 2
  resources: {limits: {nvidia.com/gpu: 1}}
  storage: {nimCache: {name: llama-cache}}
  startupProbe: {enabled: false}
"""
    (ps,) = _podsets(text)
    container = ps.template["spec"]["containers"][0]
    assert (ps.name, ps.count, ps.closed) == ("llama", 2, True)
    assert (
        container["name"] == "llama-ctr" and container["image"] == "nvcr.io/nim/meta/llama3-8b-instruct:1.0.3"
    )
    assert (
        "startupProbe" not in container
        and container["readinessProbe"]["httpGet"]["path"] == "/v1/health/ready"
    )
    assert ps.field_line(("spec", "containers", 0, "resources", "limits")) == 7
    assert ps.template["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == "llama-cache"
    multi = text.replace(
        "  replicas: 2\n", "  replicas: 2\n  multiNode: {parallelism: {pipeline: 2, tensor: 8}}\n"
    )
    (ps,) = _podsets(multi)
    assert (ps.count, ps.distributed) == (4, True)


def test_dynamo_graph_services_with_gpu_resources_and_multinode() -> None:
    text = """\
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: disagg}
spec:
  services:
    Frontend:
      componentType: frontend
      replicas: 1
      extraPodSpec:
        mainContainer: {image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0}
    VllmPrefillWorker:
      replicas: 2
      multinode: {nodeCount: 2}
      resources:
        limits: {gpu: "4"}
      extraPodSpec:
        mainContainer:
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0
          args: [python3 -m dynamo.vllm --is-prefill-worker]
"""
    frontend, prefill = _podsets(text)
    assert (frontend.count, prefill.count, prefill.distributed) == (1, 4, True)
    assert prefill.template["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "4"}}
    assert prefill.field_line(("spec", "containers", 0, "resources", "limits")) == 15
    assert prefill.field_line(("spec", "containers", 0, "args")) == 19
    assert prefill.managed_shm == "Dynamo"


def test_training_crds_hyperpod_and_elastic_jobs() -> None:
    text = f"""\
apiVersion: sagemaker.amazonaws.com/v1
kind: HyperPodPyTorchJob
metadata: {{name: hp}}
spec:
  nprocPerNode: "8"
  replicaSpecs:
    - name: pods
      replicas: 4
      template:
        spec:
          containers: [{{name: t, image: pytorch:2.5, {GPU}}}]
---
apiVersion: elastic.pytorch.org/v1alpha1
kind: ElasticJob
metadata: {{name: ej}}
spec:
  minReplicas: 1
  maxReplicas: 8
  replicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers: [{{name: w, image: torchelastic/examples:0.2.0, {GPU}}}]
"""
    hyperpod, elastic = _podsets(text)
    assert _summary([hyperpod, elastic]) == [("pods", "worker", 4), ("worker", "worker", 2)]
    assert hyperpod.distributed and kinds.is_training(hyperpod)
    assert (elastic.max_count, elastic.gang.mechanism, elastic.gang.min_member) == (8, "torchelastic", 1)


def test_knative_service_scale_annotations() -> None:
    text = f"""\
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {{name: kn}}
spec:
  template:
    metadata:
      annotations: {{autoscaling.knative.dev/min-scale: "2", autoscaling.knative.dev/max-scale: "5"}}
    spec:
      containers: [{{image: vllm/vllm-openai:v0.10.0, {GPU}}}]
"""
    (ps,) = _podsets(text)
    assert (ps.count, ps.max_count, ps.template_path) == (2, 5, ("spec", "template"))
    assert kinds.is_inference(ps)


RUNTIME = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ClusterServingRuntime
metadata: {name: vllm-runtime}
spec:
  supportedModelFormats: [{name: huggingface}]
  containers:
    - name: kserve-container
      image: vllm/vllm-openai:v0.10.0
      resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_runtimes_alone_only_for_lint_and_only_when_no_workload_uses_them() -> None:
    assert _podsets(RUNTIME) == []  # a runtime creates no pods: the scheduler never sees it
    (ps,) = _podsets(RUNTIME, discover=True)
    assert (ps.template_path, ps.count_known) == ((), False)
    isvc = """\
---
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: m}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      runtime: vllm-runtime
"""
    podsets = _podsets(RUNTIME + isvc, discover=True)
    assert [p.source.kind for p in podsets] == ["InferenceService"]
