"""The manifest loader: kubectl / helm output with exact lines, and hostile input bounded with exact errors."""

from __future__ import annotations

import builtins
import io
import sys
from pathlib import Path

import pytest

from gpuplane.sources import load_paths
from gpuplane.sources.limits import MAX_FILE_ENV
from gpuplane.sources.loader import load_text, split_list_items

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sources"


def _where(result) -> list[tuple[str, str, int]]:
    return [(m.kind, m.name, m.line) for m in result.objects]


# -- real tool output ------------------------------------------------------------------------


def test_kubectl_yaml_list_items_keep_their_lines() -> None:
    result = load_paths([str(FIXTURES / "kubectl-get-pods-nodes.yaml")])
    assert result.errors == []
    assert _where(result) == [("Node", "gpu-node-1", 3), ("Pod", "train-0", 26), ("Pod", "train-1", 54)]
    train0 = result.objects[1]
    assert train0.field_line(("spec", "containers", 0, "resources")) == 43
    assert train0.field_line(("spec", "containers", 0, "env", 0, "value")) == 42
    assert train0.annotations["description"] == "A block scalar with\n\na blank line inside.\n"
    assert result.objects[2].field_line(("spec",)) == 59


def test_kubectl_json_list_items_keep_their_lines() -> None:
    result = load_paths([str(FIXTURES / "kubectl-get-pods.json")])
    assert result.errors == []
    assert _where(result) == [("Pod", "infer-0", 4), ("Pod", "infer-1", 28)]
    assert result.objects[0].field_line(("spec", "containers", 0, "resources")) == 16
    assert result.objects[1].field_line(("spec",)) == 35


def test_helm_template_output_with_source_comments() -> None:
    result = load_paths([str(FIXTURES / "helm-template.yaml")])
    assert result.errors == []
    assert _where(result) == [("ServiceAccount", "release-trainer", 3), ("Job", "release-trainer", 12)]
    job = result.objects[1]
    assert job.field_line(("spec", "template", "spec", "containers", 0, "resources", "limits")) == 24


def test_split_list_matches_whole_document_load() -> None:
    """python-stack.md footnote 2: per-item documents give the same objects as one big document."""
    import yaml

    text = (FIXTURES / "kubectl-get-pods-nodes.yaml").read_text()
    whole = yaml.load(text, Loader=yaml.CSafeLoader)
    split = split_list_items(text)
    assert split is not None
    items = [yaml.load(body, Loader=yaml.CSafeLoader) for _, body in split[1]]
    assert items == whole["items"]
    assert yaml.load(split[0], Loader=yaml.CSafeLoader) == {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
    }


def test_typed_list_items_get_kind_and_api_version() -> None:
    text = '{"kind": "PodList", "apiVersion": "v1", "items": [{"metadata": {"name": "a"}}]}'
    result = load_text(text, "pods.json")
    assert [(m.api_version, m.kind, m.name, m.line) for m in result.objects] == [("v1", "Pod", "a", 1)]


def test_yaml_flow_mapping_is_not_mistaken_for_json() -> None:
    result = load_text("{kind: Namespace, apiVersion: v1, metadata: {name: x}}\n", "ns.yaml")
    assert result.errors == []
    assert _where(result) == [("Namespace", "x", 1)]


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: from-stdin\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    result = load_paths(["-"])
    assert result.errors == []
    assert [(m.path, m.name, m.line) for m in result.objects] == [("<stdin>", "from-stdin", 1)]


# -- bad input: one exact line each, the rest still loads ------------------------------------

ALIAS_BOMB = (
    "\n".join(
        [
            "apiVersion: v1",
            "kind: ConfigMap",
            "metadata: {name: lol}",
            "data:",
            '  a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
            *[f"  {n}: &{n} [" + ",".join([f"*{p}"] * 9) + "]" for p, n in zip("abcdefgh", "bcdefghi")],
        ]
    )
    + "\n"
)


