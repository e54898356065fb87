"""``gpuplane lint``: find what in these manifests will break, stall, waste GPUs or leak isolation.

The click command: its flags, help and usage errors. The body is :mod:`gpuplane.cli.lint_run`,
which ``gpuplane lint PATH...`` without flags runs without importing click (start-up time)."""

from __future__ import annotations

import click

from gpuplane.cli.common import cluster_options, format_option, quiet_option
from gpuplane.cli.lint_run import run_lint_command


@click.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@cluster_options()
@format_option("text", "json", "sarif", "github")
@click.option(
    "--fail-on",
    type=click.Choice(["error", "warning", "info", "never"]),
    default=None,
    help="Exit 1 when a finding reaches this severity  [default: error, or fail-on of the config file]",
)
@click.option("--disable", default="", metavar="ID,...", help="Rule ids to turn off.")
@click.option("--enable", default="", metavar="ID,...", help="Rule ids to turn on (only these when given).")
@click.option(
    "--enable-all",
    is_flag=True,
    help="Also run the opt-in rules (advisory by nature; `gpuplane rules` marks them). "
    "Same as `profile: all` in .gpuplane.yaml.",
)
@click.option(
    "--config",
    type=click.Path(dir_okay=False),
    default=None,
    help="Config file (default: .gpuplane.yaml found upward from the current folder).",
)
@click.option(
    "--fix",
    is_flag=True,
    help="Rewrite files in place with the safe mechanical fixes ([*] in the text output); only the "
    "fixed lines change.",
)
@click.option(
    "--unsafe-fixes",
    is_flag=True,
    help="With --fix: also apply the unsafe fixes ([unsafe fix]: they may change how the workload "
    "behaves); without --fix: show them as fixable.",
)
@click.option("--dry-run", is_flag=True, help="With --fix: print the diff instead of writing.")
@click.option(
    "--follow-symlinks",
    is_flag=True,
    help="With --fix: rewrite the target of a symlinked file (default: leave symlinks alone).",
)
@click.option(
    "--skip-non-manifests",
    is_flag=True,
    help="Skip, with a note, files holding no Kubernetes object (no kind), even when named "
    "explicitly; for pre-commit and mixed folders.",
)
@quiet_option
def lint(
    paths: tuple[str, ...],
    cluster: str | None,
    kube_context: str | None,
    kubeconfig: str | None,
    fmt: str,
    fail_on: str | None,
    disable: str,
    enable: str,
    enable_all: bool,
    config: str | None,
    fix: bool,
    unsafe_fixes: bool,
    dry_run: bool,
    follow_symlinks: bool,
    skip_non_manifests: bool,
    quiet: bool,
) -> None:
    """Lint Kubernetes manifests for GPU and AI-workload mistakes.

    Finds what will break, stall, waste GPUs or leak isolation: wrong GPU requests,
    missing gangs, unsafe sharing, autoscaling and storage traps. PATH is a file, a
    folder (walked for *.yaml, *.yml, *.json) or - for stdin; with --cluster the
    rules also check against a cluster snapshot (or live). Silence a rule on one
    object with the annotation gpuplane.io/ignore: "rule-a,rule-b"; `gpuplane rules`
    lists the rules.

    \b
    Examples:
      gpuplane lint examples/manifests/
      gpuplane lint examples/manifests/ --cluster examples/clusters/demo.yaml
      gpuplane lint examples/manifests/fractional-gpu.yaml -f json
      helm template charts/train | gpuplane lint -
      gpuplane lint -f sarif examples/manifests/ > gpuplane.sarif
      gpuplane lint --fix --dry-run examples/manifests/
      gpuplane lint --fix --unsafe-fixes examples/manifests/

    \b
    Exit codes: 0 no finding reaches --fail-on (an empty folder or stdin too),
    1 a finding reaches --fail-on, 2 unusable input or arguments.
    """
    run_lint_command(
        paths,
        cluster=cluster,
        kube_context=kube_context,
        kubeconfig=kubeconfig,
        fmt=fmt,
        fail_on=fail_on,
        disable=disable,
        enable=enable,
        enable_all=enable_all,
        config=config,
        fix=fix,
        unsafe_fixes=unsafe_fixes,
        dry_run=dry_run,
        follow_symlinks=follow_symlinks,
        skip_non_manifests=skip_non_manifests,
        quiet=quiet,
    )
