from fractions import Fraction

import pytest

from dra_migrate.cel import Quantity, QuantityError, parse_quantity


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("80Gi", 80 * 2**30),
        ("4864Mi", 4864 * 2**20),
        ("4G", 4 * 10**9),
        ("500m", Fraction(1, 2)),
        ("200k", 200_000),
        ("1e3", 1000),
        ("1E-3", Fraction(1, 1000)),
        ("1.5Gi", 3 * 2**29),
        ("-1.5", Fraction(-3, 2)),
        (".5", Fraction(1, 2)),
        ("0", 0),
        # Finer than nano is rounded up, never to zero.
        ("1.5e-10", Fraction(1, 10**9)),
        ("0.1n", Fraction(1, 10**9)),
    ],
)
def test_parse_values(text: str, value: Fraction | int) -> None:
    assert parse_quantity(text).value == value


@pytest.mark.parametrize(
    "text", ["", "200K", "1,3G", "Three", "1KiB", "1i", ".5i", "0.1mi", "1e", "1e+-3", "1E3Ki", " 1"]
)
def test_parse_rejects(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_canonical_comparisons() -> None:
    assert parse_quantity("1Gi") == parse_quantity("1024Mi")
    assert parse_quantity("200M").compare(parse_quantity("0.2G")) == 0
    assert parse_quantity("50M").compare(parse_quantity("50Mi")) == -1
    assert parse_quantity("50Mi").compare(parse_quantity("50M")) == 1
    assert parse_quantity("81559Mi") < parse_quantity("80Gi")
    assert len({parse_quantity("1k"), parse_quantity("1000"), parse_quantity("1e3")}) == 1


def test_arithmetic_and_sign() -> None:
    q = parse_quantity("50k").add(20).sub(parse_quantity("100k")).sub(-50000)
    assert q == parse_quantity("20")
    assert (
        parse_quantity("-3").sign() == -1
        and parse_quantity("0").sign() == 0
        and parse_quantity("1m").sign() == 1
    )
    assert parse_quantity("1Gi").add(parse_quantity("1Gi")) == parse_quantity("2Gi")


def test_integer_conversion_follows_kubernetes_representation() -> None:
    assert parse_quantity("50k").as_integer() == 50_000
    assert parse_quantity("50000000G").is_integer()
    assert parse_quantity("1Gi").as_integer() == 2**30
    # Kubernetes keeps these in a scaled or inf.Dec form that AsInt64 refuses.
    for text in ("1.0", "500m", "1.5Gi", "9999999999999999999999999999999999999G"):
        assert not parse_quantity(text).is_integer(), text
        with pytest.raises(QuantityError, match="cannot convert value to integer"):
            parse_quantity(text).as_integer()
    # 1k + 1: both int64 amounts, scales aligned to 0.
    assert parse_quantity("1k").add(1).as_integer() == 1001
    assert parse_quantity("1").sub(parse_quantity("500m")).is_integer() is False


def test_approximate_float() -> None:
    assert parse_quantity("1.5").as_approximate_float() == 1.5
    assert Quantity.from_int(7).as_approximate_float() == 7.0
