"""Benchmark runner for dra-migrate: tool vs baselines, interleaved; medians and ratios against the targets.

    python benchmarks/run.py [--sizes 1000,10000] [--repeat 3] [--tool "python -m dra_migrate"] [--ablate]

Repositories are generated into benchmarks/out/ (gitignored) on first use. Every measurement is a child
process timed from spawn to exit (interpreter start-up included, as a user sees it); peak RSS comes from
wait4()'s rusage of that child (largest single process of its tree) and from sampling the summed RSS of the
whole process tree (what matters if the tool forks workers). Baselines and tool runs alternate within every
repetition so machine drift hits both. A missing or failing tool is reported in its rows; baselines still run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.generate import GEN_VERSION  # noqa: E402

OUT = ROOT / "benchmarks" / "out"
BASELINES = ROOT / "benchmarks" / "baselines.py"
PAGE = os.sysconf("SC_PAGE_SIZE")
# Linux charges a fork+exec'd child's ru_maxrss with the RSS its parent had at fork time, so wait4() on a
# child of this runner over-reports. GNU time is a small C process whose children report their own peak.
GNU_TIME = shutil.which("time", path="/usr/bin:/bin")
MAXRSS_SOURCE = "GNU time %M" if GNU_TIME else "wait4 ru_maxrss (inflated by the runner's RSS at fork)"
OK_TOOL_CODES = {0, 1, 2}  # 0 nothing to change, 1 changes, 2 some input errors (Helm templates are expected)


# ------------------------------------------------------------------------------------------------------------
# Child-process measurement
# ------------------------------------------------------------------------------------------------------------
@dataclass
class Sample:
    wall_s: float
    rc: int
    maxrss_mb: float  # peak RSS of the largest single process of the child's tree (see MAXRSS_SOURCE)
    tree_rss_mb: float  # sampled sum over the live tree; 0 when the child was too quick to sample
    stdout: str = ""
    stderr_tail: str = ""


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def _proc_memory(pid: int) -> int:
    """The process's proportional set size (PSS): pages it shares with its forked workers count once over
    the tree instead of once per process, as summed RSS would. RSS where smaps_rollup is missing."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * PAGE


def _tree_rss(pid: int) -> int:
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            total += _proc_memory(p)
        except (OSError, IndexError, ValueError):
            continue
        todo += _children(p)
    return total


def measure(
    cmd: list[str], env: dict[str, str] | None = None, sample_tree: bool = False, cwd: Path | None = None
) -> Sample:
    """Run `cmd` once: wall time, exit code, the top process's max RSS and, with `sample_tree`, the peak PSS of
    its process tree sampled every 20 ms. Sampling costs ~3 ms of CPU per sample (the kernel walks each
    process's page tables for smaps_rollup), ~15 % of a CPU taken from a run that may need both: timed runs
    do not sample, the tree's memory is measured in runs of its own."""
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.NamedTemporaryFile() as rss,
    ):
        if GNU_TIME:
            cmd = [GNU_TIME, "-f", "%M", "-o", rss.name, *cmd]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=cwd)
        peak = 0
        stop = threading.Event()

        def sampler() -> None:
            nonlocal peak
            while not stop.wait(0.02):
                peak = max(peak, _tree_rss(proc.pid))

        th = threading.Thread(target=sampler, daemon=True) if sample_tree else None
        if th:
            th.start()
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        stop.set()
        if th:
            th.join()
        proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped: keep Popen from waiting again
        out.seek(0)
        err.seek(0)
        stderr = err.read().decode(errors="replace")
        maxrss_kb = ru.ru_maxrss
        if GNU_TIME:  # "%M" is the last line; GNU time puts "Command exited with non-zero status N" above it
            words = rss.read().decode(errors="replace").split()
            maxrss_kb = int(words[-1]) if words and words[-1].isdigit() else 0
        return Sample(
            wall_s=wall,
            rc=proc.returncode,
            maxrss_mb=maxrss_kb / 1024,
            tree_rss_mb=peak / 2**20,
            stdout=out.read().decode(errors="replace")[-2000:],
            stderr_tail=stderr[-600:],
        )


