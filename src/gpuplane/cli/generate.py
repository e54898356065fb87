"""``gpuplane generate``: render a platform blueprint into validated configuration."""

from __future__ import annotations

import click

from gpuplane.cli.common import fail


@click.command()
@click.argument("blueprint", required=False, type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(file_okay=False), default=None, help="Output folder.")
@click.option(
    "--force",
    is_flag=True,
    help="Write into a non-empty -o folder that an earlier generate did not create (its files are kept).",
)
@click.option("--schema", is_flag=True, help="Print the blueprint JSON Schema and exit.")
@click.option("--explain", "explain_decisions", is_flag=True, help="Print each design decision and why.")
@click.option(
    "--crds",
    "crds_dir",
    type=click.Path(file_okay=False, exists=True),
    default=None,
    help="Folder of upstream CRDs: also validate custom resources against their schemas.",
)
def generate(
    blueprint: str | None,
    output: str | None,
    force: bool,
    schema: bool,
    explain_decisions: bool,
    crds_dir: str | None,
) -> None:
    """Render a platform BLUEPRINT (YAML) into validated manifests and Helm values.

    The blueprint says what the platform needs (cloud, GPU pools, sharing,
    scheduling, serving); generate checks it for contradictions, then writes
    the Helm values, node pools, quotas, queues and policies to a folder,
    each object validated against the Kubernetes schemas (and CRD schemas
    with --crds). --explain prints every design decision and why.

    \b
    Examples:
      gpuplane generate examples/blueprints/eks-training.yaml -o out/
      gpuplane generate examples/blueprints/gke-inference.yaml --explain
      gpuplane generate examples/blueprints/onprem-dgx-mig.yaml -o out/ --crds path/to/crds
      gpuplane generate --schema

    \b
    Exit codes: 0 written, 1 generated objects failed validation, 2 refused
    blueprint or unusable input.
    """
    import json  # deferred for start-up time: only generate reads it

    from gpuplane.generate.blueprint import json_schema  # deferred for start-up time

    if schema:
        click.echo(json.dumps(json_schema(), indent=2, sort_keys=True))
        return
    if blueprint is None:
        fail("missing BLUEPRINT (or use --schema)")
    if output is None and not explain_decisions:
        fail("give -o DIR for the output folder (or --explain to only print the decisions)")
    from gpuplane.app import generate as generate_app  # deferred for start-up time
    from gpuplane.app.outcome import AppError
    from gpuplane.generate.explain import format_decisions

    try:
        result = generate_app.render(generate_app.GenerateRequest(blueprint, crds_dir=crds_dir))
    except generate_app.BlueprintRefused as exc:
        if not exc.unreadable:  # the file itself: one line, which already names it
            for problem in exc.problems:
                click.echo(f"{blueprint}: {problem}", err=True)
        fail(str(exc))
    if result.schema_errors:
        for err in result.schema_errors:
            click.echo(f"gpuplane: generated object invalid: {err}", err=True)
        fail("generated configuration failed schema validation; nothing written", code=1)
    if explain_decisions:
        click.echo(format_decisions(result.bundle.decisions))
    if output is not None:
        try:
            paths = generate_app.write(result, output, "-o", force=force)
        except AppError as exc:
            fail(str(exc))
        hint = "no CRD for them in --crds" if crds_dir else "give --crds"
        unchecked = (
            f"; not schema-checked ({hint}): {', '.join(result.unchecked_kinds)}"
            if result.unchecked_kinds
            else ""
        )
        click.echo(f"wrote {len(paths)} files to {output}{unchecked}", err=True)
