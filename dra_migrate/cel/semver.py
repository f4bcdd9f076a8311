"""Semantic versions as the Kubernetes CEL semver library sees them (github.com/blang/semver/v4).

`parse_semver(s)` is blang's strict Parse (also used for `version` device attributes);
`parse_semver(s, normalize=True)` is k8s normalizeAndParse (semver(s, true)): drops one leading
lowercase "v", strips leading zeros of the three core parts and fills a missing minor/patch.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import total_ordering

_NUMBERS = set("0123456789")
_ALPHANUM = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-0123456789")
_UINT64_MAX = 2**64 - 1


class SemverError(ValueError):
    """Not a valid semantic version."""


def _parse_core(part: str, what: str) -> int:
    if not set(part) <= _NUMBERS:
        raise SemverError(f"Invalid character(s) found in {what} number {part!r}")
    if len(part) > 1 and part[0] == "0":
        raise SemverError(f"{what.capitalize()} number must not contain leading zeroes {part!r}")
    if not part or int(part) > _UINT64_MAX:
        raise SemverError(f"invalid {what} number {part!r}")
    return int(part)


@total_ordering
@dataclass(frozen=True, eq=False)
class Semver:
    major: int
    minor: int
    patch: int
    pre: tuple[str | int, ...] = ()
    build: tuple[str, ...] = ()

    @staticmethod
    def parse(s: str, normalize: bool = False) -> Semver:
        return parse_semver(s, normalize)

    def compare(self, other: Semver) -> int:
        """blang Version.Compare: build metadata is ignored; a pre-release sorts before the release."""
        for x, y in ((self.major, other.major), (self.minor, other.minor), (self.patch, other.patch)):
            if x != y:
                return 1 if x > y else -1
        if not self.pre and not other.pre:
            return 0
        if not self.pre:
            return 1
        if not other.pre:
            return -1
        for a, b in zip(self.pre, other.pre, strict=False):
            c = _compare_pre(a, b)
            if c:
                return c
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self.compare(other) == 0

    def __hash__(self) -> int:
        return hash((self.major, self.minor, self.patch, self.pre))

    def __lt__(self, other: Semver) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self.compare(other) < 0

    def __str__(self) -> str:
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.pre:
            s += "-" + ".".join(str(p) for p in self.pre)
        if self.build:
            s += "+" + ".".join(self.build)
        return s

    def __repr__(self) -> str:
        return f"Semver({str(self)!r})"


def _compare_pre(a: str | int, b: str | int) -> int:
    if isinstance(a, int) and isinstance(b, int):
        return (a > b) - (a < b)
    if isinstance(a, int):
        return -1
    if isinstance(b, int):
        return 1
    return (a > b) - (a < b)


def _strict(s: str) -> Semver:
    if not s:
        raise SemverError("Version string empty")
    parts = s.split(".", 2)
    if len(parts) != 3:
        raise SemverError("No Major.Minor.Patch elements found")
    major = _parse_core(parts[0], "major")
    minor = _parse_core(parts[1], "minor")
    patch_str = parts[2]
    build: list[str] = []
    pre_strs: list[str] = []
    if "+" in patch_str:
        idx = patch_str.index("+")
        build = patch_str[idx + 1 :].split(".")
        patch_str = patch_str[:idx]
    if "-" in patch_str:
        idx = patch_str.index("-")
        pre_strs = patch_str[idx + 1 :].split(".")
        patch_str = patch_str[:idx]
    patch = _parse_core(patch_str, "patch")
    pre: list[str | int] = []
    for p in pre_strs:
        if not p:
            raise SemverError("Prerelease is empty")
        if set(p) <= _NUMBERS:
            if len(p) > 1 and p[0] == "0":
                raise SemverError(f"Numeric PreRelease version must not contain leading zeroes {p!r}")
            pre.append(int(p))
        elif set(p) <= _ALPHANUM:
            pre.append(p)
        else:
            raise SemverError(f"Invalid character(s) found in prerelease {p!r}")
    for b in build:
        if not b:
            raise SemverError("Build meta data is empty")
        if not set(b) <= _ALPHANUM:
            raise SemverError(f"Invalid character(s) found in build meta data {b!r}")
    return Semver(major, minor, patch, tuple(pre), tuple(build))


def parse_semver(s: str, normalize: bool = False) -> Semver:
    if not normalize:
        return _strict(s)
    s = s.removeprefix("v")
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if not p or p[0] not in _NUMBERS:
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if any(c in parts[-1] for c in "+-"):
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return _strict(".".join(parts))


def is_semver(s: str, normalize: bool = False) -> bool:
    try:
        parse_semver(s, normalize)
    except SemverError:
        return False
    return True