BAD_INPUTS = {
    "empty.yaml": (b"", "empty.yaml: empty file: no Kubernetes objects"),
    "comments.yaml": (
        b"# nothing here\n---\n",
        "comments.yaml: no Kubernetes objects (only comments or empty documents)",
    ),
    "binary.yaml": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary.yaml: binary file, not YAML or JSON"),
    "latin1.yaml": (
        b"kind: Pod\nname: caf\xe9\n",
        "latin1.yaml: not UTF-8 text: invalid continuation byte at byte 19",
    ),
    "syntax.yaml": (
        b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels: {a: b\nspec: {}\n",
        "syntax.yaml:6: invalid YAML: did not find expected ',' or '}'",
    ),
    "indent.yaml": (
        b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n name: y\n",
        "indent.yaml:5: invalid YAML: did not find expected key",
    ),
    "nokind.yaml": (b"apiVersion: v1\nmetadata:\n  name: nokind\n", "nokind.yaml:1: object has no kind"),
    "scalar.yaml": (b"just a string\n", "scalar.yaml:1: not a Kubernetes object (a string at top level)"),
    "bomb.yaml": (
        ALIAS_BOMB.encode(),
        "bomb.yaml:1: invalid YAML: document contains excessive aliasing (490,329,074 nodes after alias expansion)",
    ),
    "cycle.yaml": (
        b"kind: ConfigMap\ndata: &a [*a]\n",
        "cycle.yaml:1: invalid YAML: recursive alias: the document contains itself",
    ),
    "deep.yaml": (
        b"kind: ConfigMap\ndata: " + b"[" * 300 + b"]" * 300 + b"\n",
        "deep.yaml:1: invalid YAML: nesting deeper than 256 levels",
    ),
    "deeper.yaml": (
        b"kind: ConfigMap\ndata: " + b"[" * 5000 + b"]" * 5000 + b"\n",
        "deeper.yaml:2: invalid YAML: nesting deeper than 256 levels",
    ),
    "deep.json": (
        b'{"kind": "ConfigMap", "data": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        "deep.json:1: invalid JSON: nesting deeper than 256 levels",
    ),
    "truncated.json": (
        b'{"kind": "Pod",\n "metadata": {"name": "x"\n',
        "truncated.json: invalid JSON: Input data was truncated",
    ),
    "list-item.yaml": (
        b"apiVersion: v1\nkind: List\nitems:\n- metadata: {name: a}\n",
        "list-item.yaml:4: items[0] has no kind",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_gives_one_exact_line(tmp_path: Path, name: str) -> None:
    content, expected = BAD_INPUTS[name]
    (tmp_path / name).write_bytes(content)
    good = tmp_path / "good.yaml"
    good.write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ok\n")
    result = load_paths([str(tmp_path / name), str(good)])
    assert [str(e).replace(str(tmp_path) + "/", "") for e in result.errors] == [expected]
    assert [m.name for m in result.objects] == ["ok"]  # the rest is still processed


def test_bad_documents_do_not_stop_the_good_ones(tmp_path: Path) -> None:
    path = tmp_path / "mixed.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: one}\n"
        "---\nmetadata: {name: nokind}\n"
        "---\nkind: Pod\nmetadata: [unclosed\n"
        "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: two}\n"
    )
    result = load_paths([str(path)])
    assert [m.name for m in result.objects] == ["one", "two"]
    assert [(e.line, e.message) for e in result.errors] == [
        (5, "object has no kind"),
        (9, "invalid YAML: did not find expected ',' or ']'"),
    ]


def test_missing_path_and_directory_errors(tmp_path: Path) -> None:
    result = load_paths([str(tmp_path / "nope.yaml")])
    assert [e.message for e in result.errors] == ["no such file or directory"]


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A permission error (simulated: tests may run as root) is one line, not a traceback."""

    path = tmp_path / "secret.yaml"
    path.write_text("kind: Pod\n")
    real_open = builtins.open

    def guarded_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded_open)
    result = load_paths([str(path)])
    assert [str(e) for e in result.errors] == [f"{path}: cannot read: Permission denied"]


def test_100_mb_yaml_file_is_refused_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused from its size and first bytes alone: at most 4 KiB is read (work counted, not timed)."""
    path = tmp_path / "huge.yaml"
    with path.open("wb") as handle:
        handle.write(b"kind: ConfigMap\ndata:\n")
        handle.truncate(100 * 1024 * 1024)
    read_sizes: list[int] = []
    real_open = builtins.open

    class CountingReader:
        def __init__(self, handle: io.BufferedReader) -> None:
            self._handle = handle

        def __enter__(self) -> CountingReader:
            return self

        def __exit__(self, *exc: object) -> None:
            self._handle.close()

        def read(self, size: int = -1) -> bytes:
            data = self._handle.read(size)
            read_sizes.append(len(data))
            return data

        def __getattr__(self, name: str) -> object:
            return getattr(self._handle, name)

    def counting_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        handle = real_open(file, *args, **kwargs)
        return CountingReader(handle) if str(file) == str(path) else handle

    monkeypatch.setattr(builtins, "open", counting_open)
    result = load_paths([str(path)])
    assert sum(read_sizes) <= 4096
    assert [str(e) for e in result.errors] == [
        f"{path}: file is 100.0 MiB, over the 64 MiB limit for YAML input (set GPUPLANE_MAX_FILE_MB to raise it)"
    ]


def test_size_limit_is_overridable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "small.yaml"
    path.write_text("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n" + "# padding\n" * 120_000)
    monkeypatch.setenv(MAX_FILE_ENV, "1")
    result = load_paths([str(path)])
    assert [str(e) for e in result.errors] == [
        f"{path}: file is 1.1 MiB, over the 1 MiB limit for YAML input (set GPUPLANE_MAX_FILE_MB to raise it)"
    ]
    monkeypatch.setenv(MAX_FILE_ENV, "2")
    assert load_paths([str(path)]).errors == []


def test_100_mb_json_snapshot_is_bounded_work(tmp_path: Path) -> None:
    """JSON may be big (snapshots): a 100 MB List loads item by item (its speed: bench/bench_micro.py)."""
    item = (
        b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-%d","namespace":"ns"},'
        b'"data":{"k":"' + b"x" * 900 + b'"}}'
    )
    count = 100 * 1024 * 1024 // (len(item) + 2)
    path = tmp_path / "big.json"
    with path.open("wb") as handle:
        handle.write(b'{"apiVersion":"v1","kind":"List","items":[\n')
        handle.write(b",\n".join(item % i for i in range(count)))
        handle.write(b'\n],"metadata":{}}\n')
    assert path.stat().st_size > 100 * 1000 * 1000
    result = load_paths([str(path)])
    assert result.errors == []
    assert len(result.objects) == count
    assert result.objects[-1].line == count + 1


# -- anchors shared across List items ----------------------------------------------------------


def test_list_items_sharing_anchors_load_whole() -> None:
    """Regression: the per-item split lost anchors defined in an earlier item ("found undefined
    alias" per item). A List with anchors and aliases is loaded as one document."""
    result = load_paths([str(FIXTURES / "list-shared-anchors.yaml")])
    assert result.errors == []
    assert _where(result) == [("Node", "gpu-node-1", 6), ("Node", "gpu-node-2", 19), ("Pod", "train-0", 27)]
    node2 = result.objects[1]
    assert node2.labels == {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
    assert node2.data["status"]["capacity"] == {
        "cpu": "64",
        "memory": "512Gi",
        "nvidia.com/gpu": "8",
        "pods": "110",
    }
    assert node2.field_line(("status", "allocatable")) == 25
    pod = result.objects[2]
    assert pod.data["spec"]["containers"][0]["resources"]["requests"] == {"nvidia.com/gpu": "1"}
    assert pod.field_line(("spec", "containers", 0, "resources", "requests")) == 40
    assert result.list_metadata == [{"resourceVersion": ""}]


def test_snapshot_with_shared_anchors_reads_every_object() -> None:
    from gpuplane.sources.cluster import read_cluster

    cluster = read_cluster(str(FIXTURES / "list-shared-anchors.yaml"))
    assert cluster.errors == []
    assert [n.metadata.name for n in cluster.nodes] == ["gpu-node-1", "gpu-node-2"]
    assert [n.status.allocatable["nvidia.com/gpu"] for n in cluster.nodes] == ["8", "8"]
    assert [p.metadata.name for p in cluster.pods] == ["train-0"]


def test_anchor_without_alias_keeps_the_fast_split() -> None:
    from gpuplane.sources.loader import _may_share_anchors

    assert _may_share_anchors("items:\n- a: &x 1\n- b: *x\n")
    assert not _may_share_anchors("items:\n- command: [sh, -c, 'a && b']\n")
    assert not _may_share_anchors("items:\n- a: '*.example.com'\n")
