"""The CEL environment of DRA device selectors, over the ``common-expression-language`` library.

Upstream: kubernetes/kubernetes staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go
(``DeviceMatches``): one variable ``device`` with ``driver`` (string), ``attributes`` and
``capacity`` (maps keyed by domain, then by attribute / capacity name; a name without a
``domain/`` prefix belongs to the driver's domain), the Kubernetes ``semver`` and ``quantity``
libraries, and the result must be a bool. An attribute holds one of ``int``, ``bool``,
``string``, ``version``; a capacity holds a quantity.

How values map onto the library: a version is the list ``[major, minor, patch, release]``
(``release`` 1 without a pre-release part, 0 with one, so ``1.0.0-rc1`` sorts before
``1.0.0``; pre-release identifiers are not compared further); a quantity is its milli-value
(an int, ``Quantity.MilliValue``). The receiver-style helpers (``compareTo``, ``isGreaterThan``,
``isLessThan``, ``asInteger``, ``asApproximateFloat``, ``major``/``minor``/``patch``) are
registered as functions, which the library also calls as methods.

Outcomes: ``True``/``False``; a runtime error (most often a missing attribute: CEL map
lookups fail with ``no such key``) is an :class:`CelRuntimeError`, which upstream's allocator
turns into a Filter error; an expression this library cannot parse (for example the optional
``.?`` syntax, which it does not support) is ``None``: not evaluated, and the caller treats
the device as matching, as gpuplane did before it evaluated CEL.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from gpuplane.k8s.quantity import milli_value

_SEMVER = re.compile(r"^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")


class CelRuntimeError(Exception):
    """A selector failed while evaluating (``CEL runtime error: <detail>`` upstream)."""


def semver(text: str) -> list[int]:
    match = _SEMVER.match(str(text).strip())
    if match is None:
        raise ValueError(f"invalid semver: {text}")
    major, minor, patch, pre, _ = match.groups()
    return [int(major), int(minor or 0), int(patch or 0), 0 if pre else 1]


def quantity(text: str) -> int:
    return milli_value(str(text))


def _compare(a: Any, b: Any) -> int:
    return (a > b) - (a < b)


def _functions() -> dict[str, Any]:
    return {
        "semver": semver,
        "quantity": quantity,
        "isSemver": lambda s: _SEMVER.match(str(s).strip()) is not None,
        "isQuantity": _is_quantity,
        "compareTo": _compare,
        "isGreaterThan": lambda a, b: a > b,
        "isLessThan": lambda a, b: a < b,
        "asInteger": lambda q: q // 1000,
        "asApproximateFloat": lambda q: q / 1000,
        "major": lambda v: v[0],
        "minor": lambda v: v[1],
        "patch": lambda v: v[2],
    }


def _is_quantity(text: str) -> bool:
    try:
        milli_value(str(text))
    except (ValueError, TypeError):
        return False
    return True


def _attribute_value(raw: object) -> object:
    if not isinstance(raw, dict):
        return None
    for key in ("int", "bool", "string"):
        if key in raw:
            return raw[key]
    if "version" in raw:
        try:
            return semver(str(raw["version"]))
        except ValueError:
            return None
    return None


def _qualified(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


def device_variable(driver: str, device: dict[str, Any]) -> dict[str, Any]:
    """The ``device`` variable for one ResourceSlice device (v1 flat or v1beta1 ``basic``)."""
    basic = device.get("basic")
    body: dict[str, Any] = basic if isinstance(basic, dict) else device
    attributes: dict[str, dict[str, object]] = {}
    for name, raw in (body.get("attributes") or {}).items():
        value = _attribute_value(raw)
        if value is not None:
            domain, ident = _qualified(str(name), driver)
            attributes.setdefault(domain, {})[ident] = value
    capacity: dict[str, dict[str, object]] = {}
    for name, raw in (body.get("capacity") or {}).items():
        amount = raw.get("value") if isinstance(raw, dict) else raw
        try:
            parsed = milli_value(str(amount))
        except (ValueError, TypeError):
            continue
        domain, ident = _qualified(str(name), driver)
        capacity.setdefault(domain, {})[ident] = parsed
    return {"driver": driver, "attributes": attributes, "capacity": capacity}


@lru_cache(maxsize=4096)
def _program(expression: str) -> Any:
    import cel  # start-up time: the CEL library loads only when a DRA pod is evaluated

    try:
        return cel.compile(expression)
    except ValueError:
        return None


def matches(expression: str, device: dict[str, Any]) -> bool | None:
    """Does ``device`` (a :func:`device_variable`) satisfy the selector? None: not evaluable."""
    import cel  # start-up time: see _program

    program = _program(expression)
    if program is None:
        return None
    context = cel.Context(variables={"device": device}, functions=_functions())
    try:
        result = program.execute(context)
    except KeyError as exc:
        raise CelRuntimeError(f"no such key: {exc.args[0] if exc.args else exc}") from None
    except (RuntimeError, TypeError, ValueError) as exc:
        raise CelRuntimeError(str(exc)) from None
    if not isinstance(result, bool):
        raise CelRuntimeError(f"expression result must be bool, got {type(result).__name__}")
    return result
