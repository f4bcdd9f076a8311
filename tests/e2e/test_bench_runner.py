"""The benchmark runner's bookkeeping: child measurement, success rules, target checks, tool failures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from benchmarks import run
from benchmarks.run import Row, Sample


def _s(wall: float, rc: int = 0, rss: float = 50.0, tree: float = 0.0) -> Sample:
    return Sample(wall_s=wall, rc=rc, maxrss_mb=rss, tree_rss_mb=tree)


def test_measure_reports_exit_code_output_and_memory() -> None:
    code = (
        "import sys; b = bytearray(64 * 2**20); b[::4096] = b'x' * len(b[::4096]); print('hi'); sys.exit(3)"
    )
    s = run.measure([sys.executable, "-c", code])
    assert s.rc == 3
    assert s.stdout.strip() == "hi"
    assert s.wall_s > 0
    assert 64 <= max(s.maxrss_mb, s.tree_rss_mb) < 1024


def test_a_sampled_run_sees_the_memory_of_the_whole_tree() -> None:
    # two children hold 48 MB each for half a second: the largest process (all a max RSS can show) holds about
    # half of what the tree holds, which only the sampled run sees
    child = "import time; b = bytearray(48 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(0.5)"
    code = (
        f"import subprocess, sys; ps = [subprocess.Popen([sys.executable, '-c', {child!r}]) for _ in range(2)]; "
        "[p.wait() for p in ps]"
    )
    plain = run.measure([sys.executable, "-c", code])
    sampled = run.measure([sys.executable, "-c", code], sample_tree=True)
    assert plain.tree_rss_mb == 0 and 48 <= plain.maxrss_mb < 90
    assert 96 <= sampled.tree_rss_mb < 1024


def test_tool_exit_codes_0_1_2_are_runs_other_codes_are_errors() -> None:
    row = Row("t", "tool")
    for rc in (0, 1, 2):
        row.record(_s(1.0 + rc, rc))
    assert row.median() == 2.0 and not row.error
    row.record(Sample(wall_s=9.0, rc=70, maxrss_mb=1, tree_rss_mb=0, stderr_tail="Traceback\nBoom: broken\n"))
    assert row.error == "exit 70: Boom: broken"
    assert row.median() is None and row.peak_mb() is None
    base = Row("b", "baseline")
    base.record(_s(1.0, 1))
    assert base.error.startswith("exit 1")


def test_scaled_row_median_and_peak() -> None:
    row = Row("r", "baseline", scale=10.0)
    for w, rss in ((1.0, 10.0), (3.0, 30.0), (2.0, 20.0)):
        row.record(_s(w, rss=rss))
    assert row.median() == 20.0
    assert row.peak_mb() == 30.0


def _size_rows(tool: float, ruamel: float, prefilter: float, j1: float | None, rss: float) -> dict[str, Row]:
    rows = {
        k: Row(k, "tool" if k.startswith("tool") else "baseline")
        for k in ("prefilter", "tool", "compose", "tool_j1", "ruamel", "tool_mem")
    }
    rows["prefilter"].record(_s(prefilter))
    rows["tool"].record(_s(tool, 1, rss / 2))  # a timed run sees its main process only
    rows["tool_mem"].record(_s(tool * 1.2, 1, rss / 2, tree=rss))
    rows["ruamel"].record(_s(ruamel))
    rows["compose"].record(_s(0.1))
    if j1 is None:
        rows["tool_j1"].error = "skipped: the tool has no --jobs option"
    else:
        rows["tool_j1"].record(_s(j1, 1))
    return rows


def test_checks_compare_against_the_issue_targets() -> None:
    per_size = {
        10_000: _size_rows(2.0, 10.0, 0.5, 3.5, 150.0),
        100_000: _size_rows(30.0, 100.0, 2.0, None, 250.0),
    }
    pre = {
        k: Row(k, "tool" if k.startswith("tool") else "baseline")
        for k in ("import_yaml", "tool_nongpu", "tool_gpu")
    }
    pre["import_yaml"].record(_s(0.1))
    pre["tool_nongpu"].record(_s(0.15))
    pre["tool_gpu"].record(_s(0.9, 1))
    got = {c.name: c for c in run.checks(per_size, pre)}
    assert got["10000: tool / ruamel round-trip of GPU files"].status == "PASS"  # 0.2
    assert got["100000: tool / ruamel round-trip of GPU files"].status == "FAIL"  # 0.3
    assert got["10000: tool / prefilter scan"].status == "PASS"  # 4
    assert got["100000: tool / prefilter scan"].status == "FAIL"  # 15
    assert got["10000: tool peak memory (MB)"].status == "PASS"
    assert got["100000: tool peak memory (MB)"].status == "FAIL"  # only the sampled run sees 250
    assert got["10000: 2-core speed-up (--jobs 1 / default)"].status == "PASS"  # 1.75
    assert got["100000: 2-core speed-up (--jobs 1 / default)"].status == "n/a"
    assert got["100k time / 10k time"].status == "FAIL"  # 15
    assert got["pre-commit non-GPU / import yaml"].status == "PASS"  # 1.5
    assert got["pre-commit GPU / import yaml"].status == "FAIL"  # 9


def test_checks_are_not_applicable_when_the_tool_is_missing() -> None:
    rows = _size_rows(1.0, 10.0, 0.5, None, 10.0)
    rows["tool"] = Row("tool", "tool", error="`migrate --help` exit 1: ModuleNotFoundError")
    rows["tool_mem"] = Row("tool_mem", "tool", error=rows["tool"].error)
    pre = {k: Row(k, "baseline") for k in ("import_yaml", "tool_nongpu", "tool_gpu")}
    pre["import_yaml"].record(_s(0.1))
    assert all(c.status == "n/a" for c in run.checks({1000: rows}, pre))


def test_probe_of_a_missing_tool_reports_instead_of_raising() -> None:
    tool = run.Tool.probe("python -m no_such_module_for_bench", run.ROOT)
    assert tool.cmd[0] == sys.executable
    assert "exit 1" in tool.error and "no_such_module_for_bench" in tool.error
    assert not tool.has_jobs


def test_scanned_count_reads_the_tool_summary() -> None:
    tail = "warning: x\n9819 file(s) scanned, 466 with GPU keys, 410 changed, 0 new file(s), 12 left untouched\n"
    assert run.scanned_count(tail) == 9819
    assert run.scanned_count("no summary here") is None


def test_ab_compares_checkouts_each_with_a_warm_cache_of_its_own(tmp_path: Path) -> None:
    """benchmarks/ab.py on a small generated repository, this checkout against itself: one line per checkout
    with its median and its ratio to the first, and each checkout got a verdict memo of its own (warmed by an
    untimed serial run before the timed ones)."""
    from benchmarks import ab
    from benchmarks.generate import generate

    repo = tmp_path / "repo"
    generate(repo, 60, gpu_fraction=0.3, seed=5)
    out = subprocess.run([sys.executable, str(ab.ROOT / "benchmarks" / "ab.py"), str(ab.ROOT), str(ab.ROOT),
                          "--repo", str(repo), "--runs", "2", "--work", str(tmp_path / "ab")],
                         capture_output=True, text=True, check=False, timeout=600)
    assert out.returncode == 0, out.stderr
    head, *rows = out.stdout.splitlines()
    assert head.startswith(f"migrate {repo.name} --check -q: medians of 2 interleaved runs"), out.stdout
    assert len(rows) == 2 and " 1.00x " in rows[0], out.stdout
    assert all(len(row.split("(")[1].split()) == 2 for row in rows), out.stdout  # both runs shown
    memos = sorted((tmp_path / "ab").glob("cache-*/dra-migrate/selector-verdicts-*.json"))
    assert [m.parent.parent.name for m in memos] == [f"cache-0-{ab.ROOT.name}", f"cache-1-{ab.ROOT.name}"]
