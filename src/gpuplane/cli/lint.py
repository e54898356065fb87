"""``gpuplane lint``: find what in these manifests will break, stall, waste GPUs or leak isolation."""

from __future__ import annotations

import sys

import click

from gpuplane.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    cli_messages,
    cluster_options,
    fail,
    format_option,
    progress_display,
    quiet_option,
)
from gpuplane.sources.gc_policy import paused_gc


def _ids(value: str) -> set[str]:
    return {part.strip() for part in value.split(",") if part.strip()}


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
@paused_gc()  # millions of small objects (documents, line maps, findings, JSON) from load to output
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
    from gpuplane.app import lint as lint_app  # for start-up time
    from gpuplane.app.outcome import CLI, AppError

    if dry_run and not fix:
        fail("--dry-run only makes sense with --fix")
    if follow_symlinks and not fix:
        fail("--follow-symlinks only makes sense with --fix")
    request = lint_app.LintRequest(
        paths=paths,
        cluster=cluster,
        context=kube_context,
        kubeconfig=kubeconfig,
        disable=frozenset(_ids(disable)),
        enable=frozenset(_ids(enable)),
        config=config,
        fail_on=fail_on,
        skip_non_manifests=skip_non_manifests,
        enable_all=enable_all,
    )
    try:
        with progress_display(quiet):
            outcome = lint_app.run(request, cli_messages(), CLI)
    except AppError as exc:
        fail(str(exc))
    result, loaded, threshold, bad_input = (
        outcome.result,
        outcome.loaded,
        outcome.threshold,
        outcome.bad_input,
    )

    if fix:
        from gpuplane.lint.fix import apply_fixes  # deferred for start-up time

        fixes = apply_fixes(
            result.findings, dry_run=dry_run, follow_symlinks=follow_symlinks, unsafe=unsafe_fixes
        )
        if dry_run:
            sys.stdout.write(fixes.diff)
        for problem in fixes.problems:
            click.echo(f"gpuplane: --fix: {problem}", err=True)
        verb = "would fix" if dry_run else "fixed"
        click.echo(f"gpuplane: {verb} {fixes.applied} finding(s) in {len(fixes.files)} file(s)", err=True)
        if not dry_run and fixes.applied:
            # what is left, read from the fixed files: lines are those of the new text, and a
            # fix's own consequences (if any) are reported too; the notes were printed once already
            from gpuplane.app.outcome import Messages  # deferred for start-up time

            try:
                outcome = lint_app.run(request, Messages(), CLI)
            except AppError as exc:
                fail(str(exc))
            result = outcome.result

    # With nothing usable read, a text "No findings in 0 objects" would read like a clean bill of
    # health: the errors above say it all. Machine formats still get their (empty) document.
    nothing_read = bad_input and not loaded.objects
    if not (fix and dry_run) and not (nothing_read and fmt == "text"):
        _emit(result, fmt, unsafe_fixes)
    if bad_input:
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_FINDINGS if result.reaches(threshold) else EXIT_OK)


def _emit(result: object, fmt: str, unsafe_fixes: bool = False) -> None:
    from gpuplane.cli.common import emit_json  # deferred for start-up time
    from gpuplane.lint.engine import LintResult

    assert isinstance(result, LintResult)
    if fmt == "json":
        emit_json(result.to_json())
    elif fmt == "sarif":
        from gpuplane.report.sarif import build  # deferred for start-up time
        from gpuplane.rule_catalog import all_rules

        emit_json(build(result.findings, all_rules(), [(s.finding, s.reason) for s in result.suppressed]))
    elif fmt == "github":
        from gpuplane.report.github import render  # deferred for start-up time
        from gpuplane.report.lint_text import summary_line

        sys.stdout.write(render(result.findings))
        click.echo(summary_line(result.summary()), err=True)
    else:
        from gpuplane.lint.coverage import summary_line as not_analysed_line  # deferred for start-up time
        from gpuplane.report.lint_text import render as render_text  # deferred for start-up time

        skipped = not_analysed_line(result.skipped) if result.skipped else None
        render_text(result.findings, result.summary(), not_analysed=skipped, unsafe_fixes=unsafe_fixes)
