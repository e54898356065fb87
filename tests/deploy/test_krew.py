"""The krew manifest template, the release-archive step (scripts/build_krew_archive.py) and the
``kubectl_complete-gpuplane`` protocol kubectl 1.26+ uses to complete ``kubectl gpuplane <TAB>``."""

from __future__ import annotations

import importlib.util
import os
import shutil
import stat
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from gpuplane.cli.complete import complete

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location(
        "build_krew_archive", ROOT / "scripts" / "build_krew_archive.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_archive_and_rendered_manifest(tmp_path: Path) -> None:
    build = _script()
    binary = tmp_path / "kubectl-gpuplane"
    binary.write_bytes(b"#!/bin/sh\necho stand-in\n")
    tag = build.version()
    assert tag == "v0.1.0"
    archive = build.make_archive(binary, tmp_path / "dist", tag, "linux", "amd64")
    assert archive.name == "gpuplane-v0.1.0-linux-amd64.tar.gz"
    with tarfile.open(archive) as tar:
        members = {m.name: m for m in tar.getmembers()}
        assert sorted(members) == ["kubectl-gpuplane", "kubectl_complete-gpuplane"]
        assert all(m.mode == 0o755 for m in members.values())
        wrapper = tar.extractfile("kubectl_complete-gpuplane")
        assert wrapper is not None
        assert wrapper.read().decode().endswith('exec kubectl-gpuplane __complete "$@"\n')
    text = build.render_manifest(build.TEMPLATE.read_text(), tag, {archive.name: archive})
    manifest = yaml.safe_load(text)
    assert manifest["apiVersion"] == "krew.googlecontainertools.github.com/v1alpha2"
    assert manifest["kind"] == "Plugin" and manifest["metadata"]["name"] == "gpuplane"
    assert manifest["spec"]["version"] == "v0.1.0"
    (only,) = manifest["spec"]["platforms"]  # the one platform whose archive exists
    assert only["selector"] == {"matchLabels": {"os": "linux", "arch": "amd64"}}
    assert only["uri"] == (
        "https://github.com/gpuplane/gpuplane/releases/download/v0.1.0/gpuplane-v0.1.0-linux-amd64.tar.gz"
    )
    assert only["sha256"] == build.sha256(archive) and len(only["sha256"]) == 64
    assert only["bin"] == "kubectl-gpuplane"
    assert {f["from"] for f in only["files"]} == {"kubectl-gpuplane", "kubectl_complete-gpuplane"}
    assert "{{" not in text


def test_template_lists_four_platforms() -> None:
    build = _script()
    text = build.TEMPLATE.read_text()
    assert text.count('{{addURIAndSha "https:') == 4
    with pytest.raises(ValueError, match="no archive"):
        build.render_manifest(text, "v0.1.0", {})


def test_kubectl_complete_protocol() -> None:
    assert complete(["li"]) == ["lint\tLint Kubernetes manifests for GPU and...", ":4"]
    assert complete(["policy", ""]) == [
        "export\tWrite ValidatingAdmissionPolicy + Binding...",
        "list\tList which rules export as policies (and...",
        ":4",
    ]
    assert complete(["diagnose", "-f", ""]) == ["text", "json", "html", ":4"]
    assert complete(["lint", "--fail-o"])[-1] == ":4"
    assert complete(["lint", "--fail-o"])[0].startswith("--fail-on\t")


def test_completion_wrapper_runs_the_plugin(tmp_path: Path) -> None:
    """The archive's wrapper, run as kubectl runs it, against the installed kubectl-gpuplane."""
    plugin = shutil.which("kubectl-gpuplane", path=os.path.dirname(sys.executable))
    if plugin is None:
        pytest.skip("kubectl-gpuplane console script not installed beside this Python")
    wrapper = tmp_path / "kubectl_complete-gpuplane"
    wrapper.write_text(_script().COMPLETE_WRAPPER)
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PATH": f"{os.path.dirname(plugin)}:{os.environ['PATH']}"}
    done = subprocess.run([str(wrapper), "why-p"], env=env, capture_output=True, text=True, check=True)
    assert done.stdout == "why-pending\tExplain why GPU pods are Pending, in...\n:4\n"
