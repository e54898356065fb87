"""Optional LLM mode for ``gpuplane ask``: an OpenAI-compatible chat endpoint, grounded.

Enabled only when ``GPUPLANE_LLM_BASE_URL`` is set (with ``GPUPLANE_LLM_MODEL`` and,
if the server needs one, ``GPUPLANE_LLM_API_KEY``). The model receives the
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

from gpuplane.knowledge.search import Hit, index

ENV_BASE_URL = "GPUPLANE_LLM_BASE_URL"
ENV_MODEL = "GPUPLANE_LLM_MODEL"
ENV_API_KEY = "GPUPLANE_LLM_API_KEY"
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
    try:
        from gpuplane.rule_catalog import get_rule, render_page
    except Exception as exc:
        return f"error: lint rules unavailable ({type(exc).__name__})"
    meta = get_rule(rule_id)
    return render_page(meta) if meta is not None else f"error: no rule with id {rule_id!r}"


def _tool_lint_manifests(args: dict[str, Any]) -> str:
    text = str(args.get("yaml", ""))
    if not text.strip():
        return "error: 'yaml' is required"
    try:
        from gpuplane.lint.engine import run_lint
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
    url = cfg.base_url + "/chat/completions"
    if not url.startswith(("http://", "https://")):
        raise LLMError(f"{ENV_BASE_URL} must be an http(s) URL, got {cfg.base_url!r}")
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if cfg.api_key:
        headers["Authorization"] = f"Bearer {cfg.api_key}"
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), headers=headers, method="POST")
    try:
        with urllib.request.urlopen(
            request, timeout=cfg.timeout
        ) as response:  # the URL is the user's own endpoint
            body = response.read()
    except urllib.error.HTTPError as exc:
        raise LLMError(f"{url} answered HTTP {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise LLMError(f"cannot reach {url}: {reason}") from None
    try:
        doc = json.loads(body)
    except ValueError:
        raise LLMError(f"{url} did not return JSON") from None
    if not isinstance(doc, dict):
        raise LLMError(f"{url} returned an unexpected document")
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
