#!/usr/bin/env python3
"""Benchmark retrysafe on a real repository: the full audit against its walk-and-parse-only floor.

usage: bench/bench.py PATH [--runs N] [--bin target/release/retrysafe] [--threads T]

Runs, alternately, N times each (after one warm-up run of each for the file cache):
  - full:  `retrysafe check PATH --format json` (the whole audit, report written to a file);
  - floor: the same command with RETRYSAFE_PARSE_ONLY=1, which walks the tree, reads every file
           and parses it (tree-sitter, syn), then stops: the least any audit of that tree costs.
Alternating spreads the noise of a shared machine over both. Prints the median wall time of each,
their ratio (full / floor), files scanned per second and the peak resident memory of each mode
(the largest of its runs). Build first: cargo build --release.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run_once(binary, path, out, floor, threads):
    env = dict(os.environ)
    env.pop("RETRYSAFE_PARSE_ONLY", None)
    if floor:
        env["RETRYSAFE_PARSE_ONLY"] = "1"
    if threads:
        env["RAYON_NUM_THREADS"] = str(threads)
    cmd = [binary, "check", path, "--format", "json", "--fail-on", "none", "--allow-empty", "--quiet", "--output", out]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"retrysafe exited {code} ({'floor' if floor else 'full'}): {stderr[-500:]}")
    # ru_maxrss is in KiB on Linux
    return wall, usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="RAYON_NUM_THREADS (default: all cores)")
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "retrysafe"))
    a = ap.parse_args()
    results = {"full": ([], [], []), "floor": ([], [], [])}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        floor_out = os.path.join(tmp, "floor.json")
        run_once(a.bin, a.path, floor_out, True, a.threads)  # warm the file cache
        run_once(a.bin, a.path, out, False, a.threads)
        for i in range(a.runs):
            # alternate which mode goes first, so neither always follows the other
            order = [("full", False), ("floor", True)] if i % 2 == 0 else [("floor", True), ("full", False)]
            for name, floor in order:
                wall, rss, cpu = run_once(a.bin, a.path, floor_out if floor else out, floor, a.threads)
                results[name][0].append(wall)
                results[name][1].append(rss)
                results[name][2].append(cpu)
        report = json.load(open(out))
    files = report["summary"]["files_scanned"]
    threads = a.threads or os.environ.get("RAYON_NUM_THREADS") or os.cpu_count()
    print(f"path: {a.path}")
    print(f"files scanned: {files}; mutation endpoints: {report['summary']['mutation_endpoints']}; "
          f"diagnostics: {len(report['diagnostics'])}")
    print(f"runs: {a.runs} of each, alternated; threads: {threads}")
    med = {}
    for name in ("full", "floor"):
        walls, rss, cpu = results[name]
        med[name] = statistics.median(walls)
        print(f"{name:5}: wall median {med[name]:.3f}s (min {min(walls):.3f}s, max {max(walls):.3f}s); "
              f"cpu median {statistics.median(cpu):.3f}s; {files / med[name]:.0f} files/s; "
              f"peak RSS {max(rss) / 1024:.1f} MiB")
    print(f"ratio full/floor (wall medians): {med['full'] / med['floor']:.2f}x")


if __name__ == "__main__":
    main()
