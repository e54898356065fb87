"""``gpuplane lint``, ``rules`` and ``explain`` through the CLI: outputs and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gpuplane.cli.main import cli
from gpuplane.rule_catalog import all_rules

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "lint"
BAD = str(FIX / "gpu-request-without-limit" / "fail.yaml")
GOOD = str(FIX / "gpu-request-without-limit" / "pass.yaml")


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_json_and_exit_codes() -> None:
    res = run("lint", "-f", "json", "--enable", "gpu-request-without-limit", BAD)
    assert res.exit_code == 1
    doc = json.loads(res.stdout)
    assert [(f["rule"], f["line"]) for f in doc["findings"]] == [
        ("gpu-request-without-limit", 14),
        ("gpu-request-without-limit", 28),
    ]
    assert doc["summary"] == {"objects": 2, "findings": 2, "error": 2, "warning": 0, "info": 0}
    assert run("lint", "--fail-on", "never", "--enable", "gpu-request-without-limit", BAD).exit_code == 0
    assert run("lint", "--enable", "gpu-request-without-limit", GOOD).exit_code == 0
    assert (
        run(
            "lint",
            "--disable",
            "gpu-request-without-limit,gpu-rollout-surge-deadlock",
            "--fail-on",
            "error",
            "--enable",
            "gpu-request-without-limit",
            BAD,
        ).exit_code
        == 0
    )


def test_text_output_plain_when_piped() -> None:
    res = run("lint", "--enable", "gpu-request-without-limit", BAD)
    lines = res.stdout.splitlines()
    assert lines[0] == BAD
    assert lines[1].startswith(
        f'  {BAD}:14  error    gpu-request-without-limit  Deployment serve, container "server"'
    )
    assert (
        lines[2]
        == "      fix [*]: set resources.limits[nvidia.com/gpu]: 1 (a limit alone is enough: the request defaults to it)"
    )
    assert lines[-2] == "2 findings (2 errors, 0 warnings, 0 info) in 2 objects"
    assert lines[-1] == "[*] 2 fixable with the `--fix` option."
    assert "\x1b[" not in res.stdout


def test_github_annotations() -> None:
    res = run("lint", "-f", "github", "--enable", "gpu-request-without-limit", BAD)
    first = res.stdout.splitlines()[0]
    assert first.startswith(f"::error file={BAD},line=14,title=gpu-request-without-limit::Deployment serve")
    assert "%0Afix: set resources.limits[nvidia.com/gpu]" in first


def test_bad_input_exit_2_rest_still_linted(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("kind: Pod\nmetadata: {name: [\n")
    nokind = tmp_path / "nokind.yaml"
    nokind.write_text("metadata: {name: x}\n")
    res = run("lint", "-f", "json", "--enable", "gpu-request-without-limit", str(broken), str(nokind), BAD)
    assert res.exit_code == 2
    assert f"{nokind}:1: object has no kind" in res.stderr
    assert f"{broken}:" in res.stderr and "invalid YAML" in res.stderr
    assert json.loads(res.stdout)["summary"]["findings"] == 2
    assert "Traceback" not in res.output


def test_unknown_rule_id_and_bad_flags() -> None:
    res = run("lint", "--disable", "gpu-request-without-limt", BAD)
    assert res.exit_code == 2
    assert "unknown rule id 'gpu-request-without-limt'" in res.stderr
    assert run("lint", "--dry-run", BAD).exit_code == 2


def test_config_file_option(tmp_path: Path) -> None:
    cfg = tmp_path / "gp.yaml"
    cfg.write_text("enable: [gpu-request-without-limit]\nseverity: {gpu-request-without-limit: info}\n")
    res = run("lint", "--config", str(cfg), "-f", "json", BAD)
    assert res.exit_code == 0
    assert {f["severity"] for f in json.loads(res.stdout)["findings"]} == {"info"}
    cfg.write_text("disable: []\nnope: 1\n")
    res = run("lint", "--config", str(cfg), BAD)
    assert res.exit_code == 2 and "unknown key 'nope'" in res.stderr


def test_rules_json_lists_every_rule() -> None:
    res = run("rules", "-f", "json")
    assert res.exit_code == 0
    listed = json.loads(res.stdout)
    assert [r["id"] for r in listed] == [m.id for m in all_rules()]
    # the spec's four keys, plus whether the rule uses --cluster, has a --fix (safe or unsafe), its tier
    assert set(listed[0]) == {
        "id",
        "severity",
        "category",
        "summary",
        "context",
        "fixable",
        "fix_safety",
        "tier",
    }
    assert sum(r["fixable"] for r in listed) == sum(m.fixable for m in all_rules()) > 10
    mine = {"gpu", "placement", "tenancy"}
    # + pod-priority-set-directly, pod-template-invalid, manifest-unknown-field, manifest-unrendered-template,
    # and (issue 16) volcano-queue-reclaimable-without-reclaim, kueue-clusterqueue-unused,
    # kueue-workload-without-queue, gke-critical-pods-without-quota; gpu-held-idle, gpu-resource-name-typo
    # (issue 12)
    assert len([r for r in listed if r["category"] in mine]) == 30


def test_explain_and_did_you_mean() -> None:
    res = run("explain", "gpu-request-without-limit")
    assert res.exit_code == 0
    assert res.stdout.startswith("# gpu-request-without-limit\n")
    assert "Limit must be set for non overcommitable resources" in res.stdout
    res = run("explain", "gpu-request-without-limmit")
    assert res.exit_code == 2
    assert "did you mean gpu-request-without-limit or" in res.stderr


def test_nothing_readable_prints_only_the_error() -> None:
    res = run("lint", "/nonexistent-gpuplane-path")
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr == "/nonexistent-gpuplane-path: no such file or directory\n"


def test_skip_non_manifests_for_pre_commit(tmp_path: Path) -> None:
    """pre-commit names every YAML file: with --skip-non-manifests, kindless files are notes, not errors."""
    (tmp_path / "ci.yaml").write_text("name: ci\non: [push]\njobs: {}\n")
    pod = tmp_path / "pod.yaml"
    pod.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: busybox\n"
    )
    strict = run("lint", str(tmp_path / "ci.yaml"), str(pod))
    assert strict.exit_code == 2
    assert strict.stderr == f"{tmp_path / 'ci.yaml'}:1: object has no kind\n"
    lenient = run("lint", "--skip-non-manifests", str(tmp_path / "ci.yaml"), str(pod))
    assert lenient.exit_code == 0
    assert lenient.stderr == f"gpuplane: skipped {tmp_path / 'ci.yaml'} (no Kubernetes object: no kind)\n"
