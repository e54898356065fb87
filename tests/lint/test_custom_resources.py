"""Custom resources in lint: pod specs found inside unknown kinds, the ``skipped`` list, and the
KubeAI Model expander (fixtures written here from each project's API types)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.k8s.workloads import expand_all
from gpuplane.k8s.workloads.discover import MAX_DEPTH, find_pod_specs
from gpuplane.k8s.workloads.kubeai import parse_resource_profile
from gpuplane.lint.config import LintConfig
from gpuplane.lint.engine import run_lint
from gpuplane.rule_catalog import get_rule
from gpuplane.sources.loader import load_text

UNKNOWN_CR = """\
apiVersion: serving.acme.example/v1
kind: InferenceFleet
metadata:
  name: fleet
  namespace: ml
spec:
  replicas: 3
  roles:
    - name: prefill
      template:
        metadata:
          labels: {app: prefill}
        spec:
          containers:
            - name: engine
              image: registry.example/engine:1.0
              resources:
                requests:
                  nvidia.com/gpu: 2
  router:
    podSpec:
      containers:
        - name: router
          image: registry.example/router:1.0
          resources:
            requests:
              nvidia.com/gpu: 1
"""

NO_PODS_CR = """\
apiVersion: gateway.acme.example/v1
kind: Route
metadata:
  name: r
spec:
  backend: fleet
"""


def _lint(text: str, *rules: str):
    loaded = load_text(text, "in.yaml")
    assert not loaded.errors
    chosen = [get_rule(r) for r in rules] if rules else None
    return run_lint(loaded.objects, config=LintConfig(), rules=chosen)


def test_pod_specs_inside_an_unknown_kind_get_the_generic_checks_at_their_own_lines() -> None:
    result = _lint(UNKNOWN_CR, "gpu-request-without-limit")
    got = [(f.path, f.line) for f in result.findings]
    assert got == [
        (
            (
                "spec",
                "roles",
                0,
                "template",
                "spec",
                "containers",
                0,
                "resources",
                "requests",
                "nvidia.com/gpu",
            ),
            19,
        ),
        (("spec", "router", "podSpec", "containers", 0, "resources", "requests", "nvidia.com/gpu"), 27),
    ]
    assert result.skipped == []


def test_discovered_podsets_are_named_after_their_role_and_count_is_unknown() -> None:
    objects = load_text(UNKNOWN_CR, "in.yaml").objects
    assert expand_all(objects) == []  # only lint asks for discovery
    podsets = expand_all(objects, discover=True)
    assert [(p.name, p.role, p.count, p.count_known, p.template_path, p.synthetic) for p in podsets] == [
        ("prefill", "replica", 1, False, ("spec", "roles", 0, "template"), False),
        ("router", "replica", 1, False, ("spec", "router", "podSpec"), True),
    ]
    assert podsets[1].field_line(("spec", "containers", 0, "image")) == 24


def test_discovery_is_bounded_and_skips_builtin_groups() -> None:
    deep: dict = {"containers": [{"name": "c", "image": "x"}]}
    for _ in range(MAX_DEPTH + 2):
        deep = {"wrap": deep}
    assert find_pod_specs({"spec": deep}) == []
    assert find_pod_specs({"spec": {"a": {"containers": [{"image": "x"}]}}}) == [("spec", "a")]
    assert find_pod_specs({"spec": {"containers": [{"name": "no-image"}]}}) == []
    crd = load_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\n"
        "spec:\n  versions:\n    - schema:\n        example:\n          containers:\n            - image: x\n",
        "crd.yaml",
    ).objects
    assert expand_all(crd, discover=True) == []


def test_skipped_lists_objects_no_rule_could_analyse() -> None:
    text = (
        NO_PODS_CR
        + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: 1}\n"
        + "---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n"
        + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: t}\nspec:\n  template: ${TEMPLATE}\n"
    )
    result = _lint(text)
    assert result.to_json()["skipped"] == [
        {
            "kind": "Route",
            "apiVersion": "gateway.acme.example/v1",
            "namespace": None,
            "name": "r",
            "path": "in.yaml",
            "line": 1,
            "reason": "no rule of this run reads this kind and no pod template was found in it",
        },
        {
            "kind": "Deployment",
            "apiVersion": "apps/v1",
            "namespace": None,
            "name": "d",
            "path": "in.yaml",
            "line": 8,
            "reason": "no pod template found",
        },
        {
            "kind": "Deployment",
            "apiVersion": "apps/v1",
            "namespace": None,
            "name": "t",
            "path": "in.yaml",
            "line": 18,
            "reason": "unrendered template placeholder where the pod template belongs",
        },
    ]
    # each entry is the object reference (spec/cli.md's order) followed by where and why
    keys = ["apiVersion", "kind", "namespace", "name", "path", "line", "reason"]
    assert [list(entry) for entry in result.to_json()["skipped"]] == [keys] * 3
    assert result.summary()["skipped"] == 3


def test_kinds_a_rule_reads_are_analysed() -> None:
    text = (
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: q}\n"
        "spec: {template: {spec: {requirements: []}}}\n"
    )
    assert _lint(text).skipped == []


def test_text_output_ends_with_the_objects_not_analysed() -> None:
    res = CliRunner().invoke(
        cli, ["lint", "-"], input=NO_PODS_CR + "---\n" + NO_PODS_CR.replace("name: r", "name: q")
    )
    assert res.exit_code == 0
    assert res.stdout.splitlines()[-1] == (
        "2 objects not analysed: 2 Route (no rule of this run reads this kind and no pod template was found in it)"
    )
    doc = json.loads(CliRunner().invoke(cli, ["lint", "-f", "json", "-"], input=UNKNOWN_CR).stdout)
    assert doc["skipped"] == []


# -- KubeAI Model (kubeai-project/kubeai api/k8s/v1/model_types.go, internal/modelcontroller) ------

MODEL = """\
apiVersion: kubeai.org/v1
kind: Model
metadata:
  name: llama
  namespace: models
