"""read_cluster on files: JSON fast path == YAML path == loader; typed errors; ClusterRole matches the catalog."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import yaml

from gpuplane.k8s.objects import pod_from_dict
from gpuplane.sources.catalog import RESOURCES
from gpuplane.sources.cluster import read_cluster

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "sources"


def test_yaml_and_json_dumps_of_the_same_cluster_agree(tmp_path: Path) -> None:
    source = FIXTURES / "kubectl-get-pods-nodes.yaml"
    data = yaml.load(source.read_text(), Loader=yaml.CSafeLoader)
    as_json = tmp_path / "same.json"
    as_json.write_text(json.dumps(data, indent=4, sort_keys=True))
    from_yaml = read_cluster(str(source))
    from_json = read_cluster(str(as_json))
    assert from_yaml.errors == from_json.errors == []
    assert from_yaml.pods == from_json.pods
    assert from_yaml.nodes == from_json.nodes
    assert [p.key for p in from_json.pods] == ["team-a/train-0", "team-a/train-1"]
    assert from_json.pods[0] == pod_from_dict(data["items"][1])


def test_folder_source_reads_every_file(tmp_path: Path) -> None:
    folder = tmp_path / "dump"
    (folder / "nested").mkdir(parents=True)
    for name in ("kubectl-get-pods-nodes.yaml", "helm-template.yaml"):
        (folder / name).write_bytes((FIXTURES / name).read_bytes())
    (folder / "nested" / "pods.json").write_bytes((FIXTURES / "kubectl-get-pods.json").read_bytes())
    cluster = read_cluster(str(folder))
    assert [p.key for p in cluster.pods] == [
        "team-a/train-0",
        "team-a/train-1",
        "serving/infer-0",
        "serving/infer-1",
    ]
    assert [n.name for n in cluster.nodes] == ["gpu-node-1"]
    assert sorted(m.kind for m in cluster.objects) == ["Job", "ServiceAccount"]
    assert cluster.server_version is None  # plain kubectl dumps do not record it


def test_typed_decode_errors_name_the_object_and_path(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(
        '{"apiVersion": "v1", "kind": "List", "items": [\n'
        '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ok", "namespace": "a"}},\n'
        '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad", "namespace": "a", "labels": {"x": 1}}},\n'
        '{"metadata": {"name": "kindless"}},\n'
        '{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "spec": {"taints": [{"effect": 3}]}}\n'
        '], "metadata": {}}\n'
    )
    cluster = read_cluster(str(path))
    assert [p.key for p in cluster.pods] == ["a/ok"]
    assert [str(e).replace(str(tmp_path) + "/", "") for e in cluster.errors] == [
        "bad.json:3: Pod a/bad: Expected `str`, got `int` - at `$.metadata.labels[...]`",
        "bad.json:4: items[2] has no kind",
        "bad.json:5: Node n: Expected `str`, got `int` - at `$.spec.taints[0].effect`",
    ]
    yaml_path = tmp_path / "bad.yaml"
    yaml_path.write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\n  labels: {x: 1}\n")
    assert [str(e).replace(str(tmp_path) + "/", "") for e in read_cluster(str(yaml_path)).errors] == [
        "bad.yaml:1: Pod bad: Expected `str`, got `int` - at `$.metadata.labels[...]`"
    ]


def test_snapshot_version_annotation_is_read_from_json_and_yaml(tmp_path: Path) -> None:
    document = {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"annotations": {"gpuplane.io/kubernetes-version": "1.29"}},
        "items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}],
    }
    (tmp_path / "s.json").write_bytes(msgspec.json.encode(document))
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(document))
    assert read_cluster(str(tmp_path / "s.json")).server_version == "1.29"
    assert read_cluster(str(tmp_path / "s.yaml")).server_version == "1.29"


def test_missing_source() -> None:
    cluster = read_cluster("/nonexistent/cluster.yaml")
    assert [str(e) for e in cluster.errors] == ["/nonexistent/cluster.yaml: no such file or directory"]


def test_clusterrole_grants_exactly_the_catalog_read_only() -> None:
    documents = list(yaml.safe_load_all((ROOT / "deploy" / "clusterrole.yaml").read_text()))
    assert [d["kind"] for d in documents] == [
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
    ]
    role = documents[2]
    granted: set[tuple[str, str]] = set()
    for rule in role["rules"]:
        assert set(rule["verbs"]) <= {"get", "list", "watch"}
        for group in rule.get("apiGroups", []):
            granted.update((group, resource) for resource in rule["resources"])
    assert granted == {(r.group, r.plural) for r in RESOURCES}
    assert not any(resource == "secrets" or resource == "*" for _, resource in granted)
    binding = documents[3]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "gpuplane", "namespace": "gpuplane"}]
