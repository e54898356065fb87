"""``gpuplane inventory``: GPU capacity by node pool and model."""

from __future__ import annotations

import sys

import click

from gpuplane.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    call_service,
    cluster_options,
    emit_json,
    format_option,
    progress_display,
    quiet_option,
    resolve_cluster,
)


@click.command()
@cluster_options(live_default=True)
@format_option("text", "json")
@quiet_option
def inventory(
    cluster: str | None, kube_context: str | None, kubeconfig: str | None, fmt: str, quiet: bool
) -> None:
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
    from gpuplane.app import inventory as inventory_app  # deferred for start-up time

    request = inventory_app.InventoryRequest(
        resolve_cluster(cluster, kube_context, kubeconfig),
        kube_context,
        kubeconfig,
        sys.stderr.isatty() and not quiet,
    )
    with progress_display(quiet):
        outcome = call_service(inventory_app.run, request)
    if fmt == "json":
        emit_json(outcome.result.to_json())
    else:
        from gpuplane.report.console import make_console  # deferred for start-up time
        from gpuplane.report.inventory_text import render_inventory

        render_inventory(outcome.result, make_console())
    sys.exit(EXIT_USAGE if outcome.bad_input else EXIT_OK)
