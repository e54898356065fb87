"""The API server's validation of extended resources in a pod spec, with its exact messages.

Why here: a pod the API server rejects never exists, so nothing that models a cluster
(simulate, why-pending on manifests) may place it; lint reports the same facts as findings.
One function gives every engine the API's own words.

Upstream: kubernetes/kubernetes ``pkg/apis/core/validation/validation.go``:

- ``ValidateResourceRequirements`` walks ``limits`` then ``requests`` of each container. For a
  resource that is not overcommittable (``helper.IsOvercommitAllowed``: only native,
  non-hugepages resources are; every extended resource such as ``nvidia.com/gpu`` is not):
  a request without a limit gives ``field.Required(<path>.limits, "Limit must be set for non
  overcommitable resources")``; a request different from its limit gives
  ``field.Invalid(<path>.requests, "<request>", "must be equal to <name> limit of <limit>")``
  (the ``of <limit>`` part since kubernetes/kubernetes#112925, v1.27; gpuplane words 1.28+).
- ``ValidateResourceQuantityValue`` (every key of both maps): a negative quantity gives
  ``Invalid value: "<q>": must be greater than or equal to 0``; for an integer resource
  (``IsIntegerResourceName``: extended resources among them) a value with a fraction gives
  ``field.Invalid(<path>.limits[<name>], <q>, "must be an integer")``.

Defaulting runs before validation (``pkg/apis/core/v1/defaults.go``: a container's missing
request takes its limit), so a fractional limit is reported under ``limits`` *and*
``requests``, as the API does. Quantities print as ``Quantity.String()`` (``0.5`` ->
``500m``). Go iterates the maps in random order; errors here are in sorted resource order.

The error becomes the API's ``StatusError`` (apimachinery ``errors.NewInvalid``):
``<Kind>[.<group>] "<name>" is invalid: <errors>``, where ``<errors>`` is the one error, or
``[e1, e2, ...]`` (``field.ErrorList.ToAggregate``, duplicates removed).
"""

from __future__ import annotations

from typing import Any

from gpuplane.k8s.quantity import QuantityError, format_quantity, parse_quantity

MSG_LIMIT_REQUIRED = "Limit must be set for non overcommitable resources"
MSG_NOT_EQUAL = "must be equal to {} limit of {}"
MSG_NOT_INTEGER = "must be an integer"
MSG_NEGATIVE = "must be greater than or equal to 0"


def is_extended_resource(name: str) -> bool:
    """``IsExtendedResourceName`` (pkg/apis/core/helper/helpers.go): a domain-qualified name
    outside ``kubernetes.io`` (and its subdomains) that is not a ``requests.`` quota key."""
    if "/" not in name or name.startswith("requests."):
        return False
    domain = name.split("/", 1)[0]
    return not (domain == "kubernetes.io" or domain.endswith(".kubernetes.io"))


def _quantity_string(raw: Any) -> str:
    """``Quantity.String()`` of a manifest value: canonical, BinarySI kept for ``Ki``... input."""
    value = parse_quantity(raw)
    return format_quantity(value, binary=isinstance(raw, str) and raw.endswith("i"))


def _container_errors(container: dict[str, Any], path: str) -> list[str]:
    resources = container.get("resources")
    if not isinstance(resources, dict):
        return []
    limits = resources.get("limits") if isinstance(resources.get("limits"), dict) else {}
    requests = resources.get("requests") if isinstance(resources.get("requests"), dict) else {}
    limits = {str(k): v for k, v in limits.items() if is_extended_resource(str(k))}
    requests = {str(k): v for k, v in requests.items() if is_extended_resource(str(k))}
    for name, value in limits.items():  # defaulting: a missing request takes the limit
        requests.setdefault(name, value)
    errors: list[str] = []
    parsed: dict[tuple[str, str], Any] = {}
    for section, block in (("limits", limits), ("requests", requests)):
        for name in sorted(block):
            try:
                amount = parse_quantity(block[name])
                shown = _quantity_string(block[name])
            except (QuantityError, ValueError, TypeError):
                continue  # not a quantity at all: decoding fails earlier, not this check's job
            parsed[(section, name)] = (amount, shown)
            where = f"{path}.resources.{section}[{name}]"
            if amount < 0:
                errors.append(f'{where}: Invalid value: "{shown}": {MSG_NEGATIVE}')
            if amount.denominator != 1:
                errors.append(f'{where}: Invalid value: "{shown}": {MSG_NOT_INTEGER}')
            if section == "requests":
                limit = parsed.get(("limits", name))
                if name not in limits:
                    errors.append(f"{path}.resources.limits: Required value: {MSG_LIMIT_REQUIRED}")
                elif limit is not None and limit[0] != amount:
                    errors.append(
                        f'{path}.resources.requests: Invalid value: "{shown}": '
                        + MSG_NOT_EQUAL.format(name, limit[1])
                    )
    return errors


def extended_resource_errors(spec: dict[str, Any], spec_path: str = "spec") -> list[str]:
    """The field errors of a pod spec's extended resources, in the API's words, deduplicated.

    ``spec_path`` is where the pod spec sits in the object the API validates (``spec`` for a
    Pod, ``spec.template.spec`` for a Deployment or Job, ...).
    """
    if not isinstance(spec, dict):
        return []
    errors: list[str] = []
    for field in ("containers", "initContainers"):  # ValidatePodSpec: containers, then init
        containers = spec.get(field)
        if not isinstance(containers, list):
            continue
        for i, container in enumerate(containers):
            if isinstance(container, dict):
                errors.extend(_container_errors(container, f"{spec_path}.{field}[{i}]"))
    seen: set[str] = set()
    unique = []
    for error in errors:
        if error not in seen:
            seen.add(error)
            unique.append(error)
    return unique


def qualified_kind(kind: str, group: str) -> str:
    """``schema.GroupKind.String()``: ``Pod``, ``Deployment.apps``, ``Job.batch``."""
    return f"{kind}.{group}" if group else kind


def invalid_message(kind: str, group: str, name: str, errors: list[str]) -> str:
    """``errors.NewInvalid(...).Error()``: what a client (or a controller's event) shows."""
    body = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return f'{qualified_kind(kind, group)} "{name}" is invalid: {body}'
