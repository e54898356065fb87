"""The path walkers of ``k8s/fields.py``: :func:`child` is the one step every walk takes
(``dig``, the workload expanders' template reads, the discovery labels)."""

from __future__ import annotations

from gpuplane.k8s.fields import child, dig
from gpuplane.k8s.manifest import Manifest

DATA = {"spec": {"containers": [{"name": "a"}, {"name": "b"}], "replicas": 0}}


def test_child_steps_into_mappings_by_name_and_lists_by_index() -> None:
    containers = DATA["spec"]["containers"]
    assert child(DATA, "spec") is DATA["spec"]
    assert child(containers, 1) == {"name": "b"}
    assert child(DATA["spec"], "replicas") == 0  # a falsy value is still found


def test_child_is_none_for_a_step_that_does_not_fit_the_node() -> None:
    containers = DATA["spec"]["containers"]
    assert child(containers, 2) is None  # past the end
    assert child(containers, -1) is None  # no counting from the end: a path index is a position
    assert child(containers, "name") is None  # a name on a list
    assert child({"0": "x"}, 0) is None  # an index on a mapping
    assert child("text", "spec") is None
    assert child(None, 0) is None


def test_dig_walks_the_whole_path_and_stops_at_the_first_missing_step() -> None:
    assert dig(DATA, "spec", "containers", 0, "name") == "a"
    assert dig(DATA, "spec", "containers", 5, "name") is None
    assert dig(DATA, "spec", "replicas") == 0
    assert dig(DATA, "spec", "replicas", "x") is None
    assert dig(DATA) is DATA


def test_manifest_get_is_dig_with_a_default_for_missing_and_null_fields() -> None:
    obj = Manifest({**DATA, "kind": "Pod", "metadata": {"name": "p", "labels": None}})
    assert obj.get("spec", "containers", 1, "name") == "b"
    assert obj.get("spec", "replicas", default=5) == 0
    assert obj.get("metadata", "labels", default={}) == {}  # null: the default
    assert obj.get("spec", "containers", -1, default="none") == "none"  # as dig: a position, not from the end
    assert obj.get("spec", "containers", "name") is None