@dataclass
class Row:
    name: str
    kind: str  # "baseline" | "tool"
    samples: list[Sample] = field(default_factory=list)
    error: str = ""
    note: str = ""
    scale: float = 1.0  # for capped measurements: factor applied to the measured time

    def ok(self) -> list[Sample]:
        return [s for s in self.samples if s.rc in (OK_TOOL_CODES if self.kind == "tool" else {0})]

    def median(self) -> float | None:
        ok = self.ok()
        return statistics.median(s.wall_s for s in ok) * self.scale if ok and not self.error else None

    def peak_mb(self) -> float | None:
        ok = self.ok()
        return max(max(s.maxrss_mb, s.tree_rss_mb) for s in ok) if ok and not self.error else None

    def record(self, s: Sample, expect_ok: bool = True) -> None:
        self.samples.append(s)
        good = s.rc in (OK_TOOL_CODES if self.kind == "tool" else {0})
        if expect_ok and not good and not self.error:
            self.error = (
                f"exit {s.rc}: {s.stderr_tail.strip().splitlines()[-1] if s.stderr_tail.strip() else ''}"
            )

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "median_s": self.median(),
            "peak_rss_mb": self.peak_mb(),
            "error": self.error or None,
            "note": self.note or None,
            "scale": self.scale,
            "samples": [asdict(s) for s in self.samples],
        }


# ------------------------------------------------------------------------------------------------------------
# Repositories and the tool
# ------------------------------------------------------------------------------------------------------------
@dataclass
class Repo:
    size: int
    path: Path
    index: dict[str, Any]

    def abs(self, rel: str) -> str:
        return str(self.path / rel)

    def gpu_files(self) -> list[str]:
        return [self.abs(e["path"]) for e in self.index["files"] if e["gpu"] and not e["template"]]

    def first(self, gpu: bool) -> str:
        for e in self.index["files"]:
            if e["gpu"] == gpu and not e["fp"] and not e["template"] and e["role"] == "deployment":
                return self.abs(e["path"])
        raise LookupError("no deployment file of that kind")


def _own_repository(path: Path) -> None:
    """Make the generated tree a git work tree of its own, as a user's checkout is: dra-migrate reads the
    repository around the paths it is given (sharing configs, DeviceClasses, kustomizations), and without this
    the repository would be this checkout, goldens included. A run on the whole tree then reads nothing more;
    a hook run on one file reads the settings of the generated repository, as in a user's."""
    if not (path / ".git").exists():
        subprocess.run(["git", "init", "-q", str(path)], check=True)


def ensure_repo(size: int, gpu_fraction: float, seed: int) -> Repo:
    name = f"repo-{size}-g{gpu_fraction}-s{seed}"
    path, index_path = OUT / name, OUT / f"{name}.index.json"
    if index_path.exists() and path.is_dir():
        index = json.loads(index_path.read_text())
        if index.get("generator_version") == GEN_VERSION:
            _own_repository(path)
            return Repo(size, path, index)
    shutil.rmtree(path, ignore_errors=True)
    t0 = time.perf_counter()
    print(f"generating {name} ...", end=" ", flush=True)
    # In a child process, so the runner (whose memory every measured child inherits at fork) stays small.
    gen = [sys.executable, str(ROOT / "benchmarks" / "generate.py"), str(path), "--files", str(size)]
    gen += ["--gpu-fraction", str(gpu_fraction), "--seed", str(seed), "--index", str(index_path)]
    subprocess.run(gen, check=True, stdout=subprocess.DEVNULL)
    _own_repository(path)
    os.sync()  # flush the new tree now, not as background writeback during the first timed runs
    index = json.loads(index_path.read_text())
    s = index["summary"]
    print(f"{s['total_bytes'] / 1e6:.1f} MB, {s['gpu_files']} GPU files, {time.perf_counter() - t0:.0f}s")
    return Repo(size, path, index)


def tool_command(spec: str) -> list[str]:
    cmd = shlex.split(spec)
    if cmd and cmd[0] in ("python", "python3"):
        cmd[0] = sys.executable  # the interpreter running the benchmark, i.e. the project venv
    return cmd


