"""resource.Quantity parsing, rounding and formatting.

Cases are taken from kubernetes/kubernetes
``staging/src/k8s.io/apimachinery/pkg/api/resource/quantity_test.go``
(TestQuantityParse table and its ``invalid`` list, TestQuantityString,
TestQuantityParseEmit, TestInterpretExponentInt32Bounds) and the behaviour of
``parseQuantityString`` / ``ParseQuantity`` in ``quantity.go``.
"""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuplane.k8s.quantity import (
    ERR_FORMAT_WRONG,
    ERR_NUMERIC,
    ERR_SUFFIX,
    QuantityError,
    format_quantity,
    is_integer,
    milli_value,
    nano_value,
    parse_quantity,
    value,
)

F = Fraction
KI, MI, GI, TI, PI, EI = (1024**i for i in range(1, 7))

# (input, exact value) from TestQuantityParse
PARSE_TABLE = [
    ("0", 0),
    ("0n", 0),
    ("0u", 0),
    ("0m", 0),
    ("0Ki", 0),
    ("0k", 0),
    ("0Mi", 0),
    ("0M", 0),
    ("0Gi", 0),
    ("0G", 0),
    ("0Ti", 0),
    ("0T", 0),
    ("1", 1),
    ("1Ki", KI),
    ("8Ki", 8 * KI),
    ("7Mi", 7 * MI),
    ("6Gi", 6 * GI),
    ("5Ti", 5 * TI),
    ("4Pi", 4 * PI),
    ("3Ei", 3 * EI),
    ("10Ti", 10 * TI),
    ("100Ti", 100 * TI),
    ("5n", F(5, 10**9)),
    ("4u", F(4, 10**6)),
    ("3m", F(3, 1000)),
    ("9", 9),
    ("8k", 8000),
    ("50k", 50000),
    ("7M", 7 * 10**6),
    ("6G", 6 * 10**9),
    ("5T", 5 * 10**12),
    ("40T", 4 * 10**13),
    ("300T", 3 * 10**14),
    ("2P", 2 * 10**15),
    ("1E", 10**18),
    ("1E-3", F(1, 1000)),
    ("1e3", 1000),
    ("1E6", 10**6),
    ("1e9", 10**9),
    ("1E12", 10**12),
    ("1e15", 10**15),
    ("1E18", 10**18),
    ("1e14", 10**14),
    ("1e13", 10**13),
    ("100.035k", 100035),
    ("0.001", F(1, 1000)),
    ("0.0005k", F(1, 2)),
    ("0.005", F(5, 1000)),
    ("0.05", F(5, 100)),
    ("0.5", F(1, 2)),
    ("0.00050k", F(1, 2)),
    ("0.00500", F(5, 1000)),
    ("0.05000", F(5, 100)),
    ("0.50000", F(1, 2)),
    ("0.5e0", F(1, 2)),
    ("0.5e-1", F(5, 100)),
    ("0.5e-2", F(5, 1000)),
    ("10.035M", 10035000),
    ("1.2e3", 1200),
    ("1.3E+6", 1300000),
    ("1.40e9", 1400000000),
    ("1.53E12", 153 * 10**10),
    ("1.6e15", 16 * 10**14),
    ("1.7E18", 17 * 10**17),
    ("9.01", F(901, 100)),
    ("8.1k", 8100),
    ("7.123456M", 7123456),
    ("6.987654321G", 6987654321),
    ("5.444T", 5444 * 10**9),
    ("40.1T", 401 * 10**11),
    ("300.2T", 3002 * 10**11),
    ("2.5P", 25 * 10**14),
    ("1.01E", 101 * 10**16),
    # things that saturate / round (up, to 1n)
    ("3.001n", F(4, 10**9)),
    ("1.1E-9", F(2, 10**9)),
    ("0.0000000001", F(1, 10**9)),
    ("0.0000000005", F(1, 10**9)),
    ("0.00000000050", F(1, 10**9)),
    ("0.5e-9", F(1, 10**9)),
    ("0.9n", F(1, 10**9)),
    ("0.00000012345", F(124, 10**9)),
    ("0.00000012354", F(124, 10**9)),
    ("9Ei", 2**63 - 1),
    ("9223372036854775807Ki", 2**63 - 1),
    ("12E", 12 * 10**18),
    # fractional binary
    ("100.035Ki", F(10243584, 100)),
    ("0.5Mi", MI // 2),
    ("0.05Gi", F(536870912, 10)),
    ("0.025Ti", F(274877906944, 10)),
    # "things written by trolls"
    ("0.000000000001Ki", F(2, 10**9)),
    (".001", F(1, 1000)),
    (".0001k", F(1, 10)),
    ("1.", 1),
    ("1.G", 10**9),
]


@pytest.mark.parametrize(("text", "expected"), PARSE_TABLE)
def test_parse_table(text: str, expected: int | Fraction) -> None:
    assert parse_quantity(text) == expected
    assert parse_quantity("+" + text) == expected
    assert parse_quantity("-" + text) == -expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # TestQuantityParse "invalid"
        ("1.1.M", ERR_FORMAT_WRONG),
        ("1+1.0M", ERR_FORMAT_WRONG),
        ("0.1mi", ERR_SUFFIX),
        ("0.1am", ERR_FORMAT_WRONG),
        ("aoeu", ERR_FORMAT_WRONG),
        (".5i", ERR_SUFFIX),
        ("1i", ERR_SUFFIX),
        ("-3.01i", ERR_SUFFIX),
        ("-3.01e-", ERR_SUFFIX),
        ("1e4294967297", ERR_SUFFIX),
        (" 1", ERR_FORMAT_WRONG),
        ("1 ", ERR_FORMAT_WRONG),
        # and the usual mistakes in manifests
        ("", ERR_FORMAT_WRONG),
        ("1.5.5", ERR_FORMAT_WRONG),
        ("1KB", ERR_FORMAT_WRONG),
        ("1 Gi", ERR_FORMAT_WRONG),
        ("0x10", ERR_FORMAT_WRONG),
        ("1e", ERR_SUFFIX),
        ("1gi", ERR_FORMAT_WRONG),
        ("1mi", ERR_SUFFIX),
        ("1E2147483648", ERR_SUFFIX),
        ("e-10", ERR_NUMERIC),
        ("Ei", ERR_NUMERIC),
        ("Pi", ERR_NUMERIC),
    ],
)
def test_invalid(text: str, message: str) -> None:
    with pytest.raises(QuantityError) as err:
        parse_quantity(text)
    assert str(err.value) == message


