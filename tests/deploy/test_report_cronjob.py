"""deploy/report/cronjob.yaml: the in-cluster report runs as the read-only identity, validates
against the Kubernetes schema, and its script writes, publishes and rotates reports as documented."""

from __future__ import annotations

import os
import stat
import subprocess
import time
from pathlib import Path

import yaml

from gpuplane.generate.validate import validate_objects

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_cronjob_validates_and_uses_the_read_only_identity() -> None:
    objects = _docs(DEPLOY / "report" / "cronjob.yaml")
    errors, unchecked = validate_objects(objects, "1.30")
    assert errors == [] and unchecked == []
    role = {(d["kind"], d["metadata"]["name"]): d for d in _docs(DEPLOY / "clusterrole.yaml")}
    cron = next(d for d in objects if d["kind"] == "CronJob")
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert ("ServiceAccount", pod["serviceAccountName"]) in role
    assert role[("ServiceAccount", "gpuplane")]["metadata"]["namespace"] == cron["metadata"]["namespace"]
    binding = role[("ClusterRoleBinding", "gpuplane-read-only")]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "gpuplane", "namespace": "gpuplane"}]
    # read-only: the role never grants a write verb, nor Secrets
    for rule in role[("ClusterRole", "gpuplane-read-only")]["rules"]:
        assert set(rule["verbs"]) <= {"get", "list", "watch"}
        assert "secrets" not in rule.get("resources", [])
    script = pod["containers"][0]["args"][0]
    assert 'gpuplane diagnose --cluster live -f html -o "$REPORTS/report-$stamp.html"' in script
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    assert kustomization["resources"] == ["clusterrole.yaml", "report/cronjob.yaml"]


def test_cronjob_script_writes_publishes_and_rotates(tmp_path: Path) -> None:
    """The container's script, run by sh with a stand-in gpuplane that writes its -o file."""
    cron = next(d for d in _docs(DEPLOY / "report" / "cronjob.yaml") if d["kind"] == "CronJob")
    container = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "gpuplane"
    fake.write_text('#!/bin/sh\nwhile [ "$1" != "-o" ]; do shift; done\necho "<html>report</html>" > "$2"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    reports = tmp_path / "reports"
    reports.mkdir()
    old = reports / "report-20200101T000000Z.html"
    old.write_text("old")
    week_ago = time.time() - 9 * 86400
    os.utime(old, (week_ago, week_ago))
    env = {e["name"]: e["value"] for e in container["env"]}
    env.update(REPORTS=str(reports), HOME=str(tmp_path), PATH=f"{bindir}:{os.environ['PATH']}")
    done = subprocess.run(
        [*container["command"], container["args"][0]], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    names = sorted(p.name for p in reports.iterdir())
    assert len(names) == 2 and names[1] == "report-" + names[1][len("report-") :]
    assert "latest.html" in names and old.name not in names
    assert (reports / "latest.html").read_text() == "<html>report</html>\n"
