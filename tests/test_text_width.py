"""Every command's text output fits the terminal width (issue 17 item 2).

Each command of the demo is rendered with ``$COLUMNS`` at 80 and 200 (the width a piped console
and the findings' word wrapping use, :mod:`gpuplane.report.console`); no line may be wider, no
line may carry trailing padding, and the names that identify rows (node, pod and rule ids)
must appear whole, never cut with an ellipsis or folded across lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from gpuplane.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
DEMO = str(ROOT / "examples" / "clusters" / "demo.yaml")
MANIFESTS = str(ROOT / "examples" / "manifests")
SIM_CLUSTER = str(ROOT / "examples" / "simulate" / "cluster.yaml")
SIM_JOBS = str(ROOT / "examples" / "simulate" / "deadlock-jobs.yaml")
METRICS = str(ROOT / "examples" / "usage" / "demo-metrics.json")

NODES = [f"node-a100-{i}" for i in (1, 2, 3, 4)] + ["node-a100-mig-1", "node-a100-mig-2", "node-l40s-1"]
COMMANDS: dict[str, tuple[list[str], list[str]]] = {
    # name: (arguments, identifiers that must appear whole in the output)
    "lint": (["lint", MANIFESTS], ["gpu-fractional-quantity", "gpu-request-without-limit"]),
    "diagnose": (["diagnose", "--cluster", DEMO], ["gang-partially-running", "node-a100-3"]),
    "inventory": (["inventory", "--cluster", DEMO], NODES),
    "why-pending": (["why-pending", "--cluster", DEMO], ["llm-finetune-worker-2"]),
    "simulate": (["simulate", "--cluster", SIM_CLUSTER, SIM_JOBS], []),
    "advise mig": (["advise", "mig", "--gpu", "A100-80GB", "--demand", "3g.40gb=3,1g.10gb=6"], []),
    "advise sharing": (
        [
            "advise",
            "sharing",
            "--gpu",
            "A100-80GB",
            "--workload",
            "name=notebooks,mem=10,util=15,isolation=tenant,latency=interactive,count=20",
        ],
        ["notebooks"],
    ),
    "advise capacity": (["advise", "capacity", "--demand", "H100-80GB=64", "--provider", "aws"], []),
    "rules": (["rules"], ["gpu-request-without-limit", "gpu-fractional-quantity"]),
    "explain": (["explain", "gpu-request-without-limit"], ["gpu-request-without-limit"]),
    "usage": (["usage", "--cluster", DEMO, "--metrics", METRICS], []),
}


def _render(args: list[str], width: int) -> str:
    result = CliRunner().invoke(cli, args, env={"COLUMNS": str(width), "NO_COLOR": "1"})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert result.output.strip(), f"{args} printed nothing"
    return result.output


@pytest.mark.parametrize("width", [80, 200])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_text_output_fits_the_width(name: str, width: int) -> None:
    args, identifiers = COMMANDS[name]
    output = _render(args, width)
    # piped, `explain` prints its page's Markdown source unchanged (for a pager, a file or an
    # assistant); reflowing it would change the document, so only its padding and ids are checked
    too_wide = [line for line in output.splitlines() if len(line) > width and name != "explain"]
    assert too_wide == [], (
        f"{name} at {width} columns: {len(too_wide)} lines too wide, first: {too_wide[0]!r}"
    )
    padded = [line for line in output.splitlines() if line != line.rstrip()]
    assert padded == [], f"{name} at {width} columns pads lines with spaces: {padded[0]!r}"
    for identifier in identifiers:
        assert identifier in output, f"{name} at {width} columns cuts {identifier!r}"
    if name == "inventory":
        assert "…" not in output, "inventory cut a cell with an ellipsis"


def test_piped_findings_are_not_wrapped_without_columns() -> None:
    """Piped output without $COLUMNS is for grep: one line per finding, however long."""
    result = CliRunner().invoke(cli, ["lint", MANIFESTS], env={"COLUMNS": None, "NO_COLOR": "1"})
    heads = [line for line in result.output.splitlines() if "gpu-fractional-quantity" in line]
    assert len(heads) == 1 and "must be whole numbers" in heads[0]
