"""Snapshots keep an allow-list (sources/redact.py): no planted secret ever reaches the file.

Issue 11 item 5. The property test plants random secret-looking strings in
every place a credential is found in real dumps (annotations, pod-template
last-applied, command/args, probe and lifecycle exec, httpHeaders, env,
ConfigMap data, StorageClass parameters, flexVolume options, Secrets and
kubeconfigs inside nested Lists, SealedSecret/ExternalSecret specs) of the
demo cluster, and checks none is in the snapshot; the demo's snapshot still
gives the same diagnose / why-pending / inventory answers.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplane.cli.main import cli
from gpuplane.sources.redact import REDACTED, keep, redact_argv
from gpuplane.sources.snapshot import snapshot_files, write_snapshot

DEMO = Path(__file__).resolve().parents[2] / "examples" / "clusters" / "demo.yaml"


def _demo_objects() -> list[dict[str, Any]]:
    with DEMO.open() as handle:
        return [doc for doc in yaml.safe_load_all(handle) if isinstance(doc, dict)]


_DEMO = _demo_objects()
_DEMO_ITEMS = [item for doc in _DEMO for item in (doc.get("items") if doc.get("kind") == "List" else [doc])]
# The property test plants into one object of each kind and a few pods (copying all 170 items per example is slow).
_SAMPLE = (
    list({o["kind"]: o for o in reversed(_DEMO_ITEMS)}.values())
    + [o for o in _DEMO_ITEMS if o["kind"] == "Pod"][:6]
)


def _pods(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if o.get("kind") == "Pod"]


def _snapshot_text(objects: list[dict[str, Any]]) -> str:
    kept, _ = keep(copy.deepcopy(objects))
    return msgspec.json.encode(kept).decode()


def _plant(objects: list[dict[str, Any]], site: str, secret: str, index: int) -> list[dict[str, Any]]:
    """The demo items with ``secret`` planted at ``site`` (in the ``index``-th candidate object)."""
    items = copy.deepcopy(objects)
    pods = _pods(items)
    pod = pods[index % len(pods)]
    container = pod["spec"]["containers"][0]
    if site == "annotation":
        obj = items[index % len(items)]
        obj.setdefault("metadata", {}).setdefault("annotations", {})["example.com/db-url"] = secret
    elif site == "last-applied":
        job = next(o for o in items if o.get("kind") == "Job")
        job.setdefault("spec", {}).setdefault("template", {}).setdefault("metadata", {}).setdefault(
            "annotations", {}
        )["kubectl.kubernetes.io/last-applied-configuration"] = '{"password": "' + secret + '"}'
    elif site == "args":
        container.setdefault("args", []).extend(["--password", secret])
    elif site == "args-equals":
        container.setdefault("args", []).append(f"--token={secret}")
    elif site == "command":
        container["command"] = ["sh", "-c", f"curl -H 'Authorization: Bearer {secret}' http://x"]
    elif site == "probe-headers":
        container["livenessProbe"] = {
            "httpGet": {"path": "/", "port": 8080, "httpHeaders": [{"name": "X-Token", "value": secret}]}
        }
    elif site == "probe-exec":
        container["readinessProbe"] = {"exec": {"command": ["check", f"--key={secret}"]}}
    elif site == "lifecycle":
        container["lifecycle"] = {"postStart": {"exec": {"command": ["login", secret]}}}
    elif site == "env":
        container.setdefault("env", []).append({"name": "S3_SECRET", "value": secret})
    elif site == "configmap":
        configmap = next(o for o in items if o.get("kind") == "ConfigMap")
        configmap["data"]["password"] = secret
    elif site == "gpu-named-configmap":
        items.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "gpu-credentials", "namespace": "gpu-operator"},
                "data": {"sharing": f"token: {secret}"},
            }
        )
    elif site == "storageclass":
        storage_class = next(o for o in items if o.get("kind") == "StorageClass")
        storage_class.setdefault("parameters", {})["csi.storage.k8s.io/password"] = secret
    elif site == "flexvolume":
        pod["spec"].setdefault("volumes", []).append(
            {"name": "flex", "flexVolume": {"driver": "acme/nfs", "options": {"password": secret}}}
        )
    elif site == "nested-secret":
        secret_obj = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s"},
            "stringData": {"k": secret},
        }
        items.append({"apiVersion": "v1", "kind": "List", "items": [{"kind": "List", "items": [secret_obj]}]})
    elif site == "kubeconfig":
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "users": [{"name": "admin", "user": {"token": secret, "client-key-data": secret}}],
            }
        )
    elif site in ("SealedSecret", "ExternalSecret"):
        items.append(
            {
                "apiVersion": "bitnami.com/v1alpha1"
                if site == "SealedSecret"
                else "external-secrets.io/v1beta1",
                "kind": site,
                "metadata": {"name": "x", "namespace": "default"},
                "spec": {"encryptedData": {"password": secret}},
            }
        )
    else:  # pragma: no cover - the strategy only draws the sites above
        raise AssertionError(site)
    return items


SITES = (
    "annotation", "last-applied", "args", "args-equals", "command", "probe-headers", "probe-exec",
    "lifecycle", "env", "configmap", "gpu-named-configmap", "storageclass", "flexvolume",
    "nested-secret", "kubeconfig", "SealedSecret", "ExternalSecret",
)  # fmt: skip
# Secret-looking: a fixed lead no demo string has, then random letters, digits and punctuation.
SECRETS = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/_-", min_size=8, max_size=24
).map(lambda tail: "Zk9" + tail)


@settings(max_examples=50, derandomize=True, deadline=None)
@given(
    sites=st.lists(st.sampled_from(SITES), min_size=1, max_size=4), secret=SECRETS, index=st.integers(0, 500)
)
def test_planted_secrets_never_reach_the_snapshot(sites: list[str], secret: str, index: int) -> None:
    items = _SAMPLE
    for site in sites:
        items = _plant(items, site, secret, index)
    assert secret in msgspec.json.encode(items).decode()
    assert secret not in _snapshot_text(items)


@pytest.mark.parametrize("site", SITES)
def test_every_site_is_redacted(site: str) -> None:
    secret = "Zk9-hunter2-Password"
    items = _plant(_DEMO_ITEMS, site, secret, 7)
    assert secret not in _snapshot_text(items)


def test_kinds_outside_the_allow_list_are_dropped_at_any_depth() -> None:
    nested = {
        "kind": "List",
        "items": [
            {
                "kind": "List",
                "items": [{"apiVersion": "v1", "kind": "Secret"}, {"kind": "Node", "metadata": {}}],
            },
            {"apiVersion": "v1", "kind": "Config"},
            {"kind": "SealedSecret"},
            {"kind": "ExternalSecret"},
        ],
    }
    kept, dropped = keep([nested])
    assert [o["kind"] for o in kept] == ["Node"]
    assert dropped == 4


def test_argv_keeps_flag_names_numbers_and_launcher_words() -> None:
    argv = ["torchrun", "--nproc-per-node=8", "--nnodes", "2", "train.py", "--lr=3e-4", "--hf-token", "abc"]
    assert redact_argv(argv) == [
        "torchrun", "--nproc-per-node=8", "--nnodes", "2", REDACTED, f"--lr={REDACTED}", "--hf-token", REDACTED,
    ]  # fmt: skip
    assert redact_argv(["kube-scheduler", "--scheduler-name", "volcano", "--scheduler-name=kai"]) == [
        REDACTED, "--scheduler-name", "volcano", "--scheduler-name=kai",
    ]  # fmt: skip


def test_configmap_data_is_kept_by_content_not_name() -> None:
    device_plugin = "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"
    mig_parted = "version: v1\nmig-configs:\n  all-disabled:\n  - devices: all\n    mig-enabled: false\n"
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "default"},
        "data": {"a": device_plugin, "b": mig_parted, "c": "password: x", "d": "sharing: [unclosed"},
    }
    kept, _ = keep([configmap])
    assert kept[0]["data"] == {"a": device_plugin, "b": mig_parted, "c": REDACTED, "d": REDACTED}


def _answers(cluster: str) -> dict[str, list[str]]:
    """Each command's output lines, sorted, with the file's name and positions taken out.

    Findings are ordered by position, and a snapshot holds the objects on other lines than the dump.
    """
    runner = CliRunner(env={"COLUMNS": "400"})
    out: dict[str, list[str]] = {}
    for command in ("diagnose", "why-pending", "inventory"):
        result = runner.invoke(cli, [command, "--cluster", cluster])
        text = re.sub(r"\(CLUSTER:\d+\)", "(CLUSTER)", result.output.replace(cluster, "CLUSTER"))
        out[command] = sorted(text.splitlines())
        out[command + " exit"] = [str(result.exit_code)]
    return out


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_demo_snapshot_gives_the_same_answers(tmp_path: Path, suffix: str) -> None:
    snap = snapshot_files([str(DEMO)])
    assert snap.errors == [] and snap.dropped == 0
    out = tmp_path / f"demo{suffix}"
    write_snapshot(snap, str(out))
    assert _answers(str(out)) == _answers(str(DEMO))


def _struct_nodes(obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The mappings of ``obj`` whose schema is a struct (lists ``properties``): a built-in object's
    own, or a custom resource's pod templates'. Maps typed by ``additionalProperties`` (labels,
    resource lists, nodeSelector) are left out: a key there is data the engines read."""
    from gpuplane.sources import known_fields

    schema = known_fields._kind_schema(obj["kind"], obj["apiVersion"])
    roots = (
        [(obj, schema)]
        if schema
        else [(t, known_fields.POD_TEMPLATE) for t in known_fields._pod_templates(obj)]
    )
    found: list[dict[str, Any]] = []
    stack: list[tuple[Any, Any]] = list(roots)
    while stack:
        value, node = stack.pop()
        node = known_fields._resolve(node)
        if not isinstance(node, dict):
            continue
        if isinstance(value, dict) and isinstance(node.get("properties"), dict):
            found.append(value)
            stack.extend((v, node["properties"][k]) for k, v in value.items() if k in node["properties"])
        elif isinstance(value, list) and isinstance(node.get("items"), dict):
            stack.extend((item, node["items"]) for item in value)
    return found


