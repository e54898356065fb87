"""Console-script entry point with a click-free fast path.

``gpuplane``, ``gpuplane --help`` and ``gpuplane --version`` are answered from
:mod:`gpuplane.cli.registry` alone, so they cost little more than starting
Python; ``gpuplane lint PATH...`` without flags runs :mod:`gpuplane.cli.lint_run`
without click. Everything else is handed to the click CLI in :mod:`gpuplane.cli.main`.
"""

from __future__ import annotations

import sys

_HELP_ARGS = (["--help"], ["-h"])
_CLICK_WIDTH = 80  # click wraps help to min(terminal width, 80)


def _terminal_is_wide() -> bool:
    """True when click would wrap at its 80-column maximum (it asks shutil too)."""
    import shutil  # deferred for start-up time: the fast path answers --help without it

    return shutil.get_terminal_size().columns >= _CLICK_WIDTH


def _die_quietly_on_closed_pipe() -> None:
    """``gpuplane ... | head``: end like other Unix tools (SIGPIPE), not with a Python error.

    Through ``_signal``, the C module ``signal`` wraps: importing ``signal`` builds its three
    IntEnums (``Signals``, ``Handlers``, ``Sigmasks``), about 1 ms of every run, for one call
    whose result is not used."""
    import _signal  # type: ignore[import-not-found]  # no stub in typeshed; for start-up time (above)

    if hasattr(_signal, "SIGPIPE"):
        _signal.signal(_signal.SIGPIPE, _signal.SIG_DFL)


def main() -> None:
    """Answer help/version instantly; otherwise run the full CLI."""
    _die_quietly_on_closed_pipe()
    args = sys.argv[1:]
    if args[:1] == ["__complete"]:  # cobra's protocol: what kubectl_complete-gpuplane wrappers call
        from gpuplane.cli.complete import main as complete_main  # deferred for start-up time

        complete_main(args[1:])
        return
    if args == ["--version"]:
        from gpuplane import __version__  # deferred for start-up time

        sys.stdout.write(f"gpuplane, version {__version__}\n")
        return
    if args in _HELP_ARGS and _terminal_is_wide():
        from gpuplane.cli.registry import TOP_HELP  # deferred for start-up time

        if sys.argv[0].rsplit("/", 1)[-1].startswith("kubectl-gpuplane"):
            TOP_HELP = TOP_HELP.replace("Usage: gpuplane ", "Usage: kubectl gpuplane ", 1)
        sys.stdout.write(TOP_HELP)
        return
    # deferred for start-up time (--version and --help above do without it)
    from gpuplane.sources.gc_policy import allow_fast_exit

    allow_fast_exit()  # one command, then the process ends (gc_policy.exit_at_once)
    try:
        _run(args)
    finally:
        allow_fast_exit(False)  # a caller in-process (a test) goes on: never end it later


def _run(args: list[str]) -> None:
    """The command itself: ``gpuplane lint PATH...`` without click, anything else with it."""
    if args[:1] == ["lint"]:
        import gc

        was_enabled = gc.isenabled()
        gc.disable()  # no collection while the lint modules load; run_paths keeps it off (until_exit)
        try:
            from gpuplane.cli.lint_run import only_paths, run_paths  # deferred for start-up time

            if only_paths(args[1:]):  # `gpuplane lint FILE...` of pre-commit hooks and editors
                run_paths(args[1:])
                return
        finally:
            if was_enabled:
                gc.enable()
    from gpuplane.cli.main import main as click_main  # deferred for start-up time

    click_main()
