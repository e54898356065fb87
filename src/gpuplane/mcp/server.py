"""The MCP server: registers every :data:`gpuplane.mcp.tools.TOOLS` entry on the official SDK.

Built on ``mcp.server.mcpserver.MCPServer`` (mcp 2.x; the 1.x ``FastMCP`` import raises there).
Each tool is registered with:

- its input schema, derived by the SDK from the tool function's typed, described parameters;
- an output schema (``object``) and a result carrying the JSON document once, as structured
  content, plus one short text block summarising it. The MCP spec ("Structured Content") says a
  tool SHOULD also return the document serialised in a text block, for clients that only read
  ``content``; gpuplane does not (issue 17): a diagnose document is ~60 KB, and sending it twice
  doubled what an assistant pays in tokens. Clients of the 2025-06-18 spec and later read
  ``structuredContent``; the summary says where the full answer is;
- behaviour annotations: read-only, idempotent, not destructive (``generate``, which writes
  files into a folder, is the one tool marked not read-only), with ``openWorldHint`` only on
  tools that may read a live cluster.

Errors never stop the server: :class:`~gpuplane.mcp.tools.ToolInputError` becomes a tool
error with its one-line message; an unexpected exception becomes a tool error naming the
exception, without a traceback (the SDK would otherwise log one on stderr). Each call runs in a
worker thread under a time limit and its result under a size cap (:mod:`gpuplane.mcp.limits`).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations

from gpuplane import __version__
from gpuplane.mcp import limits
from gpuplane.mcp.tools import TOOLS, ToolInputError, ToolSpec

SERVER_NAME = "gpuplane"
INSTRUCTIONS = (
    "gpuplane is a Kubernetes specialist for GPU/AI workloads. Every tool is read-only: it reads "
    "manifests (inline text or paths) and clusters (a snapshot file/folder, or `live` for the current "
    "kube-context) and never applies anything. Use lint on manifests before they are applied, "
    "why_pending for Pending pods, inventory for GPU capacity, advise_* for sharing/MIG/capacity "
    "decisions, ask and explain_rule for background."
)

# The declared result type: a CallToolResult validated against ``dict[str, Any]`` (MCPServer
# publishes that as the tool's outputSchema and checks structured content against it).
_RESULT = Annotated[CallToolResult, dict[str, Any]]


def annotations_for(spec: ToolSpec) -> ToolAnnotations:
    """MCP behaviour hints: no tool changes a cluster; only ``generate`` writes (local) files.

    ``generate`` is not read-only, honestly: it writes into a folder and replaces the generated
    stage folders already there (destructive to earlier output), with the same files for the
    same blueprint (idempotent).
    """
    return ToolAnnotations(
        title=spec.title,
        read_only_hint=not spec.writes_files,
        destructive_hint=spec.writes_files,
        idempotent_hint=True,
        open_world_hint=spec.reads_cluster,
    )


FULL_RESULT_NOTE = " (full result: structuredContent)"


def to_result(data: dict[str, Any], summary: str) -> CallToolResult:
    """The document once, as structured content, and a one-line summary as text; a document over
    the server's size limit is cut, with ``truncated`` saying what was cut (:mod:`.limits`)."""
    cap = limits.LIMITS.max_result_bytes
    data, cuts = limits.cap_document(data, cap)
    if cuts:
        data = {**data, "truncated": {"limit_bytes": cap, "cut": cuts}}
        summary += limits.truncation_note(cuts, cap)
    return CallToolResult(
        content=[TextContent(type="text", text=summary + FULL_RESULT_NOTE)],
        structured_content=data,
    )


def wrap(spec: ToolSpec) -> Callable[..., Awaitable[CallToolResult]]:
    """A coroutine with the tool's own signature that returns an MCP result or raises ToolError;
    the tool runs in a worker thread under the server's time limit (:mod:`.limits`)."""
    fn = spec.fn

    def run(kwargs: dict[str, Any]) -> CallToolResult:
        try:
            out = fn(**kwargs)
        except ToolInputError as exc:
            raise ToolError(str(exc)) from None
        except Exception as exc:  # an engine bug must not end the session or print a traceback
            raise ToolError(f"gpuplane failed on this input ({type(exc).__name__}: {exc})") from None
        return to_result(out.data, out.summary)

    async def call(**kwargs: Any) -> CallToolResult:
        try:
            return await limits.run_with_time_limit(spec.name, lambda: run(kwargs))
        except limits.CallLimitError as exc:
            raise ToolError(str(exc)) from None

    signature = inspect.signature(fn, eval_str=True)
    call.__signature__ = signature.replace(return_annotation=_RESULT)  # type: ignore[attr-defined]
    call.__name__ = spec.name
    call.__qualname__ = spec.name
    call.__doc__ = spec.description
    return call


class GpuplaneServer(MCPServer):
    """MCPServer whose argument-validation errors read as one line per bad argument.

    The SDK validates arguments with pydantic before any gpuplane code runs and raises a
    ToolError carrying pydantic's multi-line text (with errors.pydantic.dev links); the
    ValidationError is its ``__cause__``. Rebuild the message from it: ``field: problem``.
    """

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            problems = _validation_problems(exc.__cause__)
            if problems is None:
                raise
            raise ToolError(f"invalid arguments for {name}: {problems}") from None


def _validation_problems(cause: BaseException | None) -> str | None:
    """``loc: msg; loc: msg`` for a pydantic ValidationError, else None."""
    errors = getattr(cause, "errors", None)
    if cause is None or type(cause).__name__ != "ValidationError" or not callable(errors):
        return None
    parts = []
    for err in errors():
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "arguments") or "arguments"
        parts.append(f"{loc}: {err.get('msg', 'invalid')}")
    return "; ".join(parts)


def build_server(tools: tuple[ToolSpec, ...] = TOOLS) -> MCPServer:
    """An MCPServer with every gpuplane tool registered."""
    server: MCPServer = GpuplaneServer(
        name=SERVER_NAME,
        title="gpuplane",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )
    for spec in tools:
        server.add_tool(
            wrap(spec),
            name=spec.name,
            title=spec.title,
            description=spec.description,
            annotations=annotations_for(spec),
            structured_output=True,
        )
    return server


def serve_stdio(
    roots: tuple[str, ...] = (), call_timeout: float | None = None, max_result_kb: int | None = None
) -> None:
    """Serve over stdin/stdout until the client closes the stream, with every path a tool is
    given confined to ``roots`` (default: the working directory; :mod:`gpuplane.mcp.sandbox`),
    each call under the time and size limits (:mod:`gpuplane.mcp.limits`; None: the default)."""
    from gpuplane.mcp import sandbox  # deferred for start-up time
    from gpuplane.sources.gc_policy import allow_freeze

    allow_freeze(False)  # long-lived: a frozen snapshot would never be collected (gc_policy)
    sandbox.configure(roots)
    limits.configure(call_timeout, max_result_kb)
    build_server().run("stdio")
