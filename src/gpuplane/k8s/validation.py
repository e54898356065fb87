"""The API server's validation of extended resources in a pod spec, with its exact messages.

Why here: a pod the API server rejects never exists, so nothing that models a cluster
(simulate, why-pending on manifests) may place it, and lint reports the same facts as
findings (rules ``gpu-request-without-limit``, ``gpu-request-limit-mismatch``,
``gpu-fractional-quantity``). This module is the one implementation both use:
:func:`container_resource_errors` gives structured errors (which map, which resource, which
check), :func:`extended_resource_errors` renders them as the API prints them.

Upstream: kubernetes/kubernetes ``pkg/apis/core/validation/validation.go``
(``ValidateContainerResourceRequirements``; ``pkg/apis/core/v1/validation/validation.go``
``ValidateResourceRequirements`` is the same walk on v1 types):

- ``limits`` are walked first, then ``requests``; each entry's path is
  ``<container>.resources.<map>[<name>]``.
- For a request of a resource that is not overcommittable (``helper.IsOvercommitAllowed``:
  only native, non-hugepages resources are; every extended resource such as ``nvidia.com/gpu``
  is not): without a limit, ``field.Required(limPath, "Limit must be set for non
  overcommitable resources")``; different from its limit, ``field.Invalid(reqPath,
  request.String(), "must be equal to <name> limit of <limit.String()>")``. ``limPath`` and
  ``reqPath`` are ``<container>.resources.limits`` / ``.requests`` *without* the resource key.
  The `` of <limit>`` part was added by kubernetes/kubernetes#112925 (merged January 2023,
  first released in v1.27); older servers end the message at ``limit``. gpuplane models 1.28+.
- ``ValidateResourceQuantityValue`` (every key of both maps, on the keyed path):
  ``ValidateNonnegativeQuantity`` gives ``Invalid value: "<q>": must be greater than or equal to
  0``; for an integer resource (``helper.IsIntegerResourceName``: extended resources among
  them) ``MilliValue() % 1000 != 0`` gives ``Invalid value: "<q>": must be an integer``.

Defaulting runs before validation (``pkg/apis/core/v1/defaults.go``: a container's missing
request takes its limit), so a fractional limit is reported under ``limits`` *and*
``requests``, as the API does; such errors are marked ``defaulted`` so lint, which points at
written fields, can skip them. Quantities print as ``Quantity.String()`` (``0.5`` ->
``500m``). Go iterates the maps in random order; errors here are in sorted resource order.

The error becomes the API's ``StatusError`` (apimachinery ``errors.NewInvalid``):
``<Kind>[.<group>] "<name>" is invalid: <errors>``, where ``<errors>`` is the one error, or
``[e1, e2, ...]`` (``field.ErrorList.ToAggregate``, duplicates removed).
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache
from typing import Any

from gpuplane.k8s.quantity import QuantityError, format_quantity, milli_value, parse_quantity
from gpuplane.records import FrozenRecord, set_field

MSG_LIMIT_REQUIRED = "Limit must be set for non overcommitable resources"
MSG_NOT_EQUAL = "must be equal to {} limit of {}"
MSG_NOT_INTEGER = "must be an integer"
MSG_NEGATIVE = "must be greater than or equal to 0"

# Kinds of ResourceError.check
LIMIT_REQUIRED = "limit-required"
NOT_EQUAL = "not-equal"
NOT_INTEGER = "not-integer"
NEGATIVE = "negative"

# apimachinery pkg/util/validation/validation.go: IsQualifiedName's name part and
# IsDNS1123Subdomain (used for its prefix part).
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _is_qualified_name(value: str) -> bool:
    """``validation.IsQualifiedName`` returns no error: ``[prefix/]name``, prefix a DNS-1123
    subdomain of at most 253 characters, name at most 63 characters."""
    parts = value.split("/")
    if len(parts) == 2:
        prefix, name = parts
        if not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix):
            return False
    elif len(parts) == 1:
        name = parts[0]
    else:
        return False
    return 0 < len(name) <= 63 and _QUALIFIED_NAME.match(name) is not None


@lru_cache(maxsize=4096)
def is_extended_resource(name: str) -> bool:
    """``helper.IsExtendedResourceName`` (pkg/apis/core/v1/helper/helpers.go).

    Not native (native: no ``/``, or containing ``kubernetes.io/`` — ``IsNativeResource``),
    not a ``requests.`` quota key, and ``requests.<name>`` is a qualified name. Cached: every
    rule and every pod template asks about the same few names.
    """
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return _is_qualified_name("requests." + name)


class ResourceError(FrozenRecord):
    """One field error of a container's extended resources, as the API server reports it.

    ``section`` and ``name`` say which written (or defaulted) entry is at fault: for
    ``LIMIT_REQUIRED`` and ``NOT_EQUAL`` it is the request. ``value`` is the entry's
    ``Quantity.String()``; ``detail`` the API's text after ``Invalid value: "<value>": ``.
    """

    __slots__ = ("check", "defaulted", "detail", "name", "section", "value")
    check: str
    section: str
    name: str
    value: str
    detail: str
    defaulted: bool

    def __init__(
        self, check: str, section: str, name: str, value: str, detail: str, defaulted: bool = False
    ) -> None:
        set_field(self, "check", check)
        set_field(self, "section", section)
        set_field(self, "name", name)
        set_field(self, "value", value)
        set_field(self, "detail", detail)
        set_field(self, "defaulted", defaulted)

    def field(self, container_path: str) -> str:
        """The API's field path: keyed for quantity checks, the bare map for the pairing checks."""
        if self.check == LIMIT_REQUIRED:
            return f"{container_path}.resources.limits"
        if self.check == NOT_EQUAL:
            return f"{container_path}.resources.requests"
        return f"{container_path}.resources.{self.section}[{self.name}]"

    def message(self, container_path: str) -> str:
        """``field.Error.Error()``: ``<field>: Required value: <detail>`` or ``<field>: Invalid value: "<v>": <detail>``."""
        where = self.field(container_path)
        if self.check == LIMIT_REQUIRED:
            return f"{where}: Required value: {self.detail}"
        return f'{where}: Invalid value: "{self.value}": {self.detail}'


