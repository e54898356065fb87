"""Evaluate a ValidatingAdmissionPolicy against one object, as the API server would, with the
`common-expression-language` CEL library plus the Kubernetes functions the policies use.

Only functions of the Kubernetes base CEL environment are registered
(kubernetes/kubernetes ``staging/src/k8s.io/apiserver/pkg/cel/environment/base.go``): the quantity
library (``staging/src/k8s.io/apiserver/pkg/cel/library/quantity.go``, exact arithmetic on the
project's quantity parser) and the cel-go strings extension functions ``join``, ``indexOf``,
``substring``. An expression using anything else fails here as it would fail to compile there.

Admission order (``staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/validating``):
matchConstraints (group, resource, operation), then every matchCondition, then variables in order,
then each validation; a false validation yields its messageExpression. Any evaluation error is
raised: the exported policies must be total on admitted objects, and a test that hits an error has
found a policy that would fall back to its failurePolicy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import Any

import cel
from cel import stdlib

from gpuplane.k8s.quantity import QuantityError, parse_quantity
from gpuplane.policy.cel import RESOURCES

_Q = "__quantity__"
_DECIMAL = re.compile(r"^[+-]?(\d*)(?:\.(\d*))?([eE][+-]?\d+|[kMGTPE]|m|u|n|Ki|Mi|Gi|Ti|Pi|Ei)?$")
_INT64 = 2**63


def _parse(text: str) -> Fraction:
    try:
        return Fraction(parse_quantity(text))
    except (QuantityError, ValueError, TypeError, ZeroDivisionError) as exc:
        raise ValueError(f"quantities must match the regular expression: {text!r}") from exc


def _make(value: Fraction, as_int64: bool) -> dict[str, Any]:
    return {_Q: f"{value.numerator}/{value.denominator}", "int64": as_int64}


def _value(q: Any) -> Fraction:
    if not isinstance(q, dict) or _Q not in q:
        raise TypeError("no such overload")
    num, den = q[_Q].split("/")
    return Fraction(int(num), int(den))


def _fits_int64_without_fraction_digits(text: str, value: Fraction) -> bool:
    """``Quantity.AsInt64()`` succeeds: ``ParseQuantity`` kept an int64Amount of scale >= 0
    (no digits after the point, no milli/micro/nano suffix, no negative exponent; binary
    suffixes only for whole mantissas) and the value fits int64."""
    m = _DECIMAL.match(text.strip())
    if m is None or value.denominator != 1 or not -_INT64 <= value < _INT64:
        return False
    frac, suffix = m.group(2) or "", m.group(3) or ""
    if frac or suffix in ("m", "u", "n"):
        return False
    return not (suffix[:1] in "eE" and suffix and "-" in suffix)


def quantity(text: Any) -> dict[str, Any]:
    if not isinstance(text, str):
        raise TypeError("no such overload")
    value = _parse(text)
    return _make(value, _fits_int64_without_fraction_digits(text, value))


def is_quantity(text: Any) -> bool:
    if not isinstance(text, str):
        raise TypeError("no such overload")
    try:
        _parse(text)
    except ValueError:
        return False
    return True


def _compare(a: Any, b: Any) -> int:
    x, y = _value(a), _value(b)
    return (x > y) - (x < y)


def _arith(a: Any, b: Any, sign: int) -> dict[str, Any]:
    """``add``/``sub`` of a quantity and a quantity or an int (``quantity_add_int`` ...)."""
    if isinstance(b, int) and not isinstance(b, bool):
        b = _make(Fraction(b), True)
    result = _value(a) + sign * _value(b)
    return _make(result, result.denominator == 1 and -_INT64 <= result < _INT64)


def _join(items: Any, sep: str = "") -> str:
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise TypeError("no such overload")
    return sep.join(items)


def context() -> cel.Context:
    ctx = cel.Context()
    for name, fn in {
        "quantity": quantity,
        "isQuantity": is_quantity,
        "isInteger": lambda q: bool(_value(q) is not None and q["int64"]),
        "asApproximateFloat": lambda q: float(_value(q)),
        "compareTo": _compare,
        "isGreaterThan": lambda a, b: _compare(a, b) == 1,
        "isLessThan": lambda a, b: _compare(a, b) == -1,
        "add": lambda a, b: _arith(a, b, 1),
        "sub": lambda a, b: _arith(a, b, -1),
        "join": _join,
        "indexOf": stdlib.EXTENSIONS["strings"]["indexOf"],
        "substring": stdlib.EXTENSIONS["strings"]["substring"],
    }.items():
        ctx.add_function(name, fn)
    return ctx


_CONTEXT = context()


@cache
def program(expression: str) -> cel.Program:
    """Compiled once per expression (the policies share their long fragments)."""
    return cel.compile(expression)


def run(expression: str, ctx: cel.Context) -> Any:
    return program(expression).execute(ctx)


def _group(obj: dict[str, Any]) -> str:
    api = str(obj.get("apiVersion", ""))
    return api.split("/")[0] if "/" in api else ""


@dataclass
class Decision:
    matched: bool
    violations: list[str] = field(default_factory=list)

    @property
    def rejected(self) -> bool:
        return bool(self.violations)


def evaluate(
    policy: dict[str, Any], obj: dict[str, Any], *, operation: str = "CREATE", old: Any = None
) -> Decision:
    spec = policy["spec"]
    resource = RESOURCES.get((_group(obj), str(obj.get("kind"))))
    if not any(
        _group(obj) in rule["apiGroups"] and resource in rule["resources"] and operation in rule["operations"]
        for rule in spec["matchConstraints"]["resourceRules"]
    ):
        return Decision(False)
    ctx = _CONTEXT
    ctx.add_variable("object", obj)
    ctx.add_variable("oldObject", old)
    ctx.add_variable("request", {"operation": operation})
    for cond in spec.get("matchConditions", []):
        if run(cond["expression"], ctx) is not True:
            return Decision(False)
    variables: dict[str, Any] = {}
    for var in spec.get("variables", []):
        ctx.add_variable("variables", variables)
        variables[var["name"]] = run(var["expression"], ctx)
    ctx.add_variable("variables", variables)
    decision = Decision(True)
    for v in spec["validations"]:
        result = run(v["expression"], ctx)
        assert isinstance(result, bool), f"validation is not a bool: {result!r}"
        if not result:
            message = run(v["messageExpression"], ctx)
            assert isinstance(message, str)
            decision.violations.append(message)
    return decision
