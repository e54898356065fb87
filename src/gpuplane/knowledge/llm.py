"""Optional LLM mode for ``gpuplane ask``: an OpenAI-compatible chat endpoint, grounded.

Enabled only when ``GPUPLANE_LLM_BASE_URL`` is set (with ``GPUPLANE_LLM_MODEL`` and,
if the server needs one, ``GPUPLANE_LLM_API_KEY`` or a file named by
``GPUPLANE_LLM_API_KEY_FILE``; never credentials in the URL). Redirects are not followed (the
key would go to another host) and URLs are printed without userinfo or query. The model receives the
retrieved sections as its only context and may call gpuplane's own engines as
tools (knowledge search, rule docs, lint of a manifest) — the k8sgpt lesson:
structured, verified facts first, the model only explains them. Plain
``urllib`` keeps it dependency-free; any failure returns None so the caller
falls back to the offline answer.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpuplane.knowledge.rule_source import current
from gpuplane.knowledge.search import Hit, index

ENV_BASE_URL = "GPUPLANE_LLM_BASE_URL"
ENV_MODEL = "GPUPLANE_LLM_MODEL"
ENV_API_KEY = "GPUPLANE_LLM_API_KEY"
ENV_API_KEY_FILE = "GPUPLANE_LLM_API_KEY_FILE"  # a file holding the key (e.g. a mounted secret)
MAX_KEY_FILE_BYTES = 4096
MAX_RESPONSE_BYTES = 8 << 20  # a chat completion is kilobytes; more is not an answer
DEFAULT_MODEL = "gpt-4o-mini"
TIMEOUT_S = 60.0
MAX_TOOL_ROUNDS = 4
MAX_TOOL_OUTPUT = 12000

SYSTEM_PROMPT = """You are gpuplane, a Kubernetes specialist for GPU and AI workloads.
Answer the user's question using ONLY the knowledge-base sections given below and the results
of the tools you call. Keep exact Kubernetes names (resources, fields, labels, flags) as written
in the sections. Cite the section ids you used in square brackets, e.g. [gpu-time-slicing].
Lead with the direct answer and the exact keys, labels, resource names, flags or commands to use,
then a config snippet from the sections where one applies, then the why.
If the sections do not contain the answer, say so plainly instead of guessing; never add a key,
flag or value that is not in the sections or the tool results.
Answer in concise Markdown."""


class LLMError(RuntimeError):
    """The endpoint could not be used; the message says why (shown on stderr before falling back)."""


@dataclass(frozen=True, slots=True)
class LLMConfig:
    base_url: str
    model: str
    api_key: str | None
    timeout: float = TIMEOUT_S
    api_key_file: str | None = None  # read when the endpoint is first called (errors are LLMErrors)


def display_url(url: str) -> str:
    """``url`` as it may be printed: no ``user:password@``, no query or fragment (tokens live there)."""
    import urllib.parse  # deferred for start-up time: only an LLM call needs it

    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host + (f":{port}" if port is not None else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _api_key(cfg: LLMConfig) -> str | None:
    """The key from the environment, else from ``GPUPLANE_LLM_API_KEY_FILE``; never from the URL."""
    if cfg.api_key or not cfg.api_key_file:
        return cfg.api_key
    try:
        with open(cfg.api_key_file, "rb") as fh:
            raw = fh.read(MAX_KEY_FILE_BYTES + 1)
    except OSError as exc:
        raise LLMError(f"{ENV_API_KEY_FILE}: cannot read {cfg.api_key_file}: {exc.strerror or exc}") from None
    if len(raw) > MAX_KEY_FILE_BYTES:
        raise LLMError(f"{ENV_API_KEY_FILE}: {cfg.api_key_file} is larger than {MAX_KEY_FILE_BYTES} bytes")
    key = raw.decode("utf-8", "replace").strip()
    return key or None


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Refuse every redirect: following one would re-send the Authorization header (and the
    question) to wherever the endpoint points, and print that host's reply as the answer."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def config_from_env(environ: dict[str, str] | None = None) -> LLMConfig | None:
    """The endpoint settings, or None when ``GPUPLANE_LLM_BASE_URL`` is unset (offline mode)."""
    env = os.environ if environ is None else environ
    base = env.get(ENV_BASE_URL, "").strip()
    if not base:
        return None
    return LLMConfig(
        base_url=base.rstrip("/"),
        model=env.get(ENV_MODEL, "").strip() or DEFAULT_MODEL,
        api_key=env.get(ENV_API_KEY, "").strip() or None,
        api_key_file=env.get(ENV_API_KEY_FILE, "").strip() or None,
    )


# -- tools: gpuplane's engines, callable by the model -------------------------------------------


def _tool_search_knowledge(args: dict[str, Any]) -> str:
    query = str(args.get("query", "")).strip()
    if not query:
        return "error: 'query' is required"
    hits = index().search(query, limit=3)
    return "\n\n".join(f"[{h.document.id}] {h.document.title}\n{h.document.body}" for h in hits) or "no match"


def _tool_explain_rule(args: dict[str, Any]) -> str:
    rule_id = str(args.get("rule_id", "")).strip()
    source = current()
    if source is None:
        return "error: lint rules unavailable (no rule catalog installed)"
    try:
        page = source.page(rule_id)
    except Exception as exc:
        return f"error: lint rules unavailable ({type(exc).__name__})"
    return page if page is not None else f"error: no rule with id {rule_id!r}"


def _tool_lint_manifests(args: dict[str, Any]) -> str:
    text = str(args.get("yaml", ""))
    if not text.strip():
        return "error: 'yaml' is required"
    try:
        from gpuplane.lint.engine import run_lint  # deferred for start-up time
        from gpuplane.sources.loader import load_text
    except Exception as exc:
        return f"error: lint engine unavailable ({type(exc).__name__})"
    loaded = load_text(text, "<llm>")
    result = run_lint(loaded.objects)
    doc = result.to_json()
    doc["load_errors"] = [str(e) for e in loaded.errors]
    return json.dumps(doc, default=str)


TOOLS: dict[str, tuple[Callable[[dict[str, Any]], str], str, dict[str, Any]]] = {
    "search_knowledge": (
        _tool_search_knowledge,
        "Search gpuplane's Kubernetes-for-AI knowledge base; returns the best sections.",
        {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    ),
    "explain_rule": (
        _tool_explain_rule,
        "Return the docs page of a gpuplane lint rule by id (e.g. gpu-request-without-limit).",
        {"type": "object", "properties": {"rule_id": {"type": "string"}}, "required": ["rule_id"]},
    ),
    "lint_manifests": (
        _tool_lint_manifests,
        "Lint Kubernetes YAML manifests with gpuplane's rules; returns findings as JSON.",
        {"type": "object", "properties": {"yaml": {"type": "string"}}, "required": ["yaml"]},
    ),
}


def tool_specs() -> list[dict[str, Any]]:
    """The ``tools`` array of the chat request (OpenAI function-calling format)."""
    return [
        {"type": "function", "function": {"name": name, "description": desc, "parameters": params}}
        for name, (_, desc, params) in TOOLS.items()
    ]


def run_tool(name: str, arguments: str | dict[str, Any] | None) -> str:
    """Run one tool call; errors become text for the model, never exceptions."""
    entry = TOOLS.get(name)
    if entry is None:
        return f"error: unknown tool {name!r}"
    try:
        args = json.loads(arguments) if isinstance(arguments, str) and arguments else (arguments or {})
        if not isinstance(args, dict):
            return "error: arguments must be a JSON object"
        return entry[0](args)[:MAX_TOOL_OUTPUT]
    except Exception as exc:  # a tool failure is reported to the model, the loop goes on
        return f"error: {type(exc).__name__}: {exc}"


# -- the chat loop ------------------------------------------------------------------------------


def _post(cfg: LLMConfig, payload: dict[str, Any]) -> dict[str, Any]:
    import urllib.parse  # deferred for start-up time: only an LLM call needs it

    url = cfg.base_url + "/chat/completions"
    shown = display_url(url)
    if not url.startswith(("http://", "https://")):
        raise LLMError(f"{ENV_BASE_URL} must be an http(s) URL, got {display_url(cfg.base_url)!r}")
    parts = urllib.parse.urlsplit(url)
    if parts.username is not None or parts.password is not None:
        raise LLMError(
            f"{ENV_BASE_URL} must not carry credentials (user:password@); "
            f"put the key in {ENV_API_KEY} or {ENV_API_KEY_FILE}"
        )
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    api_key = _api_key(cfg)
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), headers=headers, method="POST")
    opener = urllib.request.build_opener(_NoRedirects)
    try:
        with opener.open(request, timeout=cfg.timeout) as response:  # the URL is the user's own endpoint
            body = response.read(MAX_RESPONSE_BYTES + 1)
    except urllib.error.HTTPError as exc:
        moved = " (a redirect: not followed, the key is sent only to the configured URL)"
        raise LLMError(
            f"{shown} answered HTTP {exc.code}" + (moved if 300 <= exc.code < 400 else "")
        ) from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise LLMError(f"cannot reach {shown}: {reason}") from None
    if len(body) > MAX_RESPONSE_BYTES:
        raise LLMError(f"{shown} returned more than {MAX_RESPONSE_BYTES >> 20} MiB")
    try:
        doc = json.loads(body)
    except ValueError:
        raise LLMError(f"{shown} did not return JSON") from None
    if not isinstance(doc, dict):
        raise LLMError(f"{shown} returned an unexpected document")
    return doc


def _context(hits: list[Hit]) -> str:
    blocks = [f"[{h.document.id}] {h.document.title}\n\n{h.document.body}" for h in hits]
    return "Knowledge-base sections:\n\n" + "\n\n---\n\n".join(blocks)


def ask_llm(question: str, hits: list[Hit], cfg: LLMConfig) -> str:
    """The model's grounded answer. Raises :class:`LLMError` on any protocol or network failure."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM_PROMPT + "\n\n" + _context(hits)},
        {"role": "user", "content": question},
    ]
    for _ in range(MAX_TOOL_ROUNDS + 1):
        doc = _post(cfg, {"model": cfg.model, "messages": messages, "tools": tool_specs(), "temperature": 0})
        try:
            message = doc["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise LLMError("the response has no choices[0].message") from None
        calls = message.get("tool_calls") or []
        if not calls:
            content = message.get("content")
            if not isinstance(content, str) or not content.strip():
                raise LLMError("the model returned an empty answer")
            return content.strip()
        messages.append({"role": "assistant", "content": message.get("content"), "tool_calls": calls})
        for call in calls:
            fn = call.get("function") or {}
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call.get("id", ""),
                    "content": run_tool(str(fn.get("name", "")), fn.get("arguments")),
                }
            )
    raise LLMError(f"the model kept calling tools after {MAX_TOOL_ROUNDS} rounds")


__all__ = ["LLMConfig", "LLMError", "ask_llm", "config_from_env", "run_tool", "tool_specs"]
