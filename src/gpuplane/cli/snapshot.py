"""``gpuplane snapshot``: write a live cluster's state (no Secrets, env redacted)."""

from __future__ import annotations

import click

from gpuplane.cli.common import EXIT_USAGE, call_service


@click.command()
@click.option("--context", "kube_context", default=None, help="Kube-context to read.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False), default=None, help="Kubeconfig file.")
@click.option(
    "--from",
    "from_paths",
    multiple=True,
    metavar="PATH",
    help="Instead of a live cluster, merge and redact existing dumps (kubectl get -o yaml|json). Repeatable.",
)
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    help="Snapshot file to write: YAML for .yaml/.yml, JSON otherwise (faster to read back).",
)
@click.option("--quiet", "-q", is_flag=True, help="No progress or summary on stderr.")
def snapshot(
    kube_context: str | None, kubeconfig: str | None, from_paths: tuple[str, ...], output: str, quiet: bool
) -> None:
    """Write a cluster's state to one file that the other commands read with --cluster FILE.

    Reads nodes, pods, namespaces, quotas, PriorityClasses, storage, controllers,
    DRA objects and the GPU/AI CRDs that are installed, with list calls only.
    Secrets are never requested. The file keeps an allow-list: only the kinds
    above (Lists flattened; Secrets, kubeconfigs, SealedSecrets, ExternalSecrets
    dropped), only the annotations the engines read, command/args reduced to
    flag names, numbers and launcher words, env values redacted except GPU
    device selection, probe headers, StorageClass parameters and flexVolume
    options redacted, ConfigMap data kept only for device-plugin and mig-parted
    configs (recognised by content). deploy/clusterrole.yaml grants exactly
    the read access this needs. --from merges and redacts existing kubectl
    dumps instead of reading a live cluster.

    \b
    Examples:
      gpuplane snapshot -o cluster.json
      gpuplane snapshot --context prod -o prod.yaml
      gpuplane snapshot --from examples/clusters/demo.yaml -o demo.json
      gpuplane diagnose --cluster demo.json

    \b
    Exit codes: 0 written, 2 unreadable cluster or unwritable file (what was read is still written).
    """
    from gpuplane.app import snapshot as snapshot_app  # deferred for start-up time

    if not from_paths and not quiet:
        from gpuplane.sources.live import context_label  # for start-up time

        click.echo(f"gpuplane: reading cluster {context_label(kube_context, kubeconfig)}", err=True)
    request = snapshot_app.SnapshotRequest(output, kube_context, kubeconfig, from_paths, progress=not quiet)
    snap = call_service(snapshot_app.run, request)
    if not quiet:
        counts = snap.counts()
        summary = ", ".join(f"{counts[k]:,} {k}" for k in ("Node", "Pod") if k in counts)
        others = sum(counts.values()) - counts.get("Node", 0) - counts.get("Pod", 0)
        version = f", Kubernetes {snap.server_version}" if snap.server_version else ""
        click.echo(
            f"gpuplane: wrote {output}: {summary + ', ' if summary else ''}{others:,} other objects "
            f"from {snap.source}{version}",
            err=True,
        )
    if snap.errors:
        raise SystemExit(EXIT_USAGE)
