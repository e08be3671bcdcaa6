#!/usr/bin/env python3
"""Score retrysafe reports against the blind labels in truth/.

usage: score.py [--bin target/release/retrysafe] [--dir /tmp/retrysafe-blind] [--set SET] [--keep DIR]
                [--verbose] [NAME ...]

For every truth file whose checkout is present at DIR/OWNER__NAME, runs
`retrysafe check --format json` on the checkout and prints, per repository:
- recall / precision of the mutation inventory (method + path, parameters reduced to `{}`, only
  reported endpoints whose registration file lies inside the truth's scope; one marked
  `path_complete: false` counts when it matches and is not an extra when it does not);
- high_precision: of the labelled endpoints reported critical or high, the share labelled within
  one severity level (what a reviewer of the findings sees);
- misses: endpoints labelled medium or worse that were reported none or not at all, and of those
  the labelled criticals; `silent`: the misses reported idempotent by nature (a claim of safety
  where the tool saw nothing, rather than an honest `unknown`);
then the totals over all repositories.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# a parameter as frameworks write it (`{id}`, `:id`, `[id]`, `[...slug]`, `<id>`), or a catch-all
# segment (`/files/*`, Hono's and Express's wildcard); not the name of a server action
# (`action:addToCart`), whose colon follows a word
PARAM = re.compile(r"\{[^}]*\}|(?<![A-Za-z0-9_]):[A-Za-z_][A-Za-z0-9_]*\??|\[\[?\.{0,3}[^\]]*\]\]?|<[^>]+>|(?<=/)\*(?=/|$)")
RANK = {"none": 0, "inverse": 0, "low": 1, "medium": 2, "high": 3, "critical": 4}
MUTATIONS = ("POST", "PUT", "PATCH", "DELETE")


def norm_path(p):
    p = PARAM.sub("{}", (p or "").strip())
    p = re.sub(r"/+", "/", p)
    if len(p) > 1 and p.endswith("/"):
        p = p[:-1]
    return p or "/"


def key(e):
    return (str(e.get("method", "")).upper(), norm_path(e.get("path", "")))


def in_scope(file, scope):
    if not scope:
        return True
    if isinstance(scope, list):
        return any(in_scope(file, one) for one in scope)
    file = (file or "").lstrip("./")
    scope = scope.strip("/")
    if scope in ("", "."):
        return True
    stem, dot, ext = scope.rpartition(".")
    if dot and "/" not in ext:
        return file == scope or file.startswith(stem + "/")
    return file.startswith(scope + "/")


def score(truth, report):
    scope = truth.get("scope", "")
    want = {}
    for e in truth["endpoints"]:
        want.setdefault(key(e), e)
    got = {}
    for e in report.get("endpoints", []):
        if str(e.get("method", "")).upper() in MUTATIONS and in_scope(e.get("file"), scope):
            got.setdefault(key(e), e)
    complete = truth.get("complete", True) is not False
    hit = [k for k in want if k in got]
    # An endpoint marked `path_complete: false` claims only part of its path: a match counts, a
    # mismatch is no wrong claim (its diagnostic says what is missing).
    claimed = [k for k in got if k in want or got[k].get("path_complete", True) is not False]
    s = {
        "truth": len(want),
        "reported": len(claimed) if complete else len(hit),
        "matched": len(hit),
        "missed": sorted(k for k in want if k not in got),
        "extra": sorted(k for k in claimed if k not in want) if complete else [],
        "partial": sorted(k for k in got if k not in want
                          and got[k].get("path_complete", True) is False),
    }
    loud = [k for k in hit if got[k].get("severity") in ("critical", "high")
            and want[k].get("expected_severity") in RANK]
    s["loud"] = len(loud)
    s["loud_ok"] = sum(1 for k in loud
                       if abs(RANK[got[k]["severity"]] - RANK[want[k]["expected_severity"]]) <= 1)
    s["wrong_loud"] = sorted((k, want[k]["expected_severity"], got[k]["severity"]) for k in loud
                             if abs(RANK[got[k]["severity"]] - RANK[want[k]["expected_severity"]]) > 1)
    s["misses"] = sorted((k, want[k].get("expected_severity"), got[k].get("severity") if k in got else "absent")
                         for k in want if RANK.get(want[k].get("expected_severity"), 0) >= 2
                         and (k not in got or RANK.get(got[k].get("severity"), 0) == 0))
    # Of the misses, those reported as idempotent by nature: a claim of safety where a reviewer
    # sees a harmful repeat (the worst failure), not an honest `unknown`.
    s["silent"] = sum(1 for m in s["misses"]
                      if m[0] in got and got[m[0]].get("classification") == "idempotent_by_nature")
    s["critical"] = sum(1 for k in want if want[k].get("expected_severity") == "critical")
    s["critical_missed"] = sum(1 for m in s["misses"] if m[1] == "critical")
    return s


def line(name, s):
    rec = s["matched"] / s["truth"] if s["truth"] else 1.0
    prec = s["matched"] / s["reported"] if s["reported"] else 1.0
    hp = s["loud_ok"] / s["loud"] if s["loud"] else 1.0
    return (f"{name}: recall={rec:.3f} precision={prec:.3f} "
            f"high_precision={hp:.3f} ({s['loud_ok']}/{s['loud']}) "
            f"misses={len(s['misses'])} critical_missed={s['critical_missed']}/{s['critical']} "
            f"silent={s['silent']}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/retrysafe")
    ap.add_argument("--dir", default=os.environ.get("BLIND_DIR", "/tmp/retrysafe-blind"))
    ap.add_argument("--set", help="tuning, fresh, routes, routes-fresh, ...: the truth files whose `set` is this")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--routes", action="store_true",
                    help="list only missed, extra and partial routes (no severities: keeps a set unseen for judgement)")
    ap.add_argument("--keep", metavar="DIR", help="keep each JSON report as DIR/NAME.json")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    tdir = os.path.join(HERE, "truth")
    total = None
    with tempfile.TemporaryDirectory() as out:
        for f in sorted(os.listdir(tdir)):
            if not f.endswith(".json"):
                continue
            name = f[:-5]
            if a.names and name not in a.names:
                continue
            truth = json.load(open(os.path.join(tdir, f)))
            if a.set and truth.get("set", "tuning") != a.set:
                continue
            checkout = os.path.join(a.dir, name)
            if not os.path.isdir(checkout):
                print(f"{name}: no checkout at {checkout} (extract commit {truth['commit']})")
                continue
            if a.keep:
                os.makedirs(a.keep, exist_ok=True)
            rep = os.path.join(a.keep or out, name + ".json")
            r = subprocess.run([a.bin, "check", checkout, "--format", "json", "--fail-on", "none",
                                "--output", rep], capture_output=True, text=True)
            if r.returncode != 0 or not os.path.exists(rep):
                print(f"{name}: retrysafe exited {r.returncode}: {r.stderr.strip()[-300:]}")
                continue
            s = score(truth, json.load(open(rep)))
            print(line(name, s))
            if a.verbose and not a.routes:
                for k, w, g in s["wrong_loud"]:
                    print(f"    loud   {k[0]} {k[1]}: labelled {w}, reported {g}")
                for k, w, g in s["misses"]:
                    print(f"    miss   {k[0]} {k[1]}: labelled {w}, reported {g}")
            if a.verbose or a.routes:
                for k in s["missed"]:
                    print(f"    missed {k[0]} {k[1]}")
                for k in s["extra"]:
                    print(f"    extra  {k[0]} {k[1]}")
                for k in s["partial"]:
                    print(f"    partial {k[0]} {k[1]} (path incomplete, not counted)")
            if total is None:
                total = {k: (0 if isinstance(v, int) else []) for k, v in s.items()}
            for k, v in s.items():
                total[k] += v
    if total:
        print(line("TOTAL", total))


if __name__ == "__main__":
    sys.exit(main())
