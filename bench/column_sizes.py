#!/usr/bin/python3
"""The sizes at which several x columns learn in under a minute: `nwreg fit FILE -x x1,...,xd
--method M -q` (the default learner, tolerance and --loo-rows) on x uniform in the unit cube of
d columns, y = sin(2 pi x1) + (x2 + ... + xd)^2 / d + N(0, 0.3^2), seed 20261127 (Python's
random), whole process. A size is skipped once a smaller one of the same columns and method
took over the limit. Prints a Markdown table.

Usage: bench/column_sizes.py [--nwreg build/src/nwreg] [--limit 120]
"""
import argparse
import math
import os
import random
import subprocess
import sys
import tempfile
import time

CASES = [(2, [10000, 20000, 50000, 100000]), (3, [10000, 20000, 50000]), (5, [5000, 10000, 20000])]
METHODS = ["nw", "local-linear"]


def make(path, n, d, seed=20261127):
    rng = random.Random(seed)
    with open(path, "w") as f:
        f.write(",".join(f"x{k + 1}" for k in range(d)) + ",y\n")
        for _ in range(n):
            x = [rng.random() for _ in range(d)]
            y = math.sin(2 * math.pi * x[0]) + sum(x[1:]) ** 2 / d + rng.gauss(0, 0.3)
            f.write(",".join(repr(v) for v in x) + f",{y!r}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nwreg", default="build/src/nwreg")
    ap.add_argument("--limit", type=float, default=120)
    a = ap.parse_args()
    print("| columns | rows | nw | local linear |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        over = set()
        for d, sizes in CASES:
            for n in sizes:
                path = os.path.join(tmp, f"c{d}_{n}.csv")
                make(path, n, d)
                cells = []
                for m in METHODS:
                    if (d, m) in over:
                        cells.append("-")
                        continue
                    cmd = [a.nwreg, "fit", path, "-x", ",".join(f"x{k + 1}" for k in range(d)), "--method", m, "-q"]
                    t0 = time.perf_counter()
                    try:
                        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, timeout=a.limit)
                        t = time.perf_counter() - t0
                        cells.append(f"{t:.1f} s")
                        if t > a.limit / 2:
                            over.add((d, m))
                    except subprocess.TimeoutExpired:
                        cells.append(f"> {a.limit:g} s")
                        over.add((d, m))
                print(f"| {d} | {n:g} | {cells[0]} | {cells[1]} |", flush=True)
                print(f"# {d} columns, {n}: {cells}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
