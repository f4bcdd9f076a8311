"""List every import inside a function in dra_migrate/ that does not say why it is there.

The package imports at module level. An import inside a function is allowed only where start-up time needs it
(a pre-commit run on one file must not pay for what it does not use) or where the imported package is optional
(perf/); the import statement, or the comment line right above it, then carries `# lazy: <why>`. Imports under
`if TYPE_CHECKING:` are not function-level. Exit status 1 when one is unexplained."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "dra_migrate"
MARK = "# lazy:"


def _explained(lines: list[str], first: int, last: int) -> bool:
    """The import's own lines carry the mark, or the comment above the run of imports it belongs to does."""
    if any(MARK in line for line in lines[first - 1 : last]):
        return True
    i = first - 2
    while i >= 0 and lines[i].strip().startswith(("from ", "import ", ")")) or (i >= 0 and lines[i].startswith(" " * 8)
                                                                                  and lines[i].strip().endswith(",")):
        i -= 1
    return i >= 0 and lines[i].strip().startswith(MARK)


def unexplained(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[str] = []
    for node in ast.walk(ast.parse("\n".join(lines))):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            if not isinstance(inner, ast.Import | ast.ImportFrom):
                continue
            if isinstance(inner, ast.ImportFrom) and inner.module == "__future__":
                continue
            if not _explained(lines, inner.lineno, inner.end_lineno or inner.lineno):
                out.append(f"{path.relative_to(PACKAGE.parent)}:{inner.lineno}: {lines[inner.lineno - 1].strip()}")
    return out


def main() -> int:
    found = sorted({o for p in sorted(PACKAGE.rglob("*.py")) for o in unexplained(p)})
    for line in found:
        print(line)
    print(f"{len(found)} function-level import(s) without `{MARK} <why>`")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
