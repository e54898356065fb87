"""``gpuplane inventory``: GPU capacity by node pool and model."""

from __future__ import annotations

import sys

import click

from gpuplane.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    cluster_options,
    emit_json,
    format_option,
    load_cluster_or_fail,
)


@click.command()
@cluster_options(live_default=True)
@format_option("text", "json")
def inventory(cluster: str | None, kube_context: str | None, kubeconfig: str | None, fmt: str) -> None:
    """Show GPU capacity per node, pool and model: allocatable, allocated, free, MIG and time-slicing layout.

    Reads one cluster state (a snapshot file or folder, - for stdin, or live)
    and counts what each GPU node advertises, what running pods hold and what
    is free, per node, per node pool and per GPU model.

    \b
    Examples:
      gpuplane inventory --cluster examples/clusters/demo.yaml
      gpuplane inventory --cluster examples/clusters/demo.yaml -f json
      gpuplane inventory --context prod            # a live kube-context, like kubectl

    \b
    Exit codes: 0 done, 2 unusable cluster source.
    """
    # Engines and renderers are imported here, not at module level: `gpuplane --help` stays light.
    from gpuplane.diagnose.inventory import build_inventory  # deferred for start-up time

    state, errors = load_cluster_or_fail(cluster, kube_context, kubeconfig, progress=sys.stderr.isatty())
    result = build_inventory(state)
    if fmt == "json":
        emit_json(result.to_json())
    else:
        from gpuplane.report.console import make_console  # deferred for start-up time
        from gpuplane.report.inventory_text import render_inventory

        render_inventory(result, make_console())
    sys.exit(EXIT_USAGE if errors else EXIT_OK)
