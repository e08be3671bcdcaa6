#!/usr/bin/env python3
"""Benchmark retrysafe on a real repository: files/s and peak memory.

usage: bench/bench.py PATH [--runs N] [--bin target/release/retrysafe]

Runs `retrysafe check PATH --format json` N times (after one warm-up run for the file cache) and
prints the median wall time, files scanned per second, endpoints found and the peak resident memory
of the slowest run. Build first: cargo build --release.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def run_once(binary, path, out):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run([binary, "check", path, "--format", "json", "--fail-on", "none", "--output", out],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"retrysafe exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, max(peak_kib, before)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "retrysafe"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        run_once(a.bin, a.path, out)  # warm the file cache
        walls, peak = [], 0
        for _ in range(a.runs):
            wall, p = run_once(a.bin, a.path, out)
            walls.append(wall)
            peak = max(peak, p)
        report = json.load(open(out))
    files = report["summary"]["files_scanned"]
    median = statistics.median(walls)
    threads = os.environ.get("RAYON_NUM_THREADS", str(os.cpu_count()))
    print(f"path: {a.path}")
    print(f"files scanned: {files}; mutation endpoints: {report['summary']['mutation_endpoints']}; "
          f"diagnostics: {len(report['diagnostics'])}")
    print(f"runs: {a.runs}; threads: {threads}; wall median {median:.3f}s (min {min(walls):.3f}s, max {max(walls):.3f}s)")
    print(f"throughput: {files / median:.0f} files/s; peak RSS: {peak / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
