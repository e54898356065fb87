"""The service layer under the CLI and MCP: one lint request, the same outcome for both."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplane.app import lint as lint_app
from gpuplane.app.inputs import check_rule_ids, config_start, lint_config
from gpuplane.app.outcome import CLI, MCP, AppError, Messages

ROOT = Path(__file__).resolve().parents[2]
MANIFESTS = ROOT / "examples" / "manifests"


def test_unknown_rule_id_is_named_as_the_caller_names_it() -> None:
    with pytest.raises(AppError) as cli:
        check_rule_ids(CLI, disable=["no-such-rule"])
    assert str(cli.value) == "--disable: unknown rule id 'no-such-rule' (see `gpuplane rules`)"
    with pytest.raises(AppError) as mcp:
        check_rule_ids(MCP, enable=["no-such-rule"])
    assert str(mcp.value) == "enable: unknown rule id 'no-such-rule' (see the list_rules tool)"


def test_cli_and_mcp_surfaces_get_the_same_findings() -> None:
    request = lint_app.LintRequest(paths=(str(MANIFESTS),))
    cli = lint_app.run(request, Messages(), CLI)
    mcp = lint_app.run(request, Messages(), MCP)
    assert cli.result.to_json() == mcp.result.to_json()
    assert cli.result.findings and cli.threshold == "error"


def test_messages_keep_their_order_and_kinds(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n", encoding="utf-8")
    seen: list[str] = []
    messages = Messages(lambda m: seen.append(f"{m.kind}: {m.text}"))
    outcome = lint_app.run(lint_app.LintRequest(paths=(str(empty), str(bad))), messages, CLI)
    assert seen == [
        f"note: no manifests found in {empty}",
        f"input-error: {bad}:2: invalid YAML: did not find expected node content",
    ]
    assert outcome.bad_input and messages.errors == [seen[1].removeprefix("input-error: ")]


def test_mcp_surface_refuses_input_with_nothing_usable(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n", encoding="utf-8")
    with pytest.raises(AppError, match=r"^nothing usable in the manifests: .*bad.yaml:2: invalid YAML"):
        lint_app.run(lint_app.LintRequest(paths=(str(bad),)), Messages(), MCP)


def test_config_is_found_above_the_first_path(tmp_path: Path) -> None:
    (tmp_path / ".gpuplane.yaml").write_text(
        "fail-on: warning\ndisable: [gpu-limit-missing]\n", encoding="utf-8"
    )
    sub = tmp_path / "k8s"
    sub.mkdir()
    start = config_start([str(sub)])
    assert start == str(sub)
    cfg = lint_config(None, start, disable=["x"])
    assert cfg.fail_on == "warning"
    assert cfg.disable == {"gpu-limit-missing", "x"}