spec:
  features: [TextGeneration]
  url: hf://org/llama-70b
  engine: VLLM
  resourceProfile: nvidia-gpu-l4:4
  args:
    - --tensor-parallel-size=4
  env:
    VLLM_LOGGING_LEVEL: DEBUG
  minReplicas: 2
  maxReplicas: 5
"""


def test_resource_profile_parsing_follows_kubeai() -> None:
    assert parse_resource_profile("nvidia-gpu-h100:8") == ("nvidia-gpu-h100", 8)
    assert parse_resource_profile("nvidia-gpu-h100") is None
    assert parse_resource_profile("a:b:1") is None
    assert parse_resource_profile("cpu:x") is None


def test_model_expands_to_the_server_pods_kubeai_builds() -> None:
    objects = load_text(MODEL, "m.yaml").objects
    (ps,) = expand_all(objects)
    assert (ps.name, ps.count, ps.max_count, ps.synthetic, ps.closed) == ("server", 2, 5, True, True)
    container = ps.template["spec"]["containers"][0]
    assert container["image"] == "vllm/vllm-openai:v0.10.2"
    assert container["args"] == [
        "--model=org/llama-70b",
        "--served-model-name=llama",
        "--tensor-parallel-size=4",
    ]
    assert container["resources"] == {
        "requests": {"nvidia.com/gpu": "4", "cpu": "24", "memory": "96Gi"},
        "limits": {"nvidia.com/gpu": "4"},
    }
    assert container["env"] == [{"name": "VLLM_LOGGING_LEVEL", "value": "DEBUG"}]
    assert ps.template["spec"]["tolerations"][0]["key"] == "nvidia.com/gpu"
    assert container["startupProbe"]["failureThreshold"] == 5400
    # fields map back to what the user wrote
    assert ps.field_line(("spec", "containers", 0, "args", 2)) == 12
    assert ps.field_line(("spec", "containers", 0, "resources", "limits")) == 10
    assert ps.field_line(("spec", "containers", 0, "env", 0, "value")) == 14
    # KubeAI mounts a memory-backed /dev/shm
    pod = ps.pod()
    assert [m.mount_path for m in pod.spec.containers[0].volume_mounts] == ["/dev/shm"]
    assert pod.spec.volumes[0].name == "dshm" and pod.spec.volumes[0].empty_dir.size_limit is None


def test_model_replicas_follow_kubeai_bounds_and_unknown_profiles_stay_unknown() -> None:
    text = MODEL.replace("  minReplicas: 2\n  maxReplicas: 5\n", "  replicas: 9\n  maxReplicas: 3\n")
    text = text.replace("nvidia-gpu-l4:4", "my-own-profile:2")
    (ps,) = expand_all(load_text(text, "m.yaml").objects)
    assert ps.count == 3
    assert "resources" not in ps.template["spec"]["containers"][0]


def test_model_findings_point_at_model_fields_and_controller_choices_are_not_reported() -> None:
    text = MODEL.replace("engine: VLLM", "engine: VLLM\n  image: vllm/vllm-openai:latest")
    result = _lint(
        text, "image-pull-always-large", "model-cache-ephemeral-unbounded", "inference-no-startup-probe"
    )
    # the image is the user's (spec.image); where the weights land is KubeAI's choice (no finding)
    assert [(f.rule, f.path, f.line) for f in result.findings] == [
        ("image-pull-always-large", ("spec", "image"), 10)
    ]
    assert result.skipped == []


NIM = """\
apiVersion: apps.nvidia.com/v1alpha1
kind: NIMService
metadata:
  name: llm
spec:
  image:
    repository: nvcr.io/nim/meta/llama3-8b-instruct
    tag: "1.0.3"
  resources:
    requests:
      nvidia.com/gpu: 1
"""


def test_operator_built_pod_findings_point_at_the_resource_fields() -> None:
    result = _lint(NIM, "gpu-request-without-limit")
    assert [(f.path, f.line) for f in result.findings] == [
        (("spec", "resources", "requests", "nvidia.com/gpu"), 11)
    ]
    assert result.skipped == []
