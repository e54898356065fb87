"""Options and helpers shared by the command modules.

Kept free of heavy imports: every command module imports this at start-up. click itself is
imported by the functions that use it, so that ``gpuplane lint FILE`` (which
:mod:`gpuplane.cli.entry` runs without click, :mod:`gpuplane.cli.lint_run`) pays for it only
when it has a line to print on stderr.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

if TYPE_CHECKING:
    from gpuplane.app.outcome import Message, Messages
    from gpuplane.k8s.cluster import ClusterState

Outcome = TypeVar("Outcome")

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


def echo_err(text: str) -> None:
    """``text`` as one line on stderr, through ``click.echo`` as every command prints."""
    import click  # deferred for start-up time: a one-file lint without messages never needs it

    click.echo(text, err=True)


def format_option(*choices: str, default: str = "text") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``-f/--format`` limited to the formats a command can render."""
    import click  # deferred for start-up time (see the module docstring)

    return click.option(
        "-f",
        "--format",
        "fmt",
        type=click.Choice(list(choices)),
        default=default,
        show_default=True,
        help="Output format. JSON goes to stdout as one document; messages go to stderr.",
    )


def cluster_options(
    required: bool = False, *, live_default: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--cluster SOURCE`` plus ``--context`` / ``--kubeconfig`` for live mode.

    ``live_default``: like kubectl, no ``--cluster`` means the current kube-context (the command
    says which on stderr); ``--cluster FILE`` stays the offline way.
    """
    source_help = (
        "Cluster state: a snapshot file/folder (kubectl get -o yaml|json output, or `gpuplane snapshot`), "
        "or `live` for the current kube-context."
    )
    if live_default:
        source_help += " Default: live (the current kube-context, like kubectl)."

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        import click  # deferred for start-up time (see the module docstring)

        func = click.option(
            "--kubeconfig",
            type=click.Path(dir_okay=False),
            default=None,
            help="Kubeconfig file for --cluster live (default: $KUBECONFIG or ~/.kube/config).",
        )(func)
        func = click.option(
            "--context", "kube_context", default=None, help="Kube-context for --cluster live."
        )(func)
        # No explicit default: click >= 8.3 treats `default=None` as a value, which would
        # satisfy `required` and hand None to the command.
        func = click.option(
            "--cluster",
            "cluster",
            required=required and not live_default,
            metavar="SOURCE",
            help=source_help,
        )(func)
        return func

    return decorate


def namespace_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """kubectl's ``-n/--namespace`` and ``-A/--all-namespaces``, as a filter on what is listed.

    Without either, every namespace is shown (gpuplane's reports are cluster-wide); ``-A`` says
    so explicitly and cannot be combined with ``-n``.
    """
    import click  # deferred for start-up time (see the module docstring)

    func = click.option(
        "-A",
        "--all-namespaces",
        "all_namespaces",
        is_flag=True,
        help="Every namespace (the default; kubectl's flag, accepted).",
    )(func)
    func = click.option(
        "-n",
        "--namespace",
        "namespace",
        default=None,
        metavar="NS",
        help="Only objects of this namespace (cluster-scoped objects such as nodes are kept).",
    )(func)
    return func


def namespace_filter(namespace: str | None, all_namespaces: bool) -> str | None:
    """The namespace to keep, or None for all; exit 2 on ``-n`` with ``-A`` (kubectl refuses it too)."""
    if namespace is not None and all_namespaces:
        fail("-n/--namespace and -A/--all-namespaces cannot be used together")
    if namespace is not None and not namespace.strip():
        fail("-n/--namespace needs a namespace name")
    return None if all_namespaces else namespace


def resolve_cluster(cluster: str | None, context: str | None, kubeconfig: str | None) -> str:
    """``--cluster`` or, when absent, ``live``; a live read names its kube-context on stderr
    (``gpuplane: reading cluster <context>``), as kubectl users expect to see where they are."""
    from gpuplane.sources.cluster import LIVE  # for start-up time

    source = cluster if cluster is not None else LIVE
    if source == LIVE:
        from gpuplane.sources.live import context_label  # for start-up time

        echo_err(f"gpuplane: reading cluster {context_label(context, kubeconfig)}")
    return source


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print one clear line to stderr and exit (2 = unusable input or arguments)."""
    echo_err(f"gpuplane: {message}")
    sys.exit(code)


def echo_message(message: Message) -> None:
    """One message of the service layer on stderr, the way every command prints it."""
    if message.kind == "input-error":  # a LoadError: its text starts with the file name
        echo_err(message.text)
    elif message.kind == "warning":
        echo_err(f"gpuplane: warning: {message.text}")
    else:
        echo_err(f"gpuplane: {message.text}")


def cli_messages(*, warnings: bool = True) -> Messages:
    """Messages printed on stderr as they come (``warnings=False``: warnings kept, not printed)."""
    from gpuplane.app.outcome import Messages  # deferred for start-up time

    def listener(message: Message) -> None:
        if warnings or message.kind != "warning":
            echo_message(message)

    return Messages(listener)


def call_service(run: Callable[..., Outcome], request: Any) -> Outcome:
    """``run(request, messages, CLI)`` of a service (:mod:`gpuplane.app`): its messages on stderr
    as they come, an unusable input (``AppError``) one line and exit 2."""
    from gpuplane.app.outcome import CLI, AppError  # deferred for start-up time

    try:
        return run(request, cli_messages(), CLI)
    except AppError as exc:
        fail(str(exc))


def load_cluster_or_fail(
    cluster: str | None,
    context: str | None,
    kubeconfig: str | None,
    progress: bool = False,
    *,
    warnings: bool = True,
) -> tuple[ClusterState, bool]:
    """Read ``--cluster`` the one way every command does (:func:`gpuplane.app.inputs.load_cluster`):
    each problem on stderr as ``gpuplane: <error>``, then (with ``warnings``) the cluster's version
    warnings; exit 2 with ``nothing usable in cluster source '...'`` when errors left nothing to
    work on.

    Returns the state and whether there were errors (the command still runs on what was read
    and exits 2 at the end). ``warnings=False`` lets a command print them itself (later, or
    not at all when ``--kubernetes-version`` makes them moot).
    """
    from gpuplane.app.inputs import load_cluster  # for start-up time
    from gpuplane.app.outcome import CLI, AppError

    source = resolve_cluster(cluster, context, kubeconfig)
    messages = cli_messages(warnings=warnings)
    try:
        state = load_cluster(source, context, kubeconfig, messages, CLI, progress=progress)
    except AppError as exc:
        fail(str(exc))  # no report about an empty cluster that was never read
    return state, bool(messages.errors)


def not_available(command: str) -> NoReturn:
    """Registered in the contract, not built yet: say so honestly, never fake output."""
    fail(f"'{command}' is not available yet in this version of gpuplane.")


def write_output(text: str, output: str | None, what: str | None = None) -> None:
    """To ``output`` (one line on stderr says where, and ``what`` was written) or to stdout: the
    ``-o FILE`` of reports."""
    if not output:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        fail(f"-o {output}: {exc.strerror or exc}")
    echo_err(f"gpuplane: wrote {what + ' to ' if what else ''}{output}")


def write_json(document: Any, output: str | None) -> None:
    """One JSON document to ``output`` (:func:`write_output`) or to stdout (:func:`emit_json`)."""
    if not output:
        emit_json(document)
        return
    import msgspec  # deferred for start-up time

    write_output(msgspec.json.format(msgspec.json.encode(document), indent=2).decode() + "\n", output)


def finish_report(
    outcome: Any,
    fmt: str,
    output: str | None,
    fail_on: str,
    *,
    html: Callable[[Any], str],
    plain: Callable[[Any], str],
    terminal: Callable[[Any], None],
) -> NoReturn:
    """Write a report service's result in ``fmt`` (html, json, text to ``output`` as ``plain`` text,
    else ``terminal`` on the console) and exit: 2 on an unusable input, 1 at ``fail_on``, else 0.
    The renderers are the caller's, so their imports stay deferred."""
    result = outcome.result
    if fmt == "html":
        write_output(html(result), output)
    elif fmt == "json":
        write_json(result.to_json(), output)
    elif output:
        write_output(plain(result), output)
    else:
        terminal(result)
    if outcome.bad_input:
        sys.exit(EXIT_USAGE)
    sys.exit(EXIT_FINDINGS if result.reaches(fail_on) else EXIT_OK)


def emit_json(document: Any, *, spread: int = 0) -> None:
    """Write one JSON document to stdout (UTF-8, indent 2, newline-terminated).

    ``spread`` > 0 writes the same bytes in pieces as they are formatted, the top ``spread``
    levels walked (report/json_pieces.py): for documents too big to hold formatted whole."""
    import msgspec  # deferred for start-up time

    try:
        out = sys.stdout.buffer
        if spread > 0:
            from gpuplane.report.json_pieces import pieces  # deferred for start-up time

            pending: list[bytes] = []
            size = 0
            for piece in pieces(document, spread):
                pending.append(piece)
                size += len(piece)
                if size >= _WRITE_CHUNK:
                    out.write(b"".join(pending))
                    pending, size = [], 0
            out.write(b"".join(pending))
        else:
            out.write(msgspec.json.format(msgspec.json.encode(document), indent=2))
        out.write(b"\n")
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``| head``): that is not an error of ours. Point stdout at
        # /dev/null so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


# emit_json(spread=...) writes about this much at a time.
_WRITE_CHUNK = 1 << 20


def quiet_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``-q/--quiet``: no progress display on stderr (it shows only on a terminal anyway)."""
    import click  # deferred for start-up time (see the module docstring)

    return click.option(
        "--quiet",
        "-q",
        "quiet",
        is_flag=True,
        help="No progress display on stderr (shown on a terminal only).",
    )(func)


def progress_display(quiet: bool) -> Any:
    """Context in which long work shows progress on stderr: only when stderr is a terminal and
    not ``quiet`` (never when piped, for scripts and CI logs)."""
    from gpuplane.progress import reporting  # deferred for start-up time

    if quiet or not sys.stderr.isatty():
        return reporting(None)
    from gpuplane.report.progress import RichReporter  # deferred for start-up time

    return reporting(RichReporter(sys.stderr))


EXIT_INTERNAL = 3


def internal_error_line(exc: BaseException, step: str) -> str:
    """``internal error in STEP (where): Type: message; please report ...``, one line.

    ``where`` is the innermost gpuplane frame of the traceback (file and function), so the
    report names the code that failed without a traceback. The message is cut to one line.
    """
    import traceback  # deferred for start-up time: only a crash needs it

    where = ""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        path = frame.filename.replace(os.sep, "/")
        if "/gpuplane/" in path:
            where = f" ({path[path.rindex('/gpuplane/') + 1 :]}:{frame.lineno} in {frame.name})"
            break
    text = " ".join(str(exc).split())
    if len(text) > 200:
        text = text[:197] + "..."
    detail = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return (
        f"gpuplane: internal error in {step or 'gpuplane'}{where}: {detail}; please report it "
        "(rerun with --debug for the traceback)"
    )


def debug_requested() -> bool:
    """``GPUPLANE_DEBUG`` set to anything but empty or ``0``: tracebacks of internal errors too."""
    return os.environ.get("GPUPLANE_DEBUG", "") not in ("", "0")


def run_guarded(body: Callable[[], object], *, step: Callable[[], str], debug: Callable[[], bool]) -> None:
    """Run one whole command the way the ``gpuplane`` program does, click or not.

    Any exception that escapes ``body`` is a bug of gpuplane, not a finding: one line on stderr
    (:func:`internal_error_line`, naming ``step()``) and exit 3, never 1 (which CI reads as
    "findings found"); the traceback only when ``debug()``. One command, then exit: a big
    cluster may leave the cyclic GC (``allow_freeze``), and its command end the process without
    freeing it (``exit_at_once``: every command exits by ``SystemExit``, which keeps its frames).
    """
    from gpuplane.sources.gc_policy import allow_freeze  # deferred for start-up time

    allow_freeze()
    try:
        body()
    except SystemExit as exc:
        from gpuplane.sources.gc_policy import exit_at_once  # deferred for start-up time

        exit_at_once(exc)  # a big cluster's command: the process ends here, nothing freed
        raise
    except Exception as exc:
        if debug():
            import traceback  # deferred for start-up time: only a crash needs it

            traceback.print_exc()
        sys.stderr.write(internal_error_line(exc, step()) + "\n")
        sys.exit(EXIT_INTERNAL)
