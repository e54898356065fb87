"""The body of ``gpuplane lint``, importable without click.

``gpuplane lint FILE...`` runs in pre-commit hooks and editors on one small file at a time, so
its start-up is most of its cost, and click (with the option objects of every lint flag) was
about a tenth of it (issue 14 item 4). :mod:`gpuplane.cli.lint` is the click command, which
parses the flags and calls :func:`run_lint_command`; when the arguments are only paths
(:func:`only_paths`), :mod:`gpuplane.cli.entry` calls :func:`run_paths` instead, which does what
the click CLI does around the command (``gpuplane.cli.main``) without importing click: the
output, exit codes and error lines are the same (``tests/test_lint_without_click.py`` runs
both ways and compares). click is still imported to print a line on stderr, through
:func:`gpuplane.cli.common.echo_err`, when there is one.
"""

from __future__ import annotations

import errno
import os
import sys

from gpuplane.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_USAGE,
    cli_messages,
    debug_requested,
    echo_err,
    emit_json,
    fail,
    progress_display,
    run_guarded,
)
from gpuplane.sources.gc_policy import paused_gc, until_exit


def _ids(value: str) -> set[str]:
    return {part.strip() for part in value.split(",") if part.strip()}


def only_paths(args: list[str]) -> bool:
    """``lint`` arguments that are only paths (no option, no ``-`` for stdin, no ``--``), with no
    shell-completion request in the environment (click answers ``_<PROG>_COMPLETE`` before
    parsing): every flag at its default, so the command needs no option parser."""
    if any(name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ):
        return False
    return bool(args) and not any(arg.startswith("-") for arg in args)


def run_paths(paths: list[str]) -> None:
    """``gpuplane lint PATH...`` as the click CLI runs it, without click.

    What ``gpuplane.cli.main`` does around a command: the internal-error guard (step ``lint``,
    ``GPUPLANE_DEBUG``), the group's registration of NVIDIA config files; and what click's
    ``Command.main`` does in standalone mode (click 8.x core.py): end on Ctrl-C (or EOF) with a
    blank line and ``Aborted!`` on stderr and exit 1, on a broken pipe quietly with exit 1.
    The process ends after it: the cyclic GC stays off and the run is frozen (``until_exit``).
    """
    with until_exit():
        run_guarded(lambda: _standalone(tuple(paths)), step=lambda: "lint", debug=debug_requested)


def _standalone(paths: tuple[str, ...]) -> None:
    # NVIDIA config files become pseudo-objects, as the group callback (cli.main.cli) registers
    import gpuplane.gpu.config_files  # noqa: F401  # deferred for start-up time

    try:
        run_lint_command(paths)
    except (EOFError, KeyboardInterrupt):
        echo_err("")
        echo_err("Aborted!")
        sys.exit(1)
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        # The reader went away (only where SIGPIPE does not end the process, cli.entry): exit 1
        # with nothing more written; stdout points at /dev/null so the final flush cannot fail.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)


@paused_gc()  # millions of small objects (documents, line maps, findings, JSON) from load to output
def run_lint_command(
    paths: tuple[str, ...],
    *,
    cluster: str | None = None,
    kube_context: str | None = None,
    kubeconfig: str | None = None,
    fmt: str = "text",
    fail_on: str | None = None,
    disable: str = "",
    enable: str = "",
    enable_all: bool = False,
    config: str | None = None,
    fix: bool = False,
    unsafe_fixes: bool = False,
    dry_run: bool = False,
    follow_symlinks: bool = False,
    skip_non_manifests: bool = False,
    quiet: bool = False,
) -> None:
    """Lint ``paths`` with the flags of ``gpuplane lint`` (each default is the flag's default,
    which a test checks against the click command), print the report and exit."""
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
            echo_err(f"gpuplane: --fix: {problem}")
        verb = "would fix" if dry_run else "fixed"
        echo_err(f"gpuplane: {verb} {fixes.applied} finding(s) in {len(fixes.files)} file(s)")
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
    from gpuplane.lint.engine import LintResult  # deferred for start-up time

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
        echo_err(summary_line(result.summary()))
    else:
        from gpuplane.lint.coverage import summary_line as not_analysed_line  # deferred for start-up time
        from gpuplane.report.lint_text import render as render_text  # deferred for start-up time

        skipped = not_analysed_line(result.skipped) if result.skipped else None
        render_text(result.findings, result.summary(), not_analysed=skipped, unsafe_fixes=unsafe_fixes)
