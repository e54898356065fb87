"""``gpuplane advise``: sharing mode, MIG layout and capacity decisions."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from gpuplane.cli.common import EXIT_FINDINGS, EXIT_OK, emit_json, fail, format_option

Request = TypeVar("Request")
Plan = TypeVar("Plan")


@click.group()
def advise() -> None:
    """Decision support: sharing mode, exact MIG layouts, capacity and cost.

    Offline calculators over the built-in GPU catalog (models, MIG geometry,
    instance types, prices, cold-start figures): none reads a cluster.

    \b
    Examples:
      gpuplane advise mig --gpu A100-40GB --demand 3g.20gb=2,1g.5gb=4
      gpuplane advise sharing --gpu L4 --workload name=embed,mem=8,util=20,count=12
      gpuplane advise capacity --demand H100-80GB=16 --provider aws

    \b
    Exit codes: 0 answered, 1 (mig) the demand does not fit, 2 bad arguments.
    """


@advise.command()
@click.option(
    "--gpu",
    "gpu_model",
    required=True,
    multiple=True,
    metavar="MODEL[:COUNT]",
    help="GPU model, e.g. A100-80GB or NVIDIA-A100-SXM4-80GB; repeat with :COUNT for a mixed fleet.",
)
@click.option(
    "--demand",
    required=True,
    multiple=True,
    metavar="PROFILE=COUNT,...",
    help="Slices wanted, e.g. 3g.40gb=2,1g.10gb=4 (also nvidia.com/mig-1g.10gb.me=1).",
)
@click.option("--gpus", type=int, default=None, help="GPUs available (default: as many as needed).")
@format_option("text", "json")
def mig(gpu_model: tuple[str, ...], demand: tuple[str, ...], gpus: int | None, fmt: str) -> None:
    """Find the fewest GPUs whose valid MIG layouts host a slice demand, exactly.

    Profiles are checked per model (3g.40gb exists on A100-80GB, not on
    A100-40GB) and every GPU gets a concrete placement, so the layout really
    fits. When it does, the answer ends with a mig-parted config to apply;
    when it does not (unknown profile, too few GPUs), it says why, shows the
    best partial layout and prints no config.

    \b
    Examples:
      gpuplane advise mig --gpu A100-40GB --demand 3g.20gb=2,1g.5gb=4
      gpuplane advise mig --gpu A100-80GB --demand 3g.40gb=3 --gpus 1
      gpuplane advise mig --gpu A100-80GB:8 --gpu H100-80GB:4 --demand 3g.40gb=10 -f json

    \b
    Exit codes: 0 feasible, 1 not feasible, 2 unusable input.
    """
    from gpuplane.app import advise as advise_app  # deferred for start-up time

    plan = _served(advise_app.mig, advise_app.MigRequest(gpu_model, demand, gpus))
    _show(plan, fmt, "render_mig")
    sys.exit(EXIT_OK if plan.feasible else EXIT_FINDINGS)


@advise.command()
@click.option(
    "--gpu", "gpu_model", required=True, metavar="MODEL", help="GPU model of the pool, e.g. A100-80GB or L4."
)
@click.option(
    "--workload",
    "workloads",
    multiple=True,
    metavar="KEY=VALUE,...",
    help="name=..,mem=GB,util=PCT[,isolation=none|team|tenant][,latency=batch|interactive|realtime][,count=N]",
)
@click.option(
    "--from",
    "from_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="YAML file: a list of workloads with the same keys.",
)
@click.option(
    "--kubernetes-version",
    "k8s_version",
    default=None,
    metavar="1.MINOR",
    help="Cluster version (DRA needs >= 1.34).",
)
# the spelling of releases before issue 17, still read for one release (hidden from --help)
@click.option("--k8s-version", "k8s_version_old", default=None, hidden=True)
@click.option("--dra-driver", is_flag=True, help="The NVIDIA DRA driver is installed.")
@click.option(
    "--gpus-per-node",
    type=int,
    default=None,
    metavar="N",
    help="GPUs per node of the pool, for the per-node MIG config (default: 8).",
)
@format_option("text", "json")
def sharing(
    gpu_model: str,
    workloads: tuple[str, ...],
    from_file: str | None,
    k8s_version: str | None,
    k8s_version_old: str | None,
    dra_driver: bool,
    gpus_per_node: int | None,
    fmt: str,
) -> None:
    """Recommend how a workload mix should share GPUs: none, time-slicing, MPS, MIG or DRA.

    Each workload gives its GPU memory (GB), utilisation (% of one GPU),
    isolation need and latency class; the answer is a mode per workload, the
    GPUs it takes, the reasons and trade-offs, and the configs to apply (MIG
    layout, device plugin ConfigMap, DRA claim templates), each with where it
    goes.

    \b
    Examples:
      gpuplane advise sharing --gpu L4 --workload name=embed,mem=8,util=20,count=12
      gpuplane advise sharing --gpu A100-80GB \\
        --workload name=notebooks,mem=10,util=15,isolation=tenant,latency=interactive,count=20 \\
        --workload name=batch-embed,mem=8,util=20,count=12
      gpuplane advise sharing --gpu H100-80GB --workload name=svc,mem=20,util=30,count=4 \\
        --kubernetes-version 1.34 --dra-driver -f json

    \b
    Exit codes: 0 answered, 2 unknown GPU model or bad workload.
    """
    from gpuplane.app import advise as advise_app  # deferred for start-up time

    if k8s_version_old is not None:
        click.echo(
            "gpuplane: --k8s-version is now --kubernetes-version (the old name goes in the next release)",
            err=True,
        )
        k8s_version = k8s_version or k8s_version_old
    request = advise_app.SharingRequest(
        gpu_model,
        workloads,
        from_file=from_file,
        kubernetes_version=k8s_version,
        dra_driver=dra_driver,
        gpus_per_node=gpus_per_node,
    )
    result = _served(advise_app.sharing, request)
    _show(result, fmt, "render_sharing")
    sys.exit(EXIT_OK)


@advise.command()
@click.option(
    "--demand",
    required=True,
    multiple=True,
    metavar="MODEL=GPUS,...",
    help="GPUs needed per model, e.g. H100-80GB=16.",
)
@click.option("--provider", type=click.Choice(["aws", "gcp", "azure"]), default="aws", show_default=True)
@click.option(
    "--headroom", type=float, default=0.0, show_default=True, metavar="PCT", help="Extra GPUs, % of demand."
)
@click.option(
    "--growth",
    type=float,
    default=0.0,
    show_default=True,
    metavar="GPUS/H",
    help="Expected demand growth; adds warm spare GPUs to cover a worst-case cold start.",
)
@click.option(
    "--image-gib",
    type=float,
    default=10.0,
    show_default=True,
    help="Container image size for the cold-start estimate.",
)
@click.option(
    "--prices",
    type=click.Path(dir_okay=False),
    default=None,
    help="YAML price table overriding the built-in one.",
)
@format_option("text", "json")
def capacity(
    demand: tuple[str, ...],
    provider: str,
    headroom: float,
    growth: float,
    image_gib: float,
    prices: str | None,
    fmt: str,
) -> None:
    """Size a GPU fleet: nodes per GPU model, instance type and monthly on-demand cost.

    Adds headroom (% of the demand) and warm spare GPUs that cover demand
    growth during a worst-case node cold start; prices come from the built-in
    table (each with its source and date) or your own --prices file.

    \b
    Examples:
      gpuplane advise capacity --demand H100-80GB=16
      gpuplane advise capacity --demand H100-80GB=64,L4=8 --provider aws --headroom 10 --growth 8
      gpuplane advise capacity --demand A100-80GB=32 --provider gcp -f json

    \b
    Exit codes: 0 answered, 2 unknown GPU model, bad demand or --prices file.
    """
    from gpuplane.app import advise as advise_app  # deferred for start-up time

    request = advise_app.CapacityRequest(demand, provider, headroom, growth, image_gib, prices)
    plan = _served(advise_app.capacity, request)
    _show(plan, fmt, "render_capacity")
    sys.exit(EXIT_OK)


def _show(plan: Any, fmt: str, renderer: str) -> None:
    """Print a calculator's answer: its document with ``-f json``, else the text that
    :mod:`gpuplane.report.advise_text`'s ``renderer`` draws of it."""
    if fmt == "json":
        emit_json(plan.to_json())
        return
    from gpuplane.report import advise_text  # deferred for start-up time
    from gpuplane.report.console import make_console

    getattr(advise_text, renderer)(plan, make_console())


def _served(run: Callable[[Request], Plan], request: Request) -> Plan:
    """An offline calculator of :mod:`gpuplane.app.advise`; unusable input is one line, exit 2."""
    from gpuplane.app.outcome import AppError  # deferred for start-up time

    try:
        return run(request)
    except AppError as exc:
        fail(str(exc))
