"""A small, deliberately style-configurable YAML emitter for the benchmark generator.

PyYAML's and ruamel's dumpers each emit one house style; real repositories mix indentation widths, indented
and non-indented sequences, flow collections, quoted keys and comments everywhere, and the text-edit
layer has to cope with all of them. So the generator renders documents itself, driven by a `Style` and a
seeded RNG.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

# Plain scalars we are confident every YAML 1.1/1.2 loader reads back as the same string.
_PLAIN_WORD = re.compile(r"[A-Za-z_/][A-Za-z0-9_./=@+-]*(?::[A-Za-z0-9_./=@+-]+)*")
_PLAIN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9 _./()-]*[A-Za-z0-9)]")
_QUANTITY = re.compile(r"\d+(?:\.\d+)?(?:m|k|Ki|Mi|Gi|Ti|M|G)")
_RESERVED = {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~"}
_SIMPLE_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./-]*")


@dataclass(frozen=True)
class Style:
    indent: int = 2
    indent_seq: bool = True
    flow_prob: float = 0.0
    comment_prob: float = 0.0
    quote_slash_keys: bool = False
    single_quotes: bool = False
    trailing_comment_prob: float = 0.0
    comments: tuple[str, ...] = field(default_factory=tuple)


def _needs_quotes(s: str, flow: bool) -> bool:
    if s.lower() in _RESERVED or s == "":
        return True
    if s[0].isdigit():
        return not _QUANTITY.fullmatch(s)
    if _PLAIN_WORD.fullmatch(s):
        return False
    return flow or not _PLAIN_TEXT.fullmatch(s)


def scalar(v: Any, st: Style, flow: bool = False) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    s = str(v)
    if not _needs_quotes(s, flow):
        return s
    if st.single_quotes and s.isprintable():
        return "'" + s.replace("'", "''") + "'"
    return json.dumps(s)


def key(k: str, st: Style) -> str:
    if "/" in k and st.quote_slash_keys:
        return json.dumps(k)
    if _SIMPLE_KEY.fullmatch(k) and k.lower() not in _RESERVED and not k[0].isdigit():
        return k
    return json.dumps(k)


def _flowable(v: Any) -> bool:
    if isinstance(v, dict):
        return 0 < len(v) <= 4 and all(
            not isinstance(x, (dict, list)) and "\n" not in str(x) for x in v.values()
        )
    if isinstance(v, list):
        return 0 < len(v) <= 6 and all(not isinstance(x, (dict, list)) and "\n" not in str(x) for x in v)
    return False


def flow(v: Any, st: Style) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{key(k, st)}: {scalar(x, st, True)}" for k, x in v.items()) + "}"
    return "[" + ", ".join(scalar(x, st, True) for x in v) + "]"


class Emitter:
    def __init__(self, st: Style, rng: random.Random) -> None:
        self.st = st
        self.rng = rng
        self.out: list[str] = []

    def _comment(self, pad: str) -> None:
        if self.st.comments and self.rng.random() < self.st.comment_prob:
            self.out.append(f"{pad}# {self.rng.choice(self.st.comments)}")

    def _trail(self) -> str:
        if self.st.comments and self.rng.random() < self.st.trailing_comment_prob:
            return f"  # {self.rng.choice(self.st.comments)}"
        return ""

    def _block_str(self, head: str, s: str, pad: str) -> None:
        chomp = "|" if s.endswith("\n") else "|-"
        self.out.append(f"{head}{chomp}")
        for line in s.rstrip("\n").split("\n"):
            self.out.append(f"{pad}{line}" if line else "")

    def mapping(self, m: dict[str, Any], ind: int, first_comment: bool = True) -> None:
        pad = " " * ind
        for i, (k, v) in enumerate(m.items()):
            if i or first_comment:
                self._comment(pad)
            head = f"{pad}{key(k, self.st)}:"
            self._value(head, v, ind)

    def _value(self, head: str, v: Any, ind: int) -> None:
        st = self.st
        if isinstance(v, (dict, list)) and not v:
            self.out.append(f"{head} {'{}' if isinstance(v, dict) else '[]'}")
        elif _flowable(v) and self.rng.random() < st.flow_prob:
            self.out.append(f"{head} {flow(v, st)}{self._trail()}")
        elif isinstance(v, dict):
            self.out.append(head)
            self.mapping(v, ind + st.indent)
        elif isinstance(v, list):
            self.out.append(head)
            self.sequence(v, ind + (st.indent if st.indent_seq else 0))
        elif isinstance(v, str) and "\n" in v:
            self._block_str(head + " ", v, " " * (ind + st.indent))
        else:
            self.out.append(f"{head} {scalar(v, st)}{self._trail()}")

    def sequence(self, seq: list[Any], ind: int) -> None:
        pad = " " * ind
        for item in seq:
            if isinstance(item, dict) and item:
                start = len(self.out)
                self.mapping(item, ind + 2, first_comment=False)
                self.out[start] = pad + "- " + self.out[start][ind + 2 :]
            elif isinstance(item, str) and "\n" in item:
                self._block_str(f"{pad}- ", item, pad + "  ")
            elif isinstance(item, (dict, list)):
                self.out.append(f"{pad}- {flow(item, self.st) if item else '[]'}")
            else:
                self.out.append(f"{pad}- {scalar(item, self.st)}{self._trail()}")


def dump_docs(docs: list[dict[str, Any]], st: Style, rng: random.Random, leading_sep: bool = False) -> str:
    """Render documents separated by `---`; returns text with LF line ends and a final newline."""
    chunks: list[str] = []
    for i, doc in enumerate(docs):
        em = Emitter(st, rng)
        em.mapping(doc, 0)
        if i or leading_sep:
            chunks.append("---")
        chunks.extend(em.out)
    return "\n".join(chunks) + "\n"
