"""Kubernetes ``resource.Quantity``: exact parsing, rounding and canonical formatting.

Mirrors ``k8s.io/apimachinery/pkg/api/resource`` (``quantity.go``: ``parseQuantityString``,
``ParseQuantity``, ``Value``, ``MilliValue``, ``CanonicalizeBytes``; ``suffix.go``:
``interpret``). Why not floats: the API never uses floating point for quantities, and a
scheduler model that says "fits" where kube-scheduler says ``Insufficient cpu`` is worse
than useless. Why integers of nano-units internally: every quantity the API accepts is
rounded *up* to a multiple of 10^-9 at parse time (``amount.Round(amount, Nano, RoundUp)``),
so an ``int`` count of nano-units is exact, and summing ints is much faster than summing
``Fraction``s across 150,000 pods.

Upstream behaviours kept on purpose (they surprise people, and the API accepts them):

* the number part may be empty: ``"Gi"``, ``"m"``, ``"+"``, ``"."`` and ``"-"`` all parse as 0,
  but ``"Ei"``, ``"Pi"`` and ``"e-10"`` fail with ``ErrNumeric`` because they take the slow
  path in ``ParseQuantity``;
* ``"1."`` and ``"1.G"`` are valid; ``"E"`` alone is the exa suffix, ``"1e"`` is not;
* values finer than 1n are rounded away from zero (``"0.1n"`` -> 1n);
* BinarySI values are capped at 2^63-1 in magnitude (``"9Ei"`` -> 9223372036854775807);
* no surrounding whitespace (``ParseQuantity``; only the JSON decoder trims).

One deliberate difference: an exponent that would make the value astronomically large
(above 10^4000) is rejected with a gpuplane message instead of allocating a huge integer;
upstream rejects exponents outside the int32 range (``TestInterpretExponentInt32Bounds``).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

__all__ = [
    "ERR_FORMAT_WRONG",
    "ERR_NUMERIC",
    "ERR_SUFFIX",
    "NANO",
    "QuantityError",
    "format_quantity",
    "is_integer",
    "milli_value",
    "nano_value",
    "parse_quantity",
    "saturate_int64",
    "scaled_ceil",
    "value",
]

# The split regular expression, verbatim from quantity.go (splitREString).
_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
# Error texts, verbatim from quantity.go (ErrFormatWrong, ErrNumeric, ErrSuffix).
ERR_FORMAT_WRONG = "quantities must match the regular expression '" + _SPLIT_RE + "'"
ERR_NUMERIC = "unable to parse numeric part of quantity"
ERR_SUFFIX = "unable to parse quantity's suffix"

NANO = 10**9
_MILLI_PER_NANO = 10**6
_MAX_INT64 = (1 << 63) - 1
_MIN_INT64 = -(1 << 63)
_MAX_INT32 = (1 << 31) - 1
_MAX_BINARY_NANO = _MAX_INT64 * NANO
# Past this decimal exponent (in nano-units) gpuplane refuses to build the integer.
_MAX_NANO_EXPONENT = 4000

_DIGITS = frozenset("0123456789")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
# strconv.ParseInt(s, 10, 64) syntax: optional sign, decimal digits, nothing else.
_GO_INT_RE = re.compile(r"[+-]?[0-9]+\Z")

# suffix.go: decimal table first, then binary; (base, exponent, is_binary).
_SUFFIXES: dict[str, tuple[int, int, bool]] = {
    "": (10, 0, False),
    "n": (10, -9, False),
    "u": (10, -6, False),
    "m": (10, -3, False),
    "k": (10, 3, False),
    "M": (10, 6, False),
    "G": (10, 9, False),
    "T": (10, 12, False),
    "P": (10, 15, False),
    "E": (10, 18, False),
    "Ki": (2, 10, True),
    "Mi": (2, 20, True),
    "Gi": (2, 30, True),
    "Ti": (2, 40, True),
    "Pi": (2, 50, True),
    "Ei": (2, 60, True),
}
_DECIMAL_SUFFIX_BY_EXP = {e: s for s, (b, e, _) in _SUFFIXES.items() if b == 10}
_BINARY_SUFFIX_BY_POW = {e // 10: s for s, (b, e, _) in _SUFFIXES.items() if b == 2}


class QuantityError(ValueError):
    """A string the API server would refuse as a ``resource.Quantity``.

    The message is upstream's (``ErrFormatWrong``, ``ErrNumeric`` or ``ErrSuffix``) so a
    finding can quote exactly what ``kubectl apply`` would print.
    """


def _scan(s: str) -> tuple[bool, str, str, str, bool]:
    """Split ``s`` like upstream ``parseQuantityString``.

    Returns ``(positive, num, denom, suffix, has_digit)``; ``has_digit`` tells whether the
    numeric text (sign, digits, dot) contains a digit, which decides ``ErrNumeric`` later.
    """
    end = len(s)
    pos = 0
    positive = True
    if s[0] == "-":
        positive = False
        pos = 1
    elif s[0] == "+":
        pos = 1
    start = pos
    while pos < end and s[pos] == "0":
        pos += 1
    if pos >= end:  # only sign and zeros: upstream returns the value 0 right here
        return positive, "0", "", "", pos > start
    num_start = pos
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    num = s[num_start:pos] or "0"
    has_digit = pos > start
    denom = ""
    if pos < end and s[pos] == ".":
        pos += 1
        d_start = pos
        while pos < end and s[pos] in _DIGITS:
            pos += 1
        denom = s[d_start:pos]
        has_digit = has_digit or bool(denom)
    suffix_start = pos
    while pos < end and s[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and s[pos] in "+-":
        pos += 1
    while pos < end and s[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise QuantityError(ERR_FORMAT_WRONG)
    return positive, num, denom, s[suffix_start:], has_digit


def _interpret(suffix: str) -> tuple[int, int, bool, bool]:
    """``(base, exponent, is_binary, is_decimal_exponent)`` for a suffix, like ``interpret``."""
    found = _SUFFIXES.get(suffix)
    if found is not None:
        base, exp, binary = found
        return base, exp, binary, False
    if len(suffix) > 1 and suffix[0] in "eE" and _GO_INT_RE.match(suffix, 1):
        exp = int(suffix[1:])
        if -_MAX_INT32 <= exp <= _MAX_INT32:
            return 10, exp, False, True
    raise QuantityError(ERR_SUFFIX)


def _ceil_div(a: int, b: int) -> int:
    """``a / b`` rounded away from zero (``b > 0``), the way upstream rounds quantities."""
    q, r = divmod(abs(a), b)
    if r:
        q += 1
    return q if a >= 0 else -q


def _parse_str(s: str) -> int:
    """Exact value of ``s`` in nano-units, or :class:`QuantityError` (see module docs)."""
    if not s:
        raise QuantityError(ERR_FORMAT_WRONG)
    if s == "0":
        return 0
    positive, num, denom, suffix, has_digit = _scan(s)
    _, exp, binary, _ = _interpret(suffix)
    ndenom = len(denom)
    mantissa = int(num + denom) if denom else int(num)
    if binary:
        fast = ndenom == 0 and 15 - len(num) - (exp * 3 // 10) - 1 >= 0
    else:
        fast = 18 - len(num) - ndenom >= 0 and exp - ndenom >= -9
    if not fast and not has_digit:
        # Slow path: inf.Dec.SetString on a numeric text without digits fails.
        raise QuantityError(ERR_NUMERIC)
    if binary:
        nano = _ceil_div(mantissa * NANO << exp, 10**ndenom)
        nano = min(nano, _MAX_BINARY_NANO)
    else:
        shift = exp - ndenom + 9  # value = mantissa * 10**(shift) nano-units
        if shift >= 0:
            if shift > _MAX_NANO_EXPONENT and mantissa:
                raise QuantityError(f"quantity {s!r} is too large for gpuplane to evaluate")
            nano = mantissa * 10**shift
        elif mantissa == 0:
            nano = 0
        elif -shift > len(str(mantissa)):
            nano = 1  # far below 1n: rounds up to 1n
        else:
            nano = _ceil_div(mantissa, 10**-shift)
    return nano if positive else -nano


@lru_cache(maxsize=65536)
def _parse_str_cached(s: str) -> int:
    return _parse_str(s)


def nano_value(q: str | int | float | Fraction) -> int:
    """The exact quantity in units of 10^-9: the representation engines should sum.

    Accepts the string form, YAML numbers (an ``int``/``float`` is read as its decimal
    text, as the API's JSON decoder does), or a :class:`~fractions.Fraction` (rounded up
    to 1n like the API). ``bool`` is rejected: YAML ``true`` is not a quantity.
    """
    if type(q) is str:
        return _parse_str_cached(q)
    if isinstance(q, bool):
        raise QuantityError(ERR_FORMAT_WRONG)
    if isinstance(q, int):
        return q * NANO
    if isinstance(q, float):
        if not math.isfinite(q):
            raise QuantityError(ERR_FORMAT_WRONG)
        return _parse_str_cached(repr(q))
    if isinstance(q, Fraction):
        return _ceil_div(q.numerator * NANO, q.denominator)
    if isinstance(q, str):  # str subclasses
        return _parse_str_cached(str(q))
    raise QuantityError(ERR_FORMAT_WRONG)


def parse_quantity(value: str | int | float) -> Fraction:
    """Parse like ``resource.ParseQuantity``; the exact value as a :class:`Fraction`.

    Raises :class:`QuantityError` with upstream's message for anything the API rejects.
    """
    return Fraction(nano_value(value), NANO)


def saturate_int64(amount: int) -> int:
    """``amount`` clamped to Go's int64 range, where every ``Quantity`` accessor answers.

    ``Quantity.Value``/``MilliValue``/``ScaledValue`` return an ``int64``: a quantity outside
    that range saturates to the rail of its sign (apimachinery ``pkg/api/resource/math.go``:
    ``positiveScaleInt64`` "saturates to the int64 rail matching base's sign", and the
    ``MaxMilliValue`` doc: "Value saturates for a quantity outside int64"). Older releases
    let the ``inf.Dec`` path wrap instead (``scale_int.go`` ``scaledValue``: "The final result
    might overflow"); the saturating answer is the one a number can be trusted with, and it
    keeps every consumer (numpy int64 matrices, sums) free of ``OverflowError``.
    """
    if amount > _MAX_INT64:
        return _MAX_INT64
    if amount < _MIN_INT64:
        return _MIN_INT64
    return amount


def scaled_ceil(q: str | int | float | Fraction, scale: int) -> int:
    """``Quantity.ScaledValue``: ``q / 10**scale`` rounded away from zero, int64-saturated."""
    nano = nano_value(q)
    shift = scale + 9
    if shift <= 0:
        return saturate_int64(nano * 10**-shift)
    return saturate_int64(_ceil_div(nano, 10**shift))


def value(q: str | int | float | Fraction) -> int:
    """``Quantity.Value()``: the integer value rounded away from zero (``"1.5"`` -> 2),
    saturated to int64 like upstream (:func:`saturate_int64`)."""
    if type(q) is int:
        return saturate_int64(q)
    return saturate_int64(_ceil_div(nano_value(q), NANO))


def milli_value(q: str | int | float | Fraction) -> int:
    """``Quantity.MilliValue()``: value * 1000, rounded away from zero (``"0.1m"`` -> 1),
    saturated to int64 like upstream (:func:`saturate_int64`)."""
    if type(q) is int:
        return saturate_int64(q * 1000)
    return saturate_int64(_ceil_div(nano_value(q), _MILLI_PER_NANO))


def is_integer(q: str | int | float | Fraction) -> bool:
    """Whether the quantity is a whole number (device-plugin resources must be)."""
    return nano_value(q) % NANO == 0


def _format_decimal(nano: int) -> str:
    """DecimalSI canonical form of a non-negative nano amount: largest exponent, no fraction."""
    exp = -9
    mantissa = nano
    while mantissa and mantissa % 1000 == 0:
        mantissa //= 1000
        exp += 3
    suffix = _DECIMAL_SUFFIX_BY_EXP.get(exp)
    if suffix is None:  # beyond "E": upstream falls back to exponent notation ("1e21")
        return f"{mantissa}e{exp}"
    return f"{mantissa}{suffix}"


def format_quantity(amount: int | Fraction, binary: bool = False, milli: bool = False) -> str:
    """A canonical quantity string, as ``Quantity.String()`` would print it.

    ``amount`` is in base units (bytes, cores, devices), or in thousandths when
    ``milli=True`` (``format_quantity(1500, milli=True) == "1500m"``). ``binary=True``
    asks for the BinarySI form (``1073741824 -> "1Gi"``); like upstream it falls back to
    the decimal form for magnitudes below 1024, for fractions and past ``Ei``.
    Fractions finer than 1n are rounded away from zero first, as parsing would.
    """
    if milli:
        amount = Fraction(amount, 1000)
    if isinstance(amount, Fraction):
        nano = _ceil_div(amount.numerator * NANO, amount.denominator)
    else:
        nano = amount * NANO
    if nano == 0:
        return "0"
    sign = "-" if nano < 0 else ""
    nano = abs(nano)
    if binary and nano >= 1024 * NANO and nano % NANO == 0:
        whole = nano // NANO
        power = 0
        while whole % 1024 == 0:
            whole //= 1024
            power += 1
        suffix = _BINARY_SUFFIX_BY_POW.get(power) if power else ""
        if suffix is not None:
            return f"{sign}{whole}{suffix}"
    return sign + _format_decimal(nano)
