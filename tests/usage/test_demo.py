"""The README's `gpuplane usage` on the bundled demo: its idle and oversized allocations and the fixes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "clusters" / "demo.yaml"
METRICS = ROOT / "examples" / "usage" / "demo-metrics.json"


@pytest.fixture(scope="module")
def demo() -> dict[str, Any]:
    result = CliRunner().invoke(
        cli, ["usage", "--cluster", str(DEMO), "--metrics", str(METRICS), "-f", "json"]
    )
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_demo_metrics_are_what_the_builder_writes(tmp_path: Path) -> None:
    out = tmp_path / "demo-metrics.json"
    subprocess.run(
        [sys.executable, str(ROOT / "examples" / "usage" / "build_metrics.py"), str(out)],
        check=True,
        capture_output=True,
    )
    assert out.read_bytes() == METRICS.read_bytes()


def test_demo_findings(demo: dict[str, Any]) -> None:
    got = [
        (f["rule"], f"{f['object']['kind']} {f['object']['namespace']}/{f['object']['name']}")
        for f in demo["findings"]
    ]
    assert got == [
        ("gpu-data-starved", "PyTorchJob team-vision/resnet-ddp"),
        ("gpu-allocated-idle", "Job team-research/mixtral-sft"),
        ("gpu-memory-oversized", "Deployment team-nlp/reranker"),
        ("gpu-underused", "Job team-nlp/bert-eval"),
        ("gpu-allocated-idle", "StatefulSet team-vision/notebook-alice"),
        ("gpu-underused", "StatefulSet team-vision/notebook-alice"),
        ("gpu-allocated-idle", "StatefulSet team-speech/notebook-bob"),
        ("gpu-allocated-idle", "StatefulSet team-speech/notebook-dave"),
        ("gpu-allocated-idle", "StatefulSet team-speech/notebook-carol"),
    ]
    by = {(f["rule"], f["object"]["name"]): f for f in demo["findings"]}
    reranker = by[("gpu-memory-oversized", "reranker")]["change"]
    assert (reranker["from"], reranker["to"], reranker["instances"]) == ("3g.20gb", "1g.5gb", 2)
    alice = by[("gpu-allocated-idle", "notebook-alice")]
    assert alice["change"]["kind"] == "notebook-idle-timeout"
    assert alice["saving"]["gpu_hours"] == 14.0  # a 15 h idle night, minus the 60-minute timeout
    assert alice["saving"]["price"]["instance_type"] == "p4d.24xlarge"
    hung = by[("gpu-allocated-idle", "mixtral-sft")]
    assert hung["saving"]["price"]["usd_per_gpu_hour"] == 6.88  # p5.48xlarge $55.04 / 8
    # The busy workloads stay silent.
    quiet = {f["object"]["name"] for f in demo["findings"]}
    assert not quiet & {"llm-finetune", "llama-70b-vllm", "embedding-api"}


def test_demo_text_report_names_the_changes() -> None:
    result = CliRunner().invoke(cli, ["usage", "--cluster", str(DEMO), "--metrics", str(METRICS)])
    assert result.exit_code == 0
    text = result.stdout
    assert "request nvidia.com/mig-1g.5gb instead of nvidia.com/mig-3g.20gb" in text
    assert "ENABLE_CULLING=true, CULL_IDLE_TIME=60" in text
    assert "Total saving: 193.5 GPU-hours" in text
    assert "Estimates: on-demand list prices" in text


def test_demo_html_report(tmp_path: Path) -> None:
    out = tmp_path / "usage.html"
    result = CliRunner().invoke(
        cli, ["usage", "--cluster", str(DEMO), "--metrics", str(METRICS), "-f", "html", "-o", str(out)]
    )
    assert result.exit_code == 0
    html = out.read_text()
    assert html.startswith("<!doctype html>")
    assert "<script" not in html and "http://" not in html and "https://" not in html
    assert html.count("<tr><th>node-") == 10  # every node whose exporter reports devices
    assert "Savings by team" in html and "Top idle workloads" in html
    assert "gpu-memory-oversized" in html


def test_fail_on_and_source_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(
        cli,
        ["usage", "--cluster", str(DEMO), "--metrics", str(METRICS), "--fail-on", "warning", "-f", "json"],
    )
    assert result.exit_code == 1
    result = runner.invoke(cli, ["usage"])
    assert (result.exit_code, result.stderr) == (
        2,
        "gpuplane: give one metrics source: --prometheus URL or --metrics FILE\n",
    )
    bad = tmp_path / "bad.json"
    bad.write_text('{"status": "error", "errorType": "bad_data", "error": "parse error"}')
    result = runner.invoke(cli, ["usage", "--metrics", str(bad)])
    assert (result.exit_code, result.stderr) == (
        2,
        f"gpuplane: {bad}: Prometheus answered bad_data: parse error\n",
    )
    result = runner.invoke(cli, ["usage", "--metrics", str(tmp_path / "missing.json")])
    assert result.exit_code == 2
    assert result.stderr == f"gpuplane: --metrics {tmp_path / 'missing.json'}: No such file or directory\n"


def test_window_errors() -> None:
    runner = CliRunner()
    url = ["usage", "--prometheus", "http://127.0.0.1:9"]
    result = runner.invoke(cli, [*url, "--since", "7d", "--step", "30s"])
    assert (result.exit_code, result.stderr) == (
        2,
        "gpuplane: step 30s: 20160 points per series, more than Prometheus's 11,000\n",
    )
    result = runner.invoke(cli, [*url, "--end", "yesterday"])
    assert (result.exit_code, result.stderr) == (
        2,
        "gpuplane: end 'yesterday': expected RFC 3339 (2026-03-10T09:40:00Z) or Unix seconds\n",
    )
    result = runner.invoke(cli, [*url, "--since", "a week"])
    assert (result.exit_code, result.stderr) == (
        2,
        "gpuplane: 'a week' is not a duration like 7d, 24h or 90m\n",
    )


def test_namespace_keeps_one_teams_workloads_and_findings(demo: dict[str, Any]) -> None:
    """``-n`` as kubectl: one namespace's workloads, findings and row; the summary counts them,
    the node pools stay cluster-wide (every namespace shares the nodes)."""
    args = ["usage", "--cluster", str(DEMO), "--metrics", str(METRICS), "-f", "json"]
    result = CliRunner().invoke(cli, [*args, "-n", "team-nlp"])
    assert result.exit_code == 0, result.stderr
    nlp = json.loads(result.stdout)
    assert [(w["object"]["kind"], w["object"]["name"]) for w in nlp["workloads"]] == [
        (w["object"]["kind"], w["object"]["name"])
        for w in demo["workloads"]
        if w["object"]["namespace"] == "team-nlp"
    ]
    assert [(f["rule"], f["object"]["name"]) for f in nlp["findings"]] == [
        ("gpu-memory-oversized", "reranker"),
        ("gpu-underused", "bert-eval"),
    ]
    assert [n["namespace"] for n in nlp["namespaces"]] == ["team-nlp"]
    assert nlp["pools"] == demo["pools"]
    assert (nlp["summary"]["workloads"], nlp["summary"]["findings"]) == (len(nlp["workloads"]), 2)
    assert nlp["summary"]["allocated_gpu_hours"] == round(
        sum(w["allocated_gpu_hours"] for w in nlp["workloads"]), 2
    )
    everything = CliRunner().invoke(cli, [*args, "-A"])
    assert json.loads(everything.stdout) == demo
    both = CliRunner().invoke(cli, [*args, "-n", "team-nlp", "-A"])
    assert both.exit_code == 2
    assert both.stderr == "gpuplane: -n/--namespace and -A/--all-namespaces cannot be used together\n"
