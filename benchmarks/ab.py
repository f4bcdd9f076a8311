"""Interleaved A/B of checkouts of dra-migrate on one generated repository: the comparison that survives a
drifting machine.

    python benchmarks/ab.py 26eac91 HEAD                # git revisions of this checkout (worktrees in out/ab/)
    python benchmarks/ab.py /path/to/other/checkout .    # or checkout directories
    python benchmarks/ab.py 26eac91 HEAD --runs 9 --jobs 1 --args "--target-version 1.35"

Each round runs every checkout once, in turn, so drift (thermal, neighbours, page cache) spreads over all of
them; the figures are medians of the wall time of `python -m dra_migrate migrate REPO --check -q [ARGS]`.
Each checkout is byte-compiled first (an installed tool never compiles its modules at start-up) and gets a
cache directory of its own (XDG_CACHE_HOME), warmed by one untimed serial run: the selector-verdict memo of
one version removes those of other versions when it is saved, so checkouts sharing one cache would each
evaluate every CEL selector again in every run, and compare cold runs while a user's runs are warm.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"


def checkout(spec: str, work: Path) -> Path:
    """A checkout directory: `spec` itself if it is one, else a worktree of this repository at revision `spec`."""
    if (Path(spec) / "dra_migrate").is_dir():
        return Path(spec).resolve()
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", spec], capture_output=True, text=True,
                         check=True).stdout.strip()
    tree = work / rev
    if not (tree / "dra_migrate").is_dir():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-f", "--detach", str(tree), rev], check=True,
                       capture_output=True)
    return tree


def run(tree: Path, repo: Path, args: list[str], cache: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree), "XDG_CACHE_HOME": str(cache)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "dra_migrate", "migrate", str(repo), "--check", "-q", *args],
                          cwd=tree, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1, 2):
        raise SystemExit(f"{tree}: exit {done.returncode}: {done.stderr.decode()[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkouts", nargs="+", help="git revisions or checkout directories")
    parser.add_argument("--repo", type=Path, default=OUT / "repo-10000-g0.05-s1",
                        help="the repository to migrate (default: the 10k one benchmarks/run.py generates)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--jobs", help="pass --jobs N")
    parser.add_argument("--args", default="", help="more command-line arguments, as one string")
    parser.add_argument("--work", type=Path, default=OUT / "ab", help="where worktrees and caches go")
    ns = parser.parse_args()
    if not ns.repo.is_dir():
        raise SystemExit(f"{ns.repo}: no such repository (python benchmarks/run.py --sizes 10000 generates it)")
    args = [*(["--jobs", ns.jobs] if ns.jobs else []), *shlex.split(ns.args)]
    trees = [checkout(c, ns.work) for c in ns.checkouts]
    caches = [ns.work / f"cache-{n}-{tree.name}" for n, tree in enumerate(trees)]  # one per place, even if alike
    for tree, cache in zip(trees, caches, strict=True):
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "dra_migrate")], check=True,
                       capture_output=True)
        run(tree, ns.repo, ["--jobs", "1"], cache)  # warms the verdict memo (and the page cache)
    samples: list[list[float]] = [[] for _ in trees]
    for _ in range(ns.runs):
        for n, tree in enumerate(trees):
            samples[n].append(run(tree, ns.repo, args, caches[n]))
    load = os.getloadavg()[0]
    print(f"migrate {ns.repo.name} {' '.join(['--check', '-q', *args])}: medians of {ns.runs} interleaved runs "
          f"(load average {load:.2f} at the end)")
    first = statistics.median(samples[0])
    for spec, runs in zip(ns.checkouts, samples, strict=True):
        med = statistics.median(runs)
        print(f"  {spec:<12} {med:7.3f} s  {med / first:5.2f}x   ({' '.join(f'{s:.3f}' for s in runs)})")

if __name__ == "__main__":
    main()
