"""The loader's fast path must be invisible: same data as CSafeLoader, same lines as a
composed node graph, same hostile-input errors, and kindless NVIDIA config files as
pseudo-objects."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpuplane.sources import load_paths
from gpuplane.sources.limits import MAX_DEPTH, check_tree, yaml_depth_bounded
from gpuplane.sources.loader import _load_document, load_text, load_yaml_document
from gpuplane.sources.locate import DocumentLocator

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sources"

# Every implicit tag SafeLoader resolves, plus quoting, block scalars and odd keys.
SCALARS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: scalars, labels: {app: x, "quoted key": 'single', 1: one, null: nothing, false: no}}
data:
  ints: [0, -1, +7, 0o17, 017, 0x1F, 1_000, 0b101, 190:20:30]
  floats: [1.5, -0.0, 1e3, 6.8523015e+5, 685.230_15e+03, .inf, -.Inf, 190:20:30.15]
  bools: [yes, No, on, OFF, true, False, y, n]
  nulls: [~, null, Null, ""]
  times: [2001-12-14t21:59:43.10-05:00, 2002-12-14, 2001-12-14 21:59:43.10 -5]
  strings: ["1", '2', 500m, 1Gi, "yes", "multi
    line", plain
    continued]
  block: |
    line one
      indented
  folded: >-
    folded
    text
  empty:
  nested:
  - - a
    - b
  - {k: [1, {x: y}]}
"""

SPECIALS = {
    "anchors": "a: &x {b: 1}\nc: *x\nd: [*x, *x]\n",
    "merge": "base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\n",
    "tags": "a: !!str 1\nb: !!int '7'\nc: !!binary aGVsbG8=\nd: !!set {x, y}\ne: !!omap [{a: 1}]\n",
    "anchor without alias": "metadata: &m {name: x}\nspec: {}\n",
    "nan": "x: .nan\n",
}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


@pytest.mark.parametrize("text", [SCALARS, *SPECIALS.values()], ids=["scalars", *SPECIALS])
def test_same_data_as_csafeloader(text: str) -> None:
    assert _same(load_yaml_document(text), yaml.load(text, Loader=yaml.CSafeLoader))


def test_value_tag_fails_like_pyyaml() -> None:
    # "=" resolves to tag:yaml.org,2002:value, which SafeLoader cannot construct either.
    with pytest.raises(yaml.YAMLError, match="could not determine a constructor"):
        yaml.load("a: =\n", Loader=yaml.CSafeLoader)
    with pytest.raises(yaml.YAMLError, match="could not determine a constructor"):
        load_yaml_document("a: =\n")


def test_unhashable_key_keeps_pyyaml_error() -> None:
    with pytest.raises(yaml.YAMLError, match="found unhashable key"):
        load_yaml_document("? [a, b]\n: c\n")


def _paths(data: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(key, str):
                out += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            out += _paths(value, (*prefix, i))
    return out


def test_recorded_lines_match_composed_lines() -> None:
    text = (FIXTURES.parent / "lint" / "device-plugin-config-invalid" / "fail.yaml").read_text()
    docs = [SCALARS, text, "# comment\n\nkind: Pod\nspec:\n  containers:\n  - name: a\n    image: b\n"]
    for body in docs:
        data, index = _load_document(body)
        assert index is not None
        fast = DocumentLocator(body, 10, index)
        slow = DocumentLocator(body, 10)
        paths = _paths(data)
        paths += [(*p, "missing") for p in paths] + [(*p, 99) for p in paths]
        for path in paths:
            assert fast.line_of(path) == slow.line_of(path), path


DUPLICATES = {
    # (document, key, line of the repeat, line of the first): the fast walk and every slow path.
    "plain": ("a: 1\nb:\n  c: 2\na: 3\n", '"a"', 4, 1),
    "nested": ("spec:\n  limits: {x: 1}\n  limits:\n    y: 2\n", '"limits"', 3, 2),
    "flow": ("metadata: {name: q, name: r}\n", '"name"', 1, 1),
    "with alias": ("base: &b {x: 1}\ndata:\n  a: *b\n  a: 2\n", '"a"', 4, 3),
    "with merge key": ("base: &b {x: 1}\nm:\n  <<: *b\n  y: 1\n  y: 2\n", '"y"', 5, 4),
    "with tag": ("a: !!str 1\na: 2\n", '"a"', 2, 1),
    "int key": ("1: a\n1: b\n", "1", 2, 1),
}


@pytest.mark.parametrize("case", list(DUPLICATES), ids=list(DUPLICATES))
def test_duplicate_keys_are_refused_like_kubectl(case: str) -> None:
    """kubectl decodes strictly (sigs.k8s.io/yaml YAMLToJSONStrict: 'key "a" already set in map'):
    the object is refused with both lines, never linted with the last value (QA: it was)."""
    text, key, line, first = DUPLICATES[case]
    result = load_text("kind: ConfigMap\n---\n" + text, "dup.yaml")
    assert [o.kind for o in result.objects] == ["ConfigMap"]  # the rest is still read
    assert [str(e) for e in result.errors] == [
        f"dup.yaml:{line + 2}: duplicate key {key} (first at line {first + 2}): "
        "kubectl and the API server reject the object"
    ]


def test_merged_keys_are_not_duplicates() -> None:
    """A key brought in by ``<<`` and overridden is fine (go-yaml merges it the same way)."""
    assert load_yaml_document("base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n")["m"] == {"x": 1, "y": 3}


def test_duplicate_key_in_a_list_item_keeps_the_other_items() -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n- kind: ConfigMap\n  metadata: {name: a}\n"
        "- kind: ConfigMap\n  metadata:\n    name: b\n    name: c\n- kind: ConfigMap\n  metadata: {name: d}\n"
    )
    result = load_text(text, "list.yaml")
    assert [o.name for o in result.objects] == ["a", "d"]
    assert [str(e) for e in result.errors] == [
        'list.yaml:9: duplicate key "name" (first at line 8): kubectl and the API server reject the object'
    ]


