"""``gpuplane policy``: lint rules as in-cluster guardrails (ValidatingAdmissionPolicy)."""

from __future__ import annotations

from typing import Any

import click

from gpuplane.cli.common import fail, format_option, write_output


@click.group()
def policy() -> None:
    """In-cluster guardrails: lint rules as ValidatingAdmissionPolicies.

    The API server evaluates the policies' CEL itself (Kubernetes 1.30+,
    admissionregistration.k8s.io/v1): no webhook to run. Only rules that the
    admitted object alone decides are exported; `gpuplane policy list` says
    which, and why the others are not.

    \b
    Examples:
      gpuplane policy export | kubectl apply -f -
      gpuplane policy export --rules gpu-fractional-quantity,quota-gpu-invalid-key -o guardrails.yaml
      gpuplane policy list

    \b
    Exit codes: 0 done, 2 unknown or non-exportable rule id, unwritable -o.
    """


@policy.command()
@click.option(
    "--rules",
    "rule_list",
    default=None,
    metavar="ID[,ID...]",
    help="Export only these rules (default: every exportable rule).",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Write the YAML here.")
def export(rule_list: str | None, output: str | None) -> None:
    """Write ValidatingAdmissionPolicy + Binding objects for exportable rules.

    One policy per rule: error rules deny the request (validationActions
    Deny), warning rules admit it with a warning kubectl prints (Warn). Each
    message starts with the rule id and ends with its fix. Pods owned by a
    controller are skipped (the controller object was checked), and an
    UPDATE that keeps the spec is not judged again. failurePolicy is Ignore:
    an evaluation error admits the object.

    \b
    Examples:
      gpuplane policy export | kubectl apply -f -
      gpuplane policy export --rules gpu-request-without-limit -o vap.yaml

    \b
    Exit codes: 0 written, 2 unknown or non-exportable rule id, unwritable -o.
    """
    from gpuplane.policy.export import export_objects, to_yaml  # deferred for start-up time

    ids = [r.strip() for r in rule_list.split(",") if r.strip()] if rule_list is not None else None
    if ids is not None and not ids:
        fail("--rules: name at least one rule id")
    try:
        objects = export_objects(ids)
    except KeyError as exc:
        fail(f"--rules: {_why_not(str(exc.args[0]).split(', '))}")
    write_output(to_yaml(objects), output, f"{len(objects) // 2} policies")


def _why_not(ids: list[str]) -> str:
    from gpuplane.policy.catalog import reason_not_exported  # deferred for start-up time
    from gpuplane.rule_catalog import all_rules

    metas = {m.id: m for m in all_rules()}
    parts = []
    for rule_id in ids:
        meta = metas.get(rule_id)
        if meta is None:
            parts.append(f"{rule_id} is not a rule id (see gpuplane rules)")
        else:
            parts.append(
                f"{rule_id} cannot be exported: {reason_not_exported(meta.id, meta.category, meta.context)}"
            )
    return "; ".join(parts)


@policy.command(name="list")
@format_option("text", "json")
def list_policies(fmt: str) -> None:
    """List which rules export as policies (and their action) and why the others do not.

    \b
    Examples:
      gpuplane policy list
      gpuplane policy list -f json

    \b
    Exit codes: 0 always.
    """
    from gpuplane.policy.catalog import EXPORTED, reason_not_exported  # deferred for start-up time
    from gpuplane.policy.export import action_of, policies_for
    from gpuplane.rule_catalog import all_rules

    rows: list[dict[str, Any]] = []
    for meta in all_rules():
        rule = EXPORTED.get(meta.id)
        if rule is not None:
            actions = sorted({action_of(c.severity) for c in rule.checks})
            names = [p["metadata"]["name"] for p, _b in policies_for(rule)]
            rows.append(
                {"rule": meta.id, "exported": True, "actions": actions, "policies": names, "reason": ""}
            )
        else:
            reason = reason_not_exported(meta.id, meta.category, meta.context)
            rows.append({"rule": meta.id, "exported": False, "actions": [], "policies": [], "reason": reason})
    if fmt == "json":
        from gpuplane.cli.common import emit_json  # deferred for start-up time

        emit_json(rows)
        return
    width = max(len(r["rule"]) for r in rows)
    click.echo("Exported (gpuplane policy export):")
    for r in rows:
        if r["exported"]:
            click.echo(f"  {r['rule']:<{width}}  {'+'.join(r['actions'])}")
    click.echo("\nNot exported:")
    for r in rows:
        if not r["exported"]:
            click.echo(f"  {r['rule']:<{width}}  {r['reason']}")
