"""Kubernetes resource.Quantity, ported from k8s.io/apimachinery/pkg/api/resource (quantity.go, amount.go).

The value is kept exactly as a Fraction. Kubernetes also distinguishes a "fast" int64 representation
(value x 10^scale) from an arbitrary-precision one (inf.Dec); that distinction is observable from CEL
through isInteger()/asInteger() (e.g. quantity("1.0").isInteger() is false, quantity("1.5Gi") is held as
inf.Dec), so it is tracked in `scale` (None = inf.Dec form).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from functools import total_ordering

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
_MAX_INT64_FACTORS = 18
_NANO = -9
# Exponents beyond this are valid in Kubernetes but would need huge integers here; refuse them honestly.
_MAX_ABS_EXPONENT = 4096

_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIX_CHARS = set("eEinumkKMGTP")

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"


class QuantityError(ValueError):
    """Invalid quantity text, or a conversion Kubernetes refuses."""


def _in_int64(v: int) -> bool:
    return INT64_MIN <= v <= INT64_MAX


def _int32_wrap(v: int) -> int:
    # Go converts the parsed int64 exponent with int32(...), which wraps.
    return ((v + 2**31) % 2**32) - 2**31


def _positive_scale(value: int, scale: int) -> int | None:
    r = value * 10**scale
    return r if _in_int64(r) else None


def _fast_add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    """int64Amount.Add: None on overflow (Kubernetes then switches to inf.Dec)."""
    av, ascale = a
    bv, bscale = b
    if bv == 0:
        return a
    if av == 0:
        return b
    if ascale == bscale:
        c = av + bv
        return (c, ascale) if _in_int64(c) else None
    if ascale > bscale:
        scaled = _positive_scale(av, ascale - bscale)
        if scaled is None or not _in_int64(scaled + bv):
            return None
        return (scaled + bv, bscale)
    scaled = _positive_scale(bv, bscale - ascale)
    if scaled is None or not _in_int64(av + scaled):
        return None
    return (av + scaled, ascale)


def _round_up_nano(v: Fraction) -> Fraction:
    """inf.RoundUp to 9 decimals on the magnitude (non-zero values never round to zero)."""
    scaled = v * 10**9
    if scaled.denominator == 1:
        return v
    mag = abs(scaled)
    up = -(-mag.numerator // mag.denominator)
    return Fraction(up if v > 0 else -up, 10**9)


@total_ordering
@dataclass(frozen=True, eq=False)
class Quantity:
    """An exact Kubernetes quantity. Equality and ordering compare values (Cmp), not formats."""

    value: Fraction
    format: str = DECIMAL_SI
    # int64Amount scale when Kubernetes holds the value in its fast form; None = inf.Dec form.
    scale: int | None = 0
    text: str = field(default="", compare=False)

    @staticmethod
    def from_int(v: int) -> Quantity:
        """resource.NewQuantity(v, DecimalExponent), as used by CEL add(int)/sub(int)."""
        return Quantity(Fraction(v), DECIMAL_EXPONENT, 0, str(v))

    def compare(self, other: Quantity) -> int:
        return (self.value > other.value) - (self.value < other.value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.value < other.value

    def sign(self) -> int:
        return (self.value > 0) - (self.value < 0)

    def _fast(self) -> tuple[int, int] | None:
        if self.scale is None:
            return None
        unscaled = self.value / Fraction(10) ** self.scale
        return (int(unscaled), self.scale)

    def add(self, other: Quantity | int) -> Quantity:
        y = Quantity.from_int(other) if isinstance(other, int) else other
        fmt = y.format if self.value == 0 else self.format
        a, b = self._fast(), y._fast()
        if a is not None and b is not None:
            r = _fast_add(a, b)
            if r is not None:
                return Quantity(self.value + y.value, fmt, r[1])
        return Quantity(self.value + y.value, fmt, None)

    def sub(self, other: Quantity | int) -> Quantity:
        y = Quantity.from_int(other) if isinstance(other, int) else other
        fmt = y.format if self.value == 0 else self.format
        a, b = self._fast(), y._fast()
        if a is not None and b is not None:
            r = _fast_add(a, (-b[0], b[1]))
            if r is not None:
                return Quantity(self.value - y.value, fmt, r[1])
        return Quantity(self.value - y.value, fmt, None)

    def is_integer(self) -> bool:
        """Quantity.AsInt64 succeeds: fast form, scale >= 0, no int64 overflow."""
        fast = self._fast()
        if fast is None or fast[1] < 0:
            return False
        return _positive_scale(fast[0], fast[1]) is not None

    def as_integer(self) -> int:
        if not self.is_integer():
            raise QuantityError("cannot convert value to integer")
        return int(self.value)

    def as_approximate_float(self) -> float:
        try:
            return float(self.value)
        except OverflowError:
            return float("inf") if self.value > 0 else float("-inf")

    def __str__(self) -> str:
        if self.text:
            return self.text
        if self.value.denominator == 1:
            return str(self.value.numerator)
        return format_decimal(self.value)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"


def format_decimal(v: Fraction) -> str:
    """A plain decimal rendering (values from parsing are always finite decimals)."""
    sign = "-" if v < 0 else ""
    v = abs(v)
    digits = 0
    while (v * 10**digits).denominator != 1 and digits < 40:
        digits += 1
    n = int(v * 10**digits)
    s = str(n).rjust(digits + 1, "0")
    return f"{sign}{s[:-digits]}.{s[-digits:]}" if digits else f"{sign}{s}"


def _scan(s: str) -> tuple[bool, str, str, str, str]:
    """parseQuantityString: (positive, value, num, denom, suffix); raises on a malformed exponent."""
    positive = True
    pos, end = 0, len(s)
    if pos < end and s[0] in "+-":
        positive = s[0] == "+"
        pos += 1
    while True:  # strip leading zeros
        if pos >= end:
            return positive, "0", "0", "", ""
        if s[pos] != "0":
            break
        pos += 1
    i = pos
    while i < end and s[i].isascii() and s[i].isdigit():
        i += 1
    if i >= end:
        return positive, s, s[pos:], "", ""
    num = s[pos:i] or "0"
    pos = i
    denom = ""
    if s[pos] == ".":
        pos += 1
        i = pos
        while i < end and s[i].isascii() and s[i].isdigit():
            i += 1
        if i >= end:
            return positive, s, num, s[pos:], ""
        denom = s[pos:i]
        pos = i
    value = s[:pos]
    suffix_start = pos
    i = pos
    while i < end and s[i] in _SUFFIX_CHARS:
        i += 1
    if i >= end:
        return positive, value, num, denom, s[suffix_start:]
    pos = i
    if s[pos] in "+-":
        pos += 1
    while pos < end and s[pos].isascii() and s[pos].isdigit():
        pos += 1
    if pos >= end:
        return positive, value, num, denom, s[suffix_start:]
    raise QuantityError(
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


def _interpret(suffix: str) -> tuple[int, int, str]:
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        rest = suffix[1:]
        body = rest[1:] if rest[:1] in "+-" else rest
        if body and body.isascii() and body.isdigit():
            parsed = int(rest)
            if _in_int64(parsed):
                return 10, _int32_wrap(parsed), DECIMAL_EXPONENT
    raise QuantityError("unable to parse quantity's suffix")


def parse_quantity(s: str) -> Quantity:
    """resource.ParseQuantity: same accepted language, same value, same fast/inf.Dec split."""
    if not s:
        raise QuantityError(
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    if s == "0":
        return Quantity(Fraction(0), DECIMAL_SI, 0, s)
    positive, value, num, denom, suf = _scan(s)
    base, exponent, fmt = _interpret(suf)
    if abs(exponent) > _MAX_ABS_EXPONENT:
        raise QuantityError(f"quantity exponent {exponent} is outside the range this tool supports")

    precision = 0
    scale = 0
    mantissa = 1
    if fmt in (DECIMAL_EXPONENT, DECIMAL_SI):
        scale = exponent
        precision = _MAX_INT64_FACTORS - (len(num) + len(denom))
    elif exponent >= 0 and not denom:
        mantissa = 1 << exponent
        precision = 15 - len(num) - int(exponent * 3 / 10) - 1
    else:
        precision = -1

    if precision >= 0:
        scale -= len(denom)
        if scale >= _NANO:
            shifted = int(num + denom)
            if not _in_int64(shifted):
                raise QuantityError("unable to parse numeric part of quantity")
            result = shifted * mantissa
            if _in_int64(result):
                if not positive:
                    result = -result
                return Quantity(Fraction(result) * Fraction(10) ** scale, fmt, scale, s)

    # Slow path (inf.Dec): exact value, rounded up to nano, BinarySI capped at int64 max.
    digits = value.lstrip("+-")
    int_part, _, frac_part = digits.partition(".")
    if not (int_part or frac_part) or not (int_part + frac_part).isdigit():
        raise QuantityError("unable to parse numeric part of quantity")
    amount = Fraction(int(int_part or "0")) + (
        Fraction(int(frac_part), 10 ** len(frac_part)) if frac_part else 0
    )
    amount *= Fraction(base) ** exponent
    if amount != 0:
        amount = _round_up_nano(amount)
    if fmt == BINARY_SI and amount > INT64_MAX:
        amount = Fraction(INT64_MAX)
    if fmt == BINARY_SI and 0 < amount < 1:
        fmt = DECIMAL_SI
    if value.startswith("-"):
        amount = -amount
    return Quantity(amount, fmt, None, s)


def is_quantity(s: str) -> bool:
    try:
        parse_quantity(s)
    except QuantityError:
        return False
    return True
