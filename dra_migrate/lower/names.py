"""Deterministic, valid, collision-free names for claim templates, pod claims and requests."""

from __future__ import annotations

import hashlib
import re

_INVALID = re.compile(r"[^a-z0-9-]+")


def dns_label(text: str, max_len: int = 63) -> str:
    s = _INVALID.sub("-", text.lower()).strip("-")
    s = re.sub("-{2,}", "-", s) or "x"
    if len(s) > max_len:
        digest = hashlib.sha256(text.encode()).hexdigest()[:6]
        s = s[: max_len - 7].rstrip("-") + "-" + digest
    if not s[0].isalpha():
        s = ("r-" + s)[:max_len].rstrip("-")
    return s


def dns_subdomain(text: str, max_len: int = 253) -> str:
    parts = [dns_label(p, 63) for p in text.lower().split(".") if p]
    s = ".".join(parts) or "x"
    if len(s) > max_len:
        digest = hashlib.sha256(text.encode()).hexdigest()[:6]
        s = s[: max_len - 7].rstrip("-.") + "-" + digest
    return s


def unique(base: str, taken: set[str], max_len: int = 63) -> str:
    if base not in taken:
        return base
    n = 2
    while True:
        suffix = f"-{n}"
        cand = base[: max_len - len(suffix)].rstrip("-") + suffix
        if cand not in taken:
            return cand
        n += 1


class TemplateNamer:
    """Names ResourceClaimTemplates uniquely per namespace across a whole run (files in sorted order)."""

    def __init__(self) -> None:
        self.taken: dict[str, set[str]] = {}

    def reserve(self, namespace: str | None, name: str) -> None:
        self.taken.setdefault(namespace or "", set()).add(name)

    def assign(self, namespace: str | None, workload_name: str, kind: str, suffix: str) -> str:
        taken = self.taken.setdefault(namespace or "", set())
        base = dns_subdomain(f"{workload_name}-{suffix}")
        if base in taken:
            base = dns_subdomain(f"{workload_name}-{kind.lower()}-{suffix}")
        name = unique(base, taken, 253)
        taken.add(name)
        return name
