#!/usr/bin/env python3
"""How the audit's cost grows with the size of a tree: linear, or not.

usage: bench/scaling.py PATH [--bin target/release/retrysafe] [--runs N] [--keep DIR]

Builds subsets of PATH with 25 % and 50 % of its files (picked by a hash of the path, so the same
files every time; manifests and schemas are always kept), as hard links in a temporary folder,
and audits each subset and the whole tree N times with one thread. Prints files, median CPU time
and CPU time per file for each: a linear audit keeps the last column flat.
"""
import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile

KEEP = (".json", ".prisma", ".toml")


def subset(src, dst, pct):
    for dirpath, _, names in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        for name in names:
            r = os.path.normpath(os.path.join(rel, name))
            h = int(hashlib.md5(r.encode()).hexdigest(), 16) % 100
            if name.endswith(KEEP) or h < pct:
                os.makedirs(os.path.join(dst, rel), exist_ok=True)
                try:
                    os.link(os.path.join(dirpath, name), os.path.join(dst, r))
                except OSError:
                    pass


def cpu_of(binary, path, out):
    env = dict(os.environ, RAYON_NUM_THREADS="1")
    proc = subprocess.Popen([binary, "check", path, "--format", "json", "--fail-on", "none", "--quiet",
                             "--output", out], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"retrysafe failed on {path}")
    return usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "retrysafe"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(a.path))) as tmp:
        trees = []
        for pct in (25, 50):
            dst = os.path.join(tmp, f"{pct}")
            subset(a.path, dst, pct)
            trees.append((f"{pct}%", dst))
        trees.append(("100%", a.path))
        out = os.path.join(tmp, "report.json")
        print(f"{'subset':>7} {'files':>7} {'cpu s':>8} {'ms/file':>8}")
        for label, path in trees:
            cpu = statistics.median(cpu_of(a.bin, path, out) for _ in range(a.runs))
            files = json.load(open(out))["summary"]["files_scanned"]
            print(f"{label:>7} {files:>7} {cpu:>8.2f} {1000 * cpu / max(files, 1):>8.3f}")


if __name__ == "__main__":
    main()