# -- depth bound without a tree walk ---------------------------------------------------------


def test_depth_bound_accepts_real_manifests_and_refuses_suspicious_text() -> None:
    assert yaml_depth_bounded(SCALARS)
    assert not yaml_depth_bounded("a: &x 1\n")  # anchors: walk
    assert not yaml_depth_bounded("a: !!str 1\n")  # tags: walk
    assert not yaml_depth_bounded("a: " + "[" * 60 + "]" * 60 + "\n")
    assert not yaml_depth_bounded("a:\n" + " " * 100 + "b: 1\n")


def _deep_block(levels: int) -> str:
    return (
        "kind: ConfigMap\ndata:\n"
        + "".join("  " * i + f"k{i}:\n" for i in range(1, levels))
        + "  " * levels
        + "k: v\n"
    )


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("indented mappings", _deep_block(300)),
        ("compact sequences", "kind: ConfigMap\ndata:\n" + "- " * 300 + "x\n"),
        (
            "mixed flow",
            "kind: ConfigMap\ndata:\n"
            + "".join("  " * i + f"k{i}:\n" for i in range(1, 40))
            + "  " * 40
            + "k: "
            + "[" * 230
            + "]" * 230
            + "\n",
        ),
    ],
)
def test_deep_block_yaml_is_still_refused(tmp_path: Path, name: str, text: str) -> None:
    file = tmp_path / "deep.yaml"
    file.write_text(text)
    result = load_paths([str(file)])
    assert [str(e) for e in result.errors] == [
        f"{file}:1: invalid YAML: nesting deeper than {MAX_DEPTH} levels"
    ]


@pytest.mark.parametrize("levels", range(252, 258))
def test_depth_limit_is_exactly_check_trees(levels: int) -> None:
    # Plain documents are checked while they are built; the answer must be the tree walk's.
    text = _deep_block(levels)
    expected = check_tree(yaml.load(text, Loader=yaml.CSafeLoader), shared=False)
    errors = [e.message for e in load_text(text, "d.yaml").errors]
    assert errors == ([f"invalid YAML: {expected}"] if expected else [])


def test_nesting_just_under_the_limit_loads() -> None:
    result = load_text(_deep_block(250), "ok.yaml")
    assert not result.errors and result.objects[0].kind == "ConfigMap"


# -- kindless NVIDIA config files --------------------------------------------------------------

DP_FILE = """\
# device plugin config file
version: v1
flags:
  migStrategy: none
sharing:
  timeSlicing:
    resources:
    - name: nvidia.com/gpu
      replicas: 4
"""
MIG_FILE = """\
version: v1
mig-configs:
  all-disabled:
  - devices: all
    mig-enabled: false
"""


def test_device_plugin_config_file_is_a_pseudo_object() -> None:
    result = load_text(DP_FILE, "cfg/dp.yaml")
    assert result.errors == []
    (obj,) = result.objects
    assert obj.ref() == {
        "apiVersion": "gpuplane.io/v1",
        "kind": "DevicePluginConfig",
        "namespace": None,
        "name": "dp.yaml",
    }
    assert obj.data["data"]["sharing"]["timeSlicing"]["resources"][0]["replicas"] == 4
    assert obj.line == 2
    assert obj.field_line(("data", "sharing", "timeSlicing", "resources", 0, "replicas")) == 9
    assert obj.field_line(("data", "flags")) == 3
    assert obj.field_line(("metadata", "name")) == 2


def test_mig_parted_config_file_is_a_pseudo_object() -> None:
    result = load_text("---\n" + MIG_FILE, "mig.yaml")
    assert result.errors == []
    (obj,) = result.objects
    assert (obj.kind, obj.api_version, obj.name) == ("MigPartedConfig", "gpuplane.io/v1", "mig.yaml")
    assert obj.field_line(("data", "mig-configs", "all-disabled", 0, "mig-enabled")) == 6


@pytest.mark.parametrize(
    "text",
    ["version: v1\n", "sharing: {}\n", "mig-configs: {}\n", "apiVersion: v1\nmetadata: {name: x}\n"],
)
def test_other_kindless_documents_are_still_errors(text: str) -> None:
    result = load_text(text, "x.yaml")
    assert result.objects == []
    assert [str(e) for e in result.errors] == ["x.yaml:1: object has no kind"]


def test_kindless_config_in_json_too() -> None:
    result = load_text('{"version": "v1", "flags": {"migStrategy": "single"}}', "dp.json")
    assert [o.kind for o in result.objects] == ["DevicePluginConfig"]
