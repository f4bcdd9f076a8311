import pytest

from dra_migrate.cel import Semver, SemverError, parse_semver


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("v1.0.0", "1.0.0"),
        ("1.0", "1.0.0"),
        ("01.01.01", "1.1.1"),
        ("550.107.02", "550.107.2"),
        ("8", "8.0.0"),
    ],
)
def test_normalize(text: str, expected: str) -> None:
    assert str(parse_semver(text, normalize=True)) == expected


@pytest.mark.parametrize("text", ["v1.0.0", "1.0", "550.107.02", "1.2.3-01", "1.2.3+", "", "1.2.3-a_b"])
def test_strict_rejects(text: str) -> None:
    with pytest.raises(SemverError):
        parse_semver(text)


@pytest.mark.parametrize("text", ["1-rc", "1.0+b", "V1.0.0"])
def test_normalize_rejects(text: str) -> None:
    with pytest.raises(SemverError):
        parse_semver(text, normalize=True)


def test_ordering() -> None:
    versions = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0"]
    parsed = [parse_semver(v) for v in versions]
    assert sorted(reversed(parsed)) == parsed
    assert parse_semver("1.0.0+build.1") == parse_semver("1.0.0+build.2")  # build metadata is ignored
    assert parse_semver("550.107.2").compare(parse_semver("550.54.15")) == 1
    assert Semver.parse("2.0.0").major == 2
