"""The MCP server's sandbox (issue 11 item 7): paths resolve inside the server's roots; outside
them, and /proc, /dev, /sys, a tool refuses with one line; generate writes only under a root."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpuplane.mcp import sandbox, tools
from gpuplane.mcp.tools import ToolInputError

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "examples" / "manifests" / "gpu-request-without-limit.yaml"
BLUEPRINT = ROOT / "examples" / "blueprints" / "eks-training.yaml"


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    box = tmp_path / "root"
    box.mkdir()
    shutil.copyfile(MANIFEST, box / "train.yaml")
    shutil.copyfile(BLUEPRINT, box / "blueprint.yaml")
    sandbox.configure([str(box)])
    try:
        yield box
    finally:
        sandbox.reset()


def _refused(call: object, *args: object, **kwargs: object) -> str:
    with pytest.raises(ToolInputError) as exc:
        call(*args, **kwargs)  # type: ignore[operator]
    return str(exc.value)


def test_paths_inside_the_root_work(root: Path) -> None:
    out = tools.lint(paths=[str(root / "train.yaml")])
    assert out.data["findings"]


@pytest.mark.parametrize("bad", ["../outside.yaml", "/etc/passwd", "/"])
def test_paths_outside_the_root_are_refused(root: Path, bad: str) -> None:
    (root.parent / "outside.yaml").write_text("kind: Pod\n")
    message = _refused(tools.lint, paths=[bad])
    assert message == (
        f"paths: {bad!r} is outside the server's root ({root}); start `gpuplane mcp --root DIR` to allow "
        "another folder"
    )


def test_a_symlink_out_of_the_root_is_refused(root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\ndata: {k: hunter2}\n")
    (root / "link.yaml").symlink_to(secret)
    assert "is outside the server's root" in _refused(tools.lint, paths=["link.yaml"])


def test_system_trees_are_refused_even_under_a_root_of_slash() -> None:
    sandbox.configure(["/"])
    try:
        for bad in ("/dev/zero", "/proc/self/environ", "/sys/kernel"):
            assert _refused(tools.lint, paths=[bad]) == (
                f"paths: {bad!r} is a system file tree (/proc, /dev, /sys); not read"
            )
    finally:
        sandbox.reset()


def test_generate_blueprint_outside_the_root_never_quotes_it(root: Path) -> None:
    message = _refused(tools.generate, blueprint_path="/etc/shadow")
    assert message.startswith("blueprint_path: '/etc/shadow' is outside the server's root")
    message = _refused(tools.lint, manifests="kind: Pod\n", config="/etc/hostname")
    assert message.startswith("config: '/etc/hostname' is outside the server's root")


def test_generate_returns_the_files_and_writes_only_under_the_root(root: Path, tmp_path: Path) -> None:
    out = tools.generate(blueprint_path="blueprint.yaml")
    assert out.data["output_dir"] is None
    assert out.data["files"] and all("content" in f for f in out.data["files"])
    assert sorted(p.name for p in root.iterdir()) == ["blueprint.yaml", "train.yaml"]  # nothing written
    message = _refused(tools.generate, blueprint_path="blueprint.yaml", output_dir="../../../../tmp/x")
    assert message.startswith("output_dir: '../../../../tmp/x' is outside the server's root")
    written = tools.generate(blueprint_path="blueprint.yaml", output_dir=str(root / "out"))
    assert written.data["output_dir"] == str(root / "out")
    assert (root / "out" / "README.md").is_file()


def test_cluster_live_is_not_a_path(root: Path) -> None:
    assert tools._check_path("live", "cluster") == "live"