def tool_env(root: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH", "")]))
    return env


@dataclass
class Tool:
    cmd: list[str]
    env: dict[str, str]
    cwd: Path  # `python -m` puts the cwd first on sys.path, so run from the tree under test
    error: str = ""
    has_jobs: bool = False

    @classmethod
    def probe(cls, spec: str, root: Path) -> Tool:
        t = cls(tool_command(spec), tool_env(root), root)
        # Bytecode as an install has it: pip compiles a package when it installs it, but an editable
        # checkout run with PYTHONDONTWRITEBYTECODE=1 (as here) would compile every module on every start.
        package = root / "dra_migrate"
        if package.is_dir():
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], capture_output=True)
        try:
            p = subprocess.run(
                [*t.cmd, "migrate", "--help"], capture_output=True, text=True, env=t.env, cwd=root, timeout=60
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            t.error = f"cannot run tool: {e}"
            return t
        if p.returncode != 0:
            tail = (p.stderr or p.stdout).strip().splitlines()
            t.error = f"`migrate --help` exit {p.returncode}: {tail[-1] if tail else ''}"
        t.has_jobs = "--jobs" in p.stdout
        return t


# ------------------------------------------------------------------------------------------------------------
# The benchmark proper
# ------------------------------------------------------------------------------------------------------------
def _write_list(paths: list[str], name: str) -> Path:
    p = OUT / name
    p.write_text("\n".join(paths) + "\n")
    return p


def prefilter_hits(repo: Repo) -> list[str]:
    hits = []
    for e in repo.index["files"]:
        if b"nvidia.com" in (repo.path / e["path"]).read_bytes():
            hits.append(repo.abs(e["path"]))
    return hits


# The command lines users type, timed like the bare one (in place on a fresh copy unless --check): key, row
# name, extra arguments ("{tmp}" is a directory outside the copy, removed after the run).
COMMAND_LINES: tuple[tuple[str, str, list[str]], ...] = (
    ("tool_tv", "tool: same with --target-version 1.35", ["--target-version", "1.35"]),
    ("tool_check_json", "tool: --check --format json", ["--check", "--format", "json"]),
    ("tool_report", "tool: same as the first with --report json=FILE", ["--report", "json={tmp}/report.json"]),
)


def run_tool(repo: Repo, tool: Tool, row: Row, extra: list[str], *, sample_tree: bool = False,
             env: dict[str, str] | None = None) -> None:
    """One timed run of `migrate COPY *extra` recorded in `row`. In place, as a batch rewrite of a repository
    runs: on a fresh copy made before the clock starts."""
    if row.error:
        return
    tmp_root = OUT / "tmp"
    tmp_root.mkdir(exist_ok=True)
    dest = Path(tempfile.mkdtemp(dir=tmp_root)) / "repo"
    try:
        shutil.copytree(repo.path, dest, symlinks=True)
        # Flush the copy before the clock starts: its writeback would otherwise run during the tool's run
        # and slow every file the tool creates (the kernel holds directory blocks under writeback), a cost
        # of this setup, not of the tool.
        os.sync()
        args = [a.replace("{tmp}", str(dest.parent)) for a in extra]
        sample = measure([*tool.cmd, "migrate", str(dest), *args], {**tool.env, **(env or {})}, sample_tree,
                         cwd=tool.cwd)
        row.record(sample)
        scanned = scanned_count(sample.stderr_tail)
        manifests = sum(1 for e in repo.index["files"] if e["path"].endswith((".yaml", ".yml", ".json")))
        if scanned is not None and scanned != manifests and not row.error:
            # a run that skipped files (e.g. an ignore rule) would look fast and measure nothing
            row.error = f"the tool scanned {scanned} of the {manifests} manifest files"
    finally:
        shutil.rmtree(dest.parent, ignore_errors=True)


def bench_size(repo: Repo, tool: Tool, repeat: int, ruamel_repo: Repo) -> dict[str, Row]:
    py = sys.executable
    hits = _write_list(prefilter_hits(repo), f"hits-{repo.size}.txt")
    gpu = _write_list(ruamel_repo.gpu_files(), f"gpu-{ruamel_repo.size}.txt")
    rows = {
        "prefilter": Row("prefilter scan (read all, find 'nvidia.com')", "baseline"),
        "tool": Row("tool: migrate REPO (in place, on a fresh copy)", "tool"),
        "compose": Row("PyYAML CSafeLoader compose of prefilter hits", "baseline"),
        "tool_j1": Row("tool: same with --jobs 1", "tool"),
        "ruamel": Row("ruamel.yaml rt load+dump of GPU files", "baseline"),
        **{key: Row(name, "tool") for key, name, _extra in COMMAND_LINES},
        "tool_mem": Row("tool: same as the first, tree memory sampled", "tool",
                        note="memory only: its time is not used"),
    }
    if ruamel_repo is not repo:
        ratio = len(repo.gpu_files()) / max(1, len(ruamel_repo.gpu_files()))
        rows["ruamel"].scale = ratio
        rows[
            "ruamel"
        ].note = f"measured on the {ruamel_repo.size}-file repo, scaled x{ratio:.2f} by GPU file count"
    if tool.error:
        for row in rows.values():
            if row.kind == "tool":
                row.error = tool.error
    elif not tool.has_jobs:
        rows["tool_j1"].error = "skipped: the tool has no --jobs option"
    cmds: dict[str, list[str]] = {
        "prefilter": [py, str(BASELINES), "prefilter", str(repo.path)],
        "compose": [py, str(BASELINES), "compose", str(hits)],
        "ruamel": [py, str(BASELINES), "roundtrip", str(gpu)],
    }

    measure(cmds["prefilter"], sample_tree=False)  # warm the page cache; not recorded
    for i in range(repeat):
        print(f"  size {repo.size}: repetition {i + 1}/{repeat}", flush=True)
        rows["prefilter"].record(measure(cmds["prefilter"]))
        run_tool(repo, tool, rows["tool"], [])
        rows["compose"].record(measure(cmds["compose"]))
        run_tool(repo, tool, rows["tool_j1"], ["--jobs", "1"])
        rows["ruamel"].record(measure(cmds["ruamel"]))
        for key, _name, extra in COMMAND_LINES:
            run_tool(repo, tool, rows[key], extra)
    run_tool(repo, tool, rows["tool_mem"], [], sample_tree=True)
    return rows


# --ablate: the default command line with one speed mechanism off at a time (dra_migrate.perf.switches), and
# with all of them off (the serial executor): key, row name, environment.
ABLATIONS: tuple[tuple[str, str, dict[str, str]], ...] = (
    ("default", "tool: migrate REPO (every mechanism on)", {}),
    *((f"off_{m}", f"  without {m}", {"DRA_MIGRATE_PERF_OFF": m})
      for m in ("workers", "early", "scout", "background", "caches")),
    ("serial", "  without any (DRA_MIGRATE_EXECUTOR=serial)", {"DRA_MIGRATE_EXECUTOR": "serial"}),
)


def bench_ablation(repo: Repo, tool: Tool, repeat: int) -> dict[str, Row]:
    """Each row once per repetition, interleaved (drift hits them alike); the gain of a mechanism is its
    row's median minus the default's."""
    rows = {key: Row(name, "tool") for key, name, _env in ABLATIONS}
    if tool.error:
        for row in rows.values():
            row.error = tool.error
    clean = {k: v for k, v in tool.env.items() if k not in ("DRA_MIGRATE_PERF_OFF", "DRA_MIGRATE_EXECUTOR")}
    plain = Tool(tool.cmd, clean, tool.cwd, tool.error, tool.has_jobs)
    run_tool(repo, plain, Row("warm-up", "tool"), [])  # bytecode, page cache: not recorded
    for i in range(repeat):
        print(f"  size {repo.size}: ablation repetition {i + 1}/{repeat}", flush=True)
        for key, _name, env in ABLATIONS:
            run_tool(repo, plain, rows[key], [], env=env)
    return rows


def print_ablation(per_size: dict[int, dict[str, Row]]) -> None:
    print()
    print(f"{'size':>7}  {'measurement':<48} {'median s':>9} {'gain s':>8}  note")
    for size, rows in per_size.items():
        base = rows["default"].median()
        for key, row in rows.items():
            med = row.median()
            gain = med - base if key != "default" and med is not None and base is not None else None
            print(f"{size:>7}  {row.name:<48} {_fmt(med, '9.3f')} {_fmt(gain, '+8.3f')}  {row.error or row.note}")


def scanned_count(stderr: str) -> int | None:
    """N of the tool's summary line 'N file(s) scanned, …', if it printed one."""
    m = re.search(r"(\d+) file\(s\) scanned", stderr)
    return int(m.group(1)) if m else None


HOOK_OPTIONS = ["--target-version", "1.33", "--strict", "--ignore", "DRA705"]


def bench_precommit(repo: Repo, tool: Tool, repeat: int) -> dict[str, Row]:
    rows = {
        "import_yaml": Row('python -c "import yaml"', "baseline"),
        "tool_nongpu": Row("tool: migrate --check <non-GPU file>", "tool"),
        # a hook configured with `args: [--target-version, "1.33"]` (options that cannot change what matches)
        "tool_nongpu_options": Row("tool: migrate --check " + " ".join(HOOK_OPTIONS) + " <non-GPU file>", "tool"),
        "tool_gpu": Row("tool: migrate --check <GPU file>", "tool"),
    }
    files = {"tool_nongpu": repo.first(gpu=False), "tool_nongpu_options": repo.first(gpu=False),
             "tool_gpu": repo.first(gpu=True)}
    options = {"tool_nongpu_options": HOOK_OPTIONS}
    if tool.error:
        for key in files:
            rows[key].error = tool.error
    else:  # one untimed run so bytecode compilation is not measured
        measure(
            [*tool.cmd, "migrate", "--check", files["tool_gpu"]], tool.env, sample_tree=False, cwd=tool.cwd
        )
    for _ in range(repeat):
        rows["import_yaml"].record(measure([sys.executable, "-c", "import yaml"], sample_tree=False))
        for key, f in files.items():
            if not rows[key].error:
                command = [*tool.cmd, "migrate", "--check", *options.get(key, []), f]
                rows[key].record(measure(command, tool.env, sample_tree=False, cwd=tool.cwd))
    for key, f in files.items():
        rows[key].note = str(Path(f).relative_to(repo.path))
    return rows


# ------------------------------------------------------------------------------------------------------------
# Checks and output
# ------------------------------------------------------------------------------------------------------------
@dataclass
class Check:
    name: str
    value: float | None
    target: str
    ok: bool | None  # None: not measurable in this run
    why: str = ""

    @property
    def status(self) -> str:
        return "n/a" if self.ok is None else "PASS" if self.ok else "FAIL"


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def _check(name: str, value: float | None, op: str, limit: float, why: str = "") -> Check:
    ok = None if value is None else (value <= limit if op == "<=" else value >= limit)
    return Check(name, value, f"{op} {limit:g}", ok, why)


def checks(per_size: dict[int, dict[str, Row]], pre: dict[str, Row]) -> list[Check]:
    out: list[Check] = []
    for size, rows in per_size.items():
        t = rows["tool"].median()
        out.append(
            _check(
                f"{size}: tool / ruamel round-trip of GPU files",
                _ratio(t, rows["ruamel"].median()),
                "<=",
                0.25,
                rows["ruamel"].note,
            )
        )
        out.append(_check(f"{size}: tool / prefilter scan", _ratio(t, rows["prefilter"].median()), "<=", 10))
        peaks = [p for p in (rows["tool"].peak_mb(), rows["tool_mem"].peak_mb()) if p is not None]
        out.append(_check(f"{size}: tool peak memory (MB)", max(peaks) if peaks else None, "<=", 200))
        out.append(
            _check(
                f"{size}: 2-core speed-up (--jobs 1 / default)",
                _ratio(rows["tool_j1"].median(), t),
                ">=",
                1.6,
                rows["tool_j1"].error if rows["tool_j1"].error.startswith("skipped") else "",
            )
        )
    if 10_000 in per_size and 100_000 in per_size:
        out.append(
            _check(
                "100k time / 10k time",
                _ratio(per_size[100_000]["tool"].median(), per_size[10_000]["tool"].median()),
                "<=",
                11,
            )
        )
    else:
        out.append(Check("100k time / 10k time", None, "<= 11", None, "needs --sizes with 10000 and 100000"))
    base = pre["import_yaml"].median()
    out.append(_check("pre-commit non-GPU / import yaml", _ratio(pre["tool_nongpu"].median(), base), "<=", 2))
    if "tool_nongpu_options" in pre:
        out.append(_check("pre-commit non-GPU, hook options / import yaml",
                          _ratio(pre["tool_nongpu_options"].median(), base), "<=", 2))
    out.append(_check("pre-commit GPU / import yaml", _ratio(pre["tool_gpu"].median(), base), "<=", 8))
    return out


def _fmt(v: float | None, spec: str) -> str:
    width = int(spec.split(".")[0]) if spec[0].isdigit() else 0
    return "-".rjust(width) if v is None else format(v, spec)


def print_tables(per_size: dict[int, dict[str, Row]], pre: dict[str, Row], cks: list[Check]) -> None:
    print()
    print(f"{'size':>7}  {'measurement':<48} {'median s':>9} {'files/s':>9} {'peak MB':>8}  note")
    for size, rows in per_size.items():
        for row in rows.values():
            med = row.median()
            fps = size / med if med and row.kind == "tool" else None
            note = row.error or row.note
            print(
                f"{size:>7}  {row.name:<48} {_fmt(med, '9.3f')} {_fmt(fps, '9.0f')} "
                f"{_fmt(row.peak_mb(), '8.0f')}  {note}"
            )
    print()
    print(f"{'pre-commit':<58} {'median s':>9}  note")
    for row in pre.values():
        print(f"{row.name:<58} {_fmt(row.median(), '9.3f')}  {row.error or row.note}")
    print()
    print(f"{'ratio':<52} {'value':>8} {'target':>8}  status")
    for c in cks:
        print(f"{c.name:<52} {_fmt(c.value, '8.3f')} {c.target:>8}  {c.status}  {c.why}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--sizes", default="1000,10000", help="comma-separated repo sizes in files (100000 opt-in)"
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--precommit-repeat", type=int, default=10)
    ap.add_argument("--tool", default="python -m dra_migrate")
    ap.add_argument(
        "--tool-root",
        type=Path,
        default=ROOT,
        help="source tree put first on the tool's PYTHONPATH (default: this checkout)",
    )
    ap.add_argument("--gpu-fraction", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--ruamel-cap",
        type=int,
        default=10_000,
        help="above this size the ruamel round-trip is measured on the cap-size repo and scaled",
    )
    ap.add_argument("--json", type=Path, default=OUT / "results.json")
    ap.add_argument("--ablate", action="store_true",
                    help="only time the default command line with each speed mechanism off in turn")
    a = ap.parse_args(argv)
    sizes = [int(s.replace("_", "")) for s in a.sizes.split(",") if s.strip()]
    OUT.mkdir(parents=True, exist_ok=True)
    tool = Tool.probe(a.tool, a.tool_root.resolve())
    jobs = "supported" if tool.has_jobs else "absent"
    print(f"tool: {shlex.join(tool.cmd)} (from {tool.cwd}): {tool.error or 'ok'}; --jobs {jobs}")

    repos = {s: ensure_repo(s, a.gpu_fraction, a.seed) for s in sizes}
    load_before = os.getloadavg()
    if load_before[0] > (os.cpu_count() or 1):
        print(f"warning: load average {load_before[0]:.1f} on {os.cpu_count()} CPUs: timings will be noisy")
    if a.ablate:
        ablation = {size: bench_ablation(repos[size], tool, a.repeat) for size in sizes}
        print_ablation(ablation)
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({
            "recorded": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "load_average": {"before": load_before, "after": os.getloadavg()},
            "params": {"sizes": sizes, "repeat": a.repeat, "tool": a.tool, "gpu_fraction": a.gpu_fraction,
                       "seed": a.seed, "generator_version": GEN_VERSION},
            "ablation": {s: {k: r.summary() for k, r in rows.items()} for s, rows in ablation.items()},
        }, indent=1) + "\n")
        print(f"\nJSON summary: {a.json}")
        return 0
    per_size: dict[int, dict[str, Row]] = {}
    for size in sizes:
        rr = repos[size] if size <= a.ruamel_cap else ensure_repo(a.ruamel_cap, a.gpu_fraction, a.seed)
        per_size[size] = bench_size(repos[size], tool, a.repeat, rr)
    pre = bench_precommit(repos[min(sizes)], tool, a.precommit_repeat)
    cks = checks(per_size, pre)
    print_tables(per_size, pre, cks)

    load_after = os.getloadavg()
    result = {
        "recorded": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "maxrss_source": MAXRSS_SOURCE,
        "load_average": {"before": load_before, "after": load_after},
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "maxrss_children_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
        },
        "params": {
            "sizes": sizes,
            "repeat": a.repeat,
            "precommit_repeat": a.precommit_repeat,
            "tool": a.tool,
            "tool_root": str(a.tool_root.resolve()),
            "gpu_fraction": a.gpu_fraction,
            "seed": a.seed,
            "ruamel_cap": a.ruamel_cap,
            "generator_version": GEN_VERSION,
        },
        "tool": {"cmd": tool.cmd, "error": tool.error or None, "has_jobs": tool.has_jobs},
        "repos": {s: r.index["summary"] for s, r in repos.items()},
        "sizes": {s: {k: r.summary() for k, r in rows.items()} for s, rows in per_size.items()},
        "precommit": {k: r.summary() for k, r in pre.items()},
        "checks": [dict(asdict(c), status=c.status) for c in cks],
    }
    a.json.parent.mkdir(parents=True, exist_ok=True)
    a.json.write_text(json.dumps(result, indent=1) + "\n")
    print(f"\nload average before/after: {load_before[0]:.1f} / {load_after[0]:.1f}; JSON summary: {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
