#!/usr/bin/python3
"""Coverage of nwreg's --se bands by simulation: the fraction of (data set, point) pairs whose
band holds the true curve (pointwise), and of data sets whose band holds it at every grid point
at once (--simultaneous), for NW and local linear with the learned bandwidth, the robust
bias-corrected band (--interval rbc, the default) against the plain one.

Suite: f in {sine sin(2 pi x), peak 2 exp(-50 (x - 1/2)^2), line 1 + 2x} x design in {uniform,
beta(2,2)} x noise in {constant sd 0.3, x-dependent sd 0.1 + 0.4 x} x n in {200, 800}; REPS data
sets each (seed 20261126). Points: a grid of 41 over [0.1, 0.9] (interior) and 6 in [0, 0.05] u
[0.95, 1] (boundary, reported for local linear).

Gaps (--gaps): x uniform on [0, 4] and [6, 10], 100 points each, y = sin x + N(0, 0.3^2), 40
data sets (seed 20261127), the bandwidth learned on each; 19 queries in the gap (4.1 to 5.9) and
26 where the data are dense. Prints, for NW and local linear with the default (rbc) band, the
widest band in the gap over the median width where dense (median and largest over the data
sets), and the coverage of sin x in the gap and where dense. --per-side N puts N points on each
side (the same gap: the dense bands narrow as N grows, the gap's do not) and --reps R makes R
data sets.

Usage: bench/coverage.py [--quick] [--gaps [--per-side N] [--reps R]] [--nwreg PATH]
       (--quick: 10 data sets a cell, not 40)
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

FUNCTIONS = {
    "sine": lambda x: np.sin(2 * np.pi * x),
    "peak": lambda x: 2 * np.exp(-50 * (x - 0.5) ** 2),
    "line": lambda x: 1 + 2 * x,
}
NOISE = {"const": lambda x: 0.3 + 0 * x, "xdep": lambda x: 0.1 + 0.4 * x}
INTERIOR = np.linspace(0.1, 0.9, 41)
BOUNDARY = np.array([0.0, 0.025, 0.05, 0.95, 0.975, 1.0])


def run(nwreg, train, queries, args):
    # (--out-of-reach extrapolate: the boundary points 0 and 1 can lie just past the data, whose
    # band cells are otherwise left empty.)
    out = subprocess.run([nwreg, "predict", train, "--query", queries, "--se", "--threads", "1",
                          "--out-of-reach", "extrapolate", *args],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"nwreg failed: {' '.join(args)}: {out.stderr.strip()}")
    rows = np.array([[float(v) for v in line.split(",")] for line in out.stdout.strip().split("\n")[1:]])
    return rows[:, 3], rows[:, 4]  # lower, upper


def gaps(nwreg, reps=40, per=100):
    rng = np.random.default_rng(20261127)
    q = np.r_[np.linspace(4.1, 5.9, 19), np.linspace(0.5, 3.5, 13), np.linspace(6.5, 9.5, 13)]
    ratios, cover = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        train, queries = os.path.join(tmp, "t.csv"), os.path.join(tmp, "q.csv")
        with open(queries, "w") as f:
            f.write("x\n" + "".join(f"{v!r}\n" for v in q))
        for _ in range(reps):
            x = np.concatenate([rng.uniform(0, 4, per), rng.uniform(6, 10, per)])
            y = np.sin(x) + rng.normal(0, 0.3, 2 * per)
            with open(train, "w") as fh:
                fh.write("x,y\n" + "".join(f"{u!r},{v!r}\n" for u, v in zip(x, y)))
            for m in ["nw", "local-linear"]:
                lo, up = run(nwreg, train, queries, ["--method", m])
                width = up - lo
                ratios.setdefault(m, []).append(width[:19].max() / np.median(width[19:]))
                inside = (lo <= np.sin(q)) & (np.sin(q) <= up)
                c = cover.setdefault(m, [0, 0, 0, 0])
                c[0] += int(inside[:19].sum()); c[1] += 19
                c[2] += int(inside[19:].sum()); c[3] += len(q) - 19
    print(f"# bench/coverage.py --gaps: {reps} data sets of {per} points a side, seed 20261127")
    print("method        gap/dense width: median  max  past 10   coverage: gap  dense")
    for m in ["nw", "local-linear"]:
        r, c = np.array(ratios[m]), cover[m]
        print(f"{m:13s} {np.median(r):30.1f} {r.max():5.1f} {int((r > 10).sum()):8d} {c[0] / c[1]:15.3f} {c[2] / c[3]:6.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--gaps", action="store_true")
    ap.add_argument("--per-side", type=int, default=100)
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--nwreg", default="build/src/nwreg")
    a = ap.parse_args()
    if a.gaps:
        return gaps(a.nwreg, a.reps, a.per_side)
    reps = 10 if a.quick else 40
    rng = np.random.default_rng(20261126)
    methods = ["nw", "local-linear"]
    intervals = ["rbc", "plain"]
    # hits[(method, interval, region)] = [covered, total]; simultaneous per data set.
    hits, simul = {}, {}
    cells = {}
    with tempfile.TemporaryDirectory() as tmp:
        train, queries = os.path.join(tmp, "t.csv"), os.path.join(tmp, "q.csv")
        points = np.concatenate([INTERIOR, BOUNDARY])
        with open(queries, "w") as f:
            f.write("x\n" + "".join(f"{v!r}\n" for v in points))
        for fname, f in FUNCTIONS.items():
            for design in ["uniform", "beta22"]:
                for noise, sd in NOISE.items():
                    for n in [200, 800]:
                        for _ in range(reps):
                            x = rng.uniform(0, 1, n) if design == "uniform" else rng.beta(2, 2, n)
                            y = f(x) + rng.normal(0, 1, n) * sd(x)
                            with open(train, "w") as fh:
                                fh.write("x,y\n" + "".join(f"{u!r},{v!r}\n" for u, v in zip(x, y)))
                            truth = f(points)
                            for m in methods:
                                for iv in intervals:
                                    lo, up = run(a.nwreg, train, queries, ["--method", m, "--interval", iv])
                                    inside = (lo <= truth) & (truth <= up)
                                    for region, sel in [("interior", slice(0, len(INTERIOR))),
                                                        ("boundary", slice(len(INTERIOR), None))]:
                                        k = (m, iv, region)
                                        c = hits.setdefault(k, [0, 0])
                                        c[0] += int(inside[sel].sum())
                                        c[1] += inside[sel].size
                                    cell = cells.setdefault((m, iv, fname, design, noise), [0, 0])
                                    cell[0] += int(inside[: len(INTERIOR)].sum())
                                    cell[1] += len(INTERIOR)
                                # The simultaneous band over the interior grid (the rbc band).
                                with open(queries + ".in", "w") as fh:
                                    fh.write("x\n" + "".join(f"{v!r}\n" for v in INTERIOR))
                                lo, up = run(a.nwreg, train, queries + ".in", ["--method", m, "--simultaneous"])
                                s = simul.setdefault(m, [0, 0])
                                s[0] += int(np.all((lo <= f(INTERIOR)) & (f(INTERIOR) <= up)))
                                s[1] += 1
    print(f"# bench/coverage.py: {reps} data sets a cell, 3 functions x 2 designs x 2 noises x 2 sizes, seed 20261126")
    print("| method | band | interior pointwise | boundary pointwise |")
    print("|---|---|---|---|")
    for m in methods:
        for iv in intervals:
            i, b = hits[(m, iv, "interior")], hits[(m, iv, "boundary")]
            print(f"| {m} | {iv} | {i[0] / i[1]:.3f} ({i[1]} pairs) | {b[0] / b[1]:.3f} ({b[1]} pairs) |")
    print()
    print("| method | simultaneous rbc band, interior grid of 41: data sets covered everywhere |")
    print("|---|---|")
    for m in methods:
        s = simul[m]
        print(f"| {m} | {s[0] / s[1]:.3f} ({s[1]} data sets) |")
    print()
    print("| method | band | function | design | noise | interior pointwise |")
    print("|---|---|---|---|---|---|")
    for (m, iv, fname, design, noise), c in sorted(cells.items()):
        print(f"| {m} | {iv} | {fname} | {design} | {noise} | {c[0] / c[1]:.3f} |")


if __name__ == "__main__":
    sys.exit(main())
