"""``gpuplane ask``: answers from the built-in knowledge base, offline.

The engine lives in :mod:`gpuplane.knowledge`; this module only parses, picks
the mode (offline by default, LLM when ``GPUPLANE_LLM_BASE_URL`` is set) and
renders. Heavy modules (yaml via the knowledge loader, rich) are imported inside
the command so ``gpuplane --help`` stays instant.
"""

from __future__ import annotations

import sys

import click

from gpuplane.cli.common import cli_messages, emit_json, fail, format_option


@click.command()
@click.argument("question")
@format_option("text", "json")
@click.option(
    "-n",
    "--sections",
    "max_sections",
    type=click.IntRange(1, 5),
    default=3,
    show_default=True,
    help="How many knowledge-base sections the answer may draw on.",
)
@click.option(
    "--offline",
    is_flag=True,
    default=False,
    help="Never call the LLM endpoint, even when GPUPLANE_LLM_BASE_URL is set.",
)
def ask(question: str, fmt: str, max_sections: int, offline: bool) -> None:
    """Answer QUESTION about GPUs on Kubernetes from the built-in knowledge base, with sources.

    Offline retrieval over the built-in sections and the lint rule docs. When
    GPUPLANE_LLM_BASE_URL (an OpenAI-compatible endpoint; also
    GPUPLANE_LLM_MODEL, GPUPLANE_LLM_API_KEY) is set, a model rephrases the
    answer grounded in the same sections; any failure falls back to the
    offline answer.

    \b
    Examples:
      gpuplane ask "how to stop CPU pods landing on GPU nodes"
      gpuplane ask "time-slicing or MIG for notebooks?"
      gpuplane ask "which ResourceQuota key limits GPUs?" -f json

    \b
    Exit codes: 0 answered (or no knowledge found, said so), 2 empty or too long question.
    """
    from gpuplane.app import ask as ask_app  # deferred for start-up time
    from gpuplane.app.outcome import AppError

    try:
        ask_app.question_text(question)
    except AppError as exc:
        fail(f"ask: {exc}.")
    request = ask_app.AskRequest(question, max_sections, llm=not offline)
    try:
        result = ask_app.run(request, cli_messages())
    except AppError as exc:
        fail(str(exc))

    if fmt == "json":
        emit_json(result.to_json())
        return
    _print_text(result.answer, result.sources)


def _print_text(markdown: str, sources: list[dict[str, object]]) -> None:
    """Markdown through rich on a terminal; the raw Markdown when piped (it reads fine as text)."""
    lines = ["", "Sources (retrieval score):"] + [
        f"  - {s['section']}: {s['title']} (score {s['score']})" for s in sources
    ]
    if not sys.stdout.isatty():
        click.echo(markdown)
        if sources:
            click.echo("\n".join(lines))
        return
    from rich.console import Console  # deferred for start-up time
    from rich.markdown import Markdown

    console = Console()
    console.print(Markdown(markdown))
    if sources:
        console.print("\n".join(lines), style="dim", markup=False, highlight=False)