def _parsed(raw: Any) -> tuple[Fraction | int, int, str] | None:
    """(exact value, ``MilliValue()``, ``Quantity.String()``) of a manifest value; None when it
    is not a quantity at all (decoding fails before validation: not these checks' job)."""
    # the common spelling (``nvidia.com/gpu: 1`` / ``"2"``) without the full parser: a plain
    # decimal integer is its own value and canonical form (no leading zeros, DecimalSI)
    if type(raw) is int and 0 <= raw < 10**15:
        return raw, raw * 1000, str(raw)
    if type(raw) is str and 0 < len(raw) <= 15 and raw.isascii() and raw.isdigit():
        value = int(raw)
        return value, value * 1000, str(value)
    try:
        amount = parse_quantity(raw)
        milli = milli_value(raw)
    except (QuantityError, ValueError, TypeError):
        return None
    # Quantity.String() keeps the BinarySI format of ``Ki``... input
    return amount, milli, format_quantity(amount, binary=isinstance(raw, str) and raw.endswith("i"))


def _extended(block: Any) -> dict[str, Any]:
    if not isinstance(block, dict):
        return {}
    return {k: v for k, v in block.items() if isinstance(k, str) and is_extended_resource(k)}


def container_resource_errors(container: Any) -> list[ResourceError]:
    """The extended-resource field errors of one container (a manifest dict), in API order:
    limits then requests, each in sorted resource order."""
    resources = container.get("resources") if isinstance(container, dict) else None
    if not isinstance(resources, dict):
        return []
    limits = _extended(resources.get("limits"))
    written = _extended(resources.get("requests"))
    if not limits and not written:
        return []
    requests = {**limits, **written}  # defaulting: a missing request takes the limit
    errors: list[ResourceError] = []
    parsed_limits: dict[str, tuple[Fraction | int, int, str] | None] = {}
    for section, block in (("limits", limits), ("requests", requests)):
        for name in sorted(block):
            parsed = _parsed(block[name])
            if section == "limits":
                parsed_limits[name] = parsed
            if parsed is None:
                continue
            amount, milli, shown = parsed
            defaulted = section == "requests" and name not in written
            if amount < 0:
                errors.append(ResourceError(NEGATIVE, section, name, shown, MSG_NEGATIVE, defaulted))
            if milli % 1000:
                errors.append(ResourceError(NOT_INTEGER, section, name, shown, MSG_NOT_INTEGER, defaulted))
            if section != "requests":
                continue
            if name not in limits:
                errors.append(ResourceError(LIMIT_REQUIRED, section, name, shown, MSG_LIMIT_REQUIRED))
            else:
                limit = parsed_limits.get(name)
                if limit is not None and limit[0] != amount:
                    errors.append(
                        ResourceError(NOT_EQUAL, section, name, shown, MSG_NOT_EQUAL.format(name, limit[2]))
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
    for section in ("containers", "initContainers"):  # ValidatePodSpec: containers, then init
        containers = spec.get(section)
        if not isinstance(containers, list):
            continue
        for i, container in enumerate(containers):
            for error in container_resource_errors(container):
                errors.append(error.message(f"{spec_path}.{section}[{i}]"))
    return list(dict.fromkeys(errors))


def qualified_kind(kind: str, group: str) -> str:
    """``schema.GroupKind.String()``: ``Pod``, ``Deployment.apps``, ``Job.batch``."""
    return f"{kind}.{group}" if group else kind


def invalid_message(kind: str, group: str, name: str, errors: list[str]) -> str:
    """``errors.NewInvalid(...).Error()``: what a client (or a controller's event) shows."""
    body = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return f'{qualified_kind(kind, group)} "{name}" is invalid: {body}'
