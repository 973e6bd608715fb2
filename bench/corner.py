#!/usr/bin/python3
"""Local polynomials in several x columns against a coarse grid of bandwidths: the corner check.

Data (the recipe of the issue that found the corner): x ~ Exp(1), y = sin(3x) + N(0, 0.2^2), and
one (or two, --columns 3) further columns U(0.1, 3) that carry nothing; 200 rows, numpy
default_rng(seed). For each seed and degree 1-3, `nwreg fit --method local-polynomial` learns a
bandwidth; the grid is every product of 8 bandwidths a column, log-spaced from 1% to 200% of its
range, each fitted with `-b`. Prints one row per case and counts the cases where the learned LOO
error is above the grid's best, and those where, in addition, the fit averages fewer effective
neighbours than its coefficients + 1 (what the learner must never do).
Usage: bench/corner.py [--nwreg PATH] [--seeds N] [--columns 2|3]   (from the repository root)
"""
import argparse, math, os, subprocess, sys, tempfile

import numpy as np

p = argparse.ArgumentParser()
p.add_argument("--nwreg", default="build/src/nwreg")
p.add_argument("--seeds", type=int, default=24)
p.add_argument("--columns", type=int, default=2)
a = p.parse_args()


def fit(args):
    out = subprocess.run([a.nwreg, "fit", "--quiet"] + args, capture_output=True, text=True, check=True).stdout
    d = dict(l.split(":", 1) for l in out.splitlines() if ":" in l)
    return float(d["loo_mse"]), float(d["neighbours"])


cols = ["x"] + [f"w{k}" for k in range(1, a.columns)]
above = below_floor = cases = 0
print(f"## Local polynomials in {a.columns} columns against an 8-a-column grid ({a.seeds} seeds, 200 rows)\n")
print("| seed | degree | learned LOO | neighbours | grid's best LOO | learned / grid |")
print("|---|---|---|---|---|---|")
with tempfile.TemporaryDirectory() as tmp:
    for seed in range(a.seeds):
        r = np.random.default_rng(seed)
        x = r.exponential(1, 200)
        y = np.sin(3 * x) + r.normal(0, 0.2, 200)
        X = np.column_stack([x] + [r.uniform(0.1, 3, 200) for _ in cols[1:]])
        path = os.path.join(tmp, f"s{seed}.csv")
        np.savetxt(path, np.column_stack([X, y]), delimiter=",", header=",".join(cols + ["y"]), comments="", fmt="%.17g")
        ranges = np.ptp(X, axis=0)
        for degree in (1, 2, 3):
            base = [path, "-x", ",".join(cols), "--method", "local-polynomial", "--degree", str(degree)]
            loo, neighbours = fit(base)
            best = math.inf
            for idx in np.ndindex(*([8] * a.columns)):
                h = [ranges[k] * 0.01 * 200 ** (i / 7) for k, i in enumerate(idx)]
                best = min(best, fit(base + ["-b", ",".join(repr(v) for v in h)])[0])
            coefficients = math.comb(a.columns + degree, degree)
            cases += 1
            above += loo > best * (1 + 1e-9)
            below_floor += loo > best * (1 + 1e-9) and neighbours < coefficients + 1
            print(f"| {seed} | {degree} | {loo:.4f} | {neighbours:.1f} | {best:.4f} | {loo / best:.3f} |", flush=True)
print(f"\n{cases} cases: learned LOO above the grid's best in {above}; of those, with fewer effective neighbours "
      f"than coefficients + 1 (the corner): {below_floor}")
sys.exit(1 if below_floor else 0)
