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
    # a single word wider than the room left (a command line to copy) overflows whole, never cut
    too_wide = [
        line
        for line in output.splitlines()
        if len(line) > width and name != "explain" and len(line.split()) > 1
    ]
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


# Headers the tables shorten below 100 columns (report/inventory_text.py _SHORT_HEADERS).
SHORT_HEADERS = {"alloc", "used", "problems", "used/alloc"}


@pytest.mark.parametrize("width", [80, 100, 200])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_word_is_split_across_lines(name: str, width: int) -> None:
    """Folded table cells and wrapped lines break between words only: every word of the output
    at ``width`` is a word of the same output at 400 columns (a shortened header aside), unless
    the word is itself wider than the terminal (a long command line cannot stay whole)."""
    if name == "explain":
        return  # piped explain is Markdown source, unwrapped at any width
    args, _ = COMMANDS[name]
    narrow = _render(args, width).split()
    wide = _render(args, 400).split()
    known = set(wide)
    too_long = [word for word in wide if len(word) > width]
    split = [
        word
        for word in narrow
        if word not in known
        and word not in SHORT_HEADERS
        and not set(word) <= set("─━╇┃│")
        and not any(word in long for long in too_long)
    ]
    assert split == [], f"{name} at {width} columns splits words: {split[:5]}"


def test_lint_continuation_lines_align_under_the_message() -> None:
    """A wrapped finding continues under its message's first word, and the padding that
    aligns rule ids never shows as a gap inside a wrapped line."""
    for width in (80, 120, 200):
        lines = _render(["lint", MANIFESTS], width).splitlines()
        for i, line in enumerate(lines):
            if not line.startswith("  examples/manifests/"):
                continue
            block = [line]
            for follower in lines[i + 1 :]:
                if not follower.startswith("      ") or follower.lstrip().startswith("fix: "):
                    break
                block.append(follower)
            if len(block) == 1:
                continue
            message_lines = block[1:]
            indents = {len(m) - len(m.lstrip(" ")) for m in message_lines}
            assert len(indents) == 1, (width, block)
            (indent,) = indents
            if indent > 6:  # the message starts on the head line: continuation under its column
                head = block[0]
                assert head[indent - 2 : indent] == "  " and head[indent] != " ", (width, block)
            for m in message_lines:
                assert "  " not in m.strip(), (width, m)


def test_lint_layout_exact(monkeypatch: pytest.MonkeyPatch) -> None:
    """At 80 columns the location, severity and rule leave too little room: the message starts
    on its own line; at 160 it continues under its first word."""
    monkeypatch.chdir(ROOT)
    path = "examples/manifests/fractional-gpu.yaml"
    assert _render(["lint", path], 80).splitlines()[:6] == [
        path,
        f"  {path}:14  error    gpu-fractional-quantity",
        '      Pod team-nlp/half-a-gpu, container "notebook" asks for nvidia.com/gpu:',
        '      0.5; extended resources must be whole numbers (API: "must be an integer")',
        "      fix: request a whole device, or share GPUs with device-plugin",
        "           time-slicing/MPS replicas, a MIG slice (nvidia.com/mig-<profile>: 1)",
    ]
    column = len(f"  {path}:14  error    gpu-fractional-quantity  ")
    assert _render(["lint", path], 160).splitlines()[1:3] == [
        f"  {path}:14  error    gpu-fractional-quantity  "
        'Pod team-nlp/half-a-gpu, container "notebook" asks for nvidia.com/gpu: 0.5;',
        " " * column + 'extended resources must be whole numbers (API: "must be an integer")',
    ]


def test_usage_findings_wrap_with_a_hanging_indent() -> None:
    lines = _render(COMMANDS["usage"][0], 80).splitlines()
    start = lines.index("Findings (9)") + 1
    assert lines[start : start + 7] == [
        "warning gpu-data-starved PyTorchJob team-vision/resnet-ddp trains at mean",
        "    activity 29.9% while its nodes spend 24.9% of CPU time in iowait: the GPUs",
        "    wait for input",
        "  change: feed the GPUs faster: more DataLoader workers with pinned memory and",
        "          prefetch, the dataset staged on local NVMe (or a cache in front of",
        "          object storage), larger sequential shards (WebDataset, TFRecord)",
        "  saving: 108.9 GPU-hours over the window, ~$299 (~$9,088/month) (estimate: up",
    ]