@settings(max_examples=50, derandomize=True, deadline=None)
@given(secret=SECRETS, which=st.integers(0, 10_000), where=st.integers(0, 10_000), nested=st.booleans())
def test_secrets_under_unknown_fields_at_any_depth_never_reach_the_snapshot(
    secret: str, which: int, where: int, nested: bool
) -> None:
    """Issue 11 item 5: a kept kind keeps only the fields its schema defines (built-in kinds) or,
    in a custom resource, its pod templates' fields; a value under any other key is dropped."""
    items = copy.deepcopy(_SAMPLE)
    candidates = [(obj, node) for obj in items for node in _struct_nodes(obj)]
    _, node = candidates[which % len(candidates)]
    node[f"zk{where}Unknown"] = {"deeper": [secret]} if nested else secret
    assert secret in msgspec.json.encode(items).decode()
    assert secret not in _snapshot_text(items)


def test_unknown_fields_are_dropped_known_ones_kept() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"team": "a"}, "dbPassword": "x"},
        "spec": {
            "containers": [
                {"name": "c", "image": "i", "apiKey": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}
            ],
            "extra": {"token": "x"},
        },
        "status": {"phase": "Pending", "note": "x"},
    }
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "j"},
        "spec": {
            "pytorchReplicaSpecs": {
                "Worker": {
                    "replicas": 2,
                    "template": {"spec": {"containers": [{"name": "w", "image": "i", "hfToken": "x"}]}},
                }
            }
        },
    }
    kept, _ = keep([pod, job])
    assert kept[0]["metadata"] == {"name": "p", "labels": {"team": "a"}}
    assert kept[0]["spec"] == {
        "containers": [{"name": "c", "image": "i", "resources": {"limits": {"nvidia.com/gpu": 1}}}]
    }
    assert kept[0]["status"] == {"phase": "Pending"}
    worker = kept[1]["spec"]["pytorchReplicaSpecs"]["Worker"]
    assert worker == {"replicas": 2, "template": {"spec": {"containers": [{"name": "w", "image": "i"}]}}}
