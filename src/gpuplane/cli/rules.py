"""``gpuplane rules`` and ``gpuplane explain``: the rule catalog and each rule's docs."""

from __future__ import annotations

import sys

import click

from gpuplane.cli.common import fail, format_option


@click.command()
@format_option("text", "json")
def rules(fmt: str) -> None:
    """List every lint rule: id, severity, category, summary.

    Rules are grouped by category; "ctx" marks rules that use --cluster when given
    (or need it), "fix" rules that `gpuplane lint --fix` can repair ("unsafe fix": only
    with --unsafe-fixes), "opt-in" rules that run only with `lint --enable-all` (or
    `profile: all`, or `--enable ID`). `gpuplane explain ID` prints a rule's full page.

    \b
    Examples:
      gpuplane rules
      gpuplane rules -f json

    \b
    Exit codes: 0 always.
    """
    from gpuplane.app import rules as rules_app  # deferred for start-up time

    metas = rules_app.rules()
    if fmt == "json":
        from gpuplane.cli.common import emit_json  # deferred for start-up time

        emit_json([rules_app.row(m) for m in metas])
        return
    from gpuplane.report.console import wrap_hanging, wrap_width  # for start-up time: text output only

    columns = wrap_width()
    width = max((len(m.id) for m in metas), default=0)
    current = None
    for m in metas:
        if m.category != current:
            if current is not None:
                click.echo("")
            click.echo(f"[{m.category}]")
            current = m.category
        marks = (
            ("  ctx" if m.context != "none" else "")
            + (("  fix" if m.fix_safety == "safe" else "  unsafe fix") if m.fixable else "")
            + ("  opt-in" if m.tier != "default" else "")
        )
        for line in wrap_hanging(f"  {m.id:<{width}}  {m.severity:<7}  {m.summary}{marks}", columns, 6):
            click.echo(line)
    click.echo(f"\n{len(metas)} rules. `gpuplane explain ID` prints a rule's page.", err=True)


@click.command()
@click.argument("rule_id", metavar="ID")
def explain(rule_id: str) -> None:
    """Print the docs page (Markdown) of rule ID.

    The page says what the rule catches, why it hurts, how to fix it, a bad and a
    good manifest, and its upstream references: the same text as docs/rules/ID.md.

    \b
    Examples:
      gpuplane explain gpu-fractional-quantity
      gpuplane explain gang-scheduling-missing

    \b
    Exit codes: 0 printed, 2 unknown rule id.
    """
    from gpuplane.app import rules as rules_app  # deferred for start-up time
    from gpuplane.app.outcome import CLI, AppError

    try:
        page = rules_app.page(rules_app.find(rule_id, CLI))
    except AppError as exc:
        fail(str(exc))
    if sys.stdout.isatty():
        # a terminal gets the page rendered (headings, code blocks, wrapped to its width);
        # piped, it stays the Markdown source, for a pager, a file or an assistant
        from rich.markdown import Markdown  # for start-up time: only explain on a terminal needs it

        from gpuplane.report.console import make_console

        make_console().print(Markdown(page))
        return
    click.echo(page, nl=False)