def test_error_text_is_upstreams() -> None:
    assert ERR_FORMAT_WRONG == (
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )
    assert isinstance(QuantityError("x"), ValueError)


@pytest.mark.parametrize("text", ["Gi", "m", ".", "-", "+", "-.", ".Ki", "000", "E"])
def test_empty_number_parses_as_zero_like_upstream(text: str) -> None:
    # parseQuantityString returns num "0" when no digits precede the suffix.
    assert parse_quantity(text) == 0


def test_binary_values_are_capped_at_int64() -> None:
    assert parse_quantity("9590184606538672Ki") == 2**63 - 1
    assert parse_quantity("-9Ei") == -(2**63 - 1)
    assert parse_quantity("10E") == 10**19  # decimal values are not capped


def test_astronomical_exponent_is_refused_not_computed() -> None:
    with pytest.raises(QuantityError, match="too large for gpuplane"):
        parse_quantity("1e2147483647")
    assert parse_quantity("1e-2147483647") == Fraction(1, 10**9)  # rounds up to 1n


def test_yaml_numbers() -> None:
    assert parse_quantity(2) == 2
    assert parse_quantity(0.5) == F(1, 2)
    assert parse_quantity(1e20) == 10**20
    assert parse_quantity(-0.25) == F(-1, 4)
    for bad in (True, False, float("nan"), float("inf"), None, [1]):
        with pytest.raises(QuantityError):
            parse_quantity(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "val", "milli"),
    [
        ("1", 1, 1000),
        ("500m", 1, 500),
        ("1.5", 2, 1500),
        ("0.1m", 1, 1),
        ("100m", 1, 100),
        ("8Gi", 8 * GI, 8 * GI * 1000),
        ("1n", 1, 1),
        ("0", 0, 0),
        ("-1.5", -2, -1500),
        ("-0.1m", -1, -1),
        ("2.0001", 3, 2001),
    ],
)
def test_value_and_milli_value(text: str, val: int, milli: int) -> None:
    # Value()/MilliValue(): rounded away from zero (int64Amount.AsScaledInt64).
    assert value(text) == val
    assert milli_value(text) == milli


