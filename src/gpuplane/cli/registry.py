"""The command table, importable without click.

``gpuplane.cli.entry`` answers ``gpuplane --help`` and ``--version`` from here
without importing click (about 40 ms of the start-up budget); everything else
goes through ``gpuplane.cli.main``.
"""

from __future__ import annotations

# name -> (module, attribute, one-line help shown by `gpuplane --help`)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "lint": ("gpuplane.cli.lint", "lint", "Lint manifests for GPU/AI mistakes."),
    "rules": ("gpuplane.cli.rules", "rules", "List every lint rule."),
    "explain": ("gpuplane.cli.rules", "explain", "Print the docs page of a rule."),
    "why-pending": (
        "gpuplane.cli.why_pending",
        "why_pending",
        "Explain Pending pods in kube-scheduler's words.",
    ),
    "diagnose": ("gpuplane.cli.diagnose", "diagnose", "Diagnose a cluster's GPU stack and capacity."),
    "inventory": ("gpuplane.cli.inventory", "inventory", "GPU capacity per node, pool and model."),
    "simulate": ("gpuplane.cli.simulate", "simulate", "Simulate placing workloads on a cluster over time."),
    "generate": ("gpuplane.cli.generate", "generate", "Render a platform blueprint into manifests."),
    "advise": ("gpuplane.cli.advise", "advise", "Decision support: sharing mode, MIG layout, capacity."),
    "usage": ("gpuplane.cli.usage", "usage", "What the GPUs really do: idle and oversized allocations."),
    "ask": ("gpuplane.cli.ask", "ask", "Answer a question from the built-in knowledge base."),
    "policy": ("gpuplane.cli.policy", "policy", "Export lint rules as ValidatingAdmissionPolicies."),
    "snapshot": ("gpuplane.cli.snapshot", "snapshot", "Write a live cluster's state to a file."),
    "mcp": ("gpuplane.cli.mcp_cmd", "mcp", "Serve gpuplane's tools to LLM assistants over MCP (stdio)."),
}

# `gpuplane --help` exactly as click renders it at the default 80 columns.
# tests/test_cli.py checks it against click, so edit the docstring in main.py and
# regenerate this with: python -c "from click.testing import CliRunner; from gpuplane.cli.main import cli; print(CliRunner().invoke(cli, ['--help'], prog_name='gpuplane').output, end='')"
TOP_HELP = (
    "Usage: gpuplane [OPTIONS] COMMAND [ARGS]...\n"
    "\n"
    "  gpuplane: a Kubernetes specialist for AI workloads.\n"
    "\n"
    "  Examples:\n"
    "    gpuplane lint k8s/                         # find GPU/AI mistakes in manifests\n"
    "    gpuplane inventory --cluster snapshot.yaml # GPU capacity per model and pool\n"
    "    gpuplane why-pending --cluster live        # why are my GPU pods Pending?\n"
    "    gpuplane explain gpu-request-without-limit # what a rule means and how to fix it\n"
    "\n"
    "  Exit codes: 0 ok, 1 findings at or above --fail-on, 2 unusable input or\n"
    "  arguments, 3 internal error (a bug: please report it).\n"
    "\n"
    "Options:\n"
    "  --version                    Show the version and exit.\n"
    "  --debug                      On an internal error, print the traceback too.\n"
    "  --color [auto|always|never]  Colour: auto (on a terminal), always, never.\n"
    "                               NO_COLOR and FORCE_COLOR are honoured.\n"
    "  -h, --help                   Show this message and exit.\n"
    "\n"
    "Commands:\n"
    "  lint         Lint manifests for GPU/AI mistakes.\n"
    "  rules        List every lint rule.\n"
    "  explain      Print the docs page of a rule.\n"
    "  why-pending  Explain Pending pods in kube-scheduler's words.\n"
    "  diagnose     Diagnose a cluster's GPU stack and capacity.\n"
    "  inventory    GPU capacity per node, pool and model.\n"
    "  simulate     Simulate placing workloads on a cluster over time.\n"
    "  generate     Render a platform blueprint into manifests.\n"
    "  advise       Decision support: sharing mode, MIG layout, capacity.\n"
    "  usage        What the GPUs really do: idle and oversized allocations.\n"
    "  ask          Answer a question from the built-in knowledge base.\n"
    "  policy       Export lint rules as ValidatingAdmissionPolicies.\n"
    "  snapshot     Write a live cluster's state to a file.\n"
    "  mcp          Serve gpuplane's tools to LLM assistants over MCP (stdio).\n"
)