def test_value_accepts_every_form() -> None:
    assert value(3) == 3
    assert milli_value(3) == 3000
    assert value(F(3, 2)) == 2
    assert milli_value(0.25) == 250
    assert nano_value("1") == 10**9


def test_is_integer() -> None:
    assert is_integer("4")
    assert is_integer("1Ki")
    assert is_integer("1000m")
    assert not is_integer("500m")
    assert not is_integer("0.5")


@pytest.mark.parametrize(
    ("amount", "binary", "expected"),
    [
        # TestQuantityString
        (GI, True, "1Gi"),
        (300 * MI, True, "300Mi"),
        (6 * KI, True, "6Ki"),
        (1001 * GI, True, "1001Gi"),
        (TI, True, "1Ti"),
        (5, True, "5"),
        (F(1, 2), True, "500m"),
        (10**9, False, "1G"),
        (F(1, 1000), False, "1m"),
        (F(80, 1000), False, "80m"),
        (F(108, 100), False, "1080m"),
        (300 * 10**6, False, "300M"),
        (10**12, False, "1T"),
        (10**18, False, "1E"),
        (10**21, False, "1e21"),
        (5 * 10**21, False, "5e21"),
        (10**24, False, "1e24"),
        (10**70, True, "10e69"),
        (1234567 * 10**6, False, "1234567M"),
        (F(1234567, 1000), True, "1234567m"),
        (3000, False, "3k"),
        (1025, True, "1025"),
        (0, False, "0"),
        (0, True, "0"),
        (F(1, 10**9), False, "1n"),
        (F(1080, 10**9), False, "1080n"),
        (F(1, 10**6), False, "1u"),
        (2**70, True, "1180591620717411303424"),
        (2000, True, "2000"),
        (-2000, True, "-2000"),
        (-F(901, 100), False, "-9010m"),
    ],
)
def test_format(amount: int | Fraction, binary: bool, expected: str) -> None:
    assert format_quantity(amount, binary=binary) == expected


def test_format_milli() -> None:
    assert format_quantity(1500, milli=True) == "1500m"
    assert format_quantity(2000, milli=True) == "2"
    assert format_quantity(100, milli=True) == "100m"


@pytest.mark.parametrize(
    ("text", "expected"),
    # TestQuantityParseEmit (1Ki..., 1024Mi -> 1Gi); binary flag = the input used a binary suffix
    [
        ("1Ki", "1Ki"),
        ("1Mi", "1Mi"),
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        (".001Ki", "1024m"),
        (".000001Ki", "1024u"),
        (".000000001Ki", "1024n"),
        (".000000000001Ki", "2n"),
    ],
)
def test_parse_emit(text: str, expected: str) -> None:
    assert format_quantity(parse_quantity(text), binary=True) == expected


@given(
    st.integers(min_value=-(10**18), max_value=10**18), st.integers(min_value=0, max_value=12), st.booleans()
)
def test_format_parse_round_trip(mantissa: int, scale: int, binary: bool) -> None:
    # Within int64: past 2^63-1 a BinarySI string is capped on parse, as upstream does.
    amount = Fraction(mantissa, 10**scale)
    nano_rounded = Fraction(nano_value(amount), 10**9)
    assert parse_quantity(format_quantity(amount, binary=binary)) == nano_rounded


@given(st.integers(min_value=-(10**12), max_value=10**12), st.integers(min_value=-(10**12), max_value=10**12))
def test_order_preserved(a: int, b: int) -> None:
    qa, qb = format_quantity(Fraction(a, 1000)), format_quantity(Fraction(b, 1000))
    assert (parse_quantity(qa) < parse_quantity(qb)) == (a < b)
    assert (milli_value(qa) <= milli_value(qb)) == (a <= b)


@given(st.text(alphabet="0123456789.+-eEinumkKMGTP x", max_size=12))
def test_never_crashes_with_anything_but_quantity_error(text: str) -> None:
    try:
        result = parse_quantity(text)
    except QuantityError as err:
        assert str(err) in (ERR_FORMAT_WRONG, ERR_NUMERIC, ERR_SUFFIX) or "too large" in str(err)
    else:
        assert isinstance(result, Fraction)
