#!/usr/bin/env python3
"""Every road through the engine at 1e5 and 1e6 rows (issue "Every path fast"), whole process.

Data: y = sin x + N(0, 0.5^2), x uniform on [0, 10] (seed 20261126); with --sample-weight, weights
uniform on [0.5, 2]. Each case is timed once per size (the 1e6 runs take seconds; rerun for
medians with --repeat), with a limit per run (--limit, default 300 s: a case past it prints ">").

Cases, each at n = 1e5 and 1e6:
  fixed:   nwreg predict TRAIN -b 0.05 (fitted values at every row)
  loo:     nwreg fit TRAIN -b auto                 (LOO, the default criterion)
  aicc:    nwreg fit TRAIN -b auto --criterion aicc
for 5 kernels x {nw, local-linear, local-polynomial 2} x {plain, sample weights}; then knn:50,
knn:auto, adaptive:50, span:0.3 (tricube, local linear: loess) and predict --se --derivative.
Ratios: time(1e6) / time(1e5) (target <= 15), and time at 1e6 over the Gaussian NW case of the
same kind in the same run (fixed against fixed, learned against learned; target <= 4).
Then several x columns: fit -b auto (Gaussian NW, LOO) with 1, 2 and 3 columns at 1e5 rows
(y = sin x1 + cos x2 + x3 / 5 + noise, x uniform on [0, 10]^3), 2 and 3 with a learned metric
(--metric full, no target), 5 columns at 2e4, 2 columns at
1e6 where the sizes reach it; targets: 2 and 3 columns <= 10x one column on the same rows, 5
columns <= 30x, 2 columns at 1e6 <= 10x one column there and <= 15x two at 1e5. Then knn, span
and adaptive bandwidths in 2 and 3 columns with every parameter given against a given h equal to
the median of the bandwidths they make (<= 10x).
R's KernSmooth::locpoly and stats::loess at 1e6 where installed (a table, not a target): their
time, and their largest difference from nwreg's exact local-linear fit on a grid.

Usage: bench/paths.py [--nwreg build/src/nwreg] [--sizes 100000,1000000] [--only SUBSTR|columns]
                      [--limit 300] [--repeat 1] [--no-r]
"""
import argparse
import os
import random
import math
import shutil
import subprocess
import sys
import tempfile
import time

KERNELS = ["gaussian", "epanechnikov", "tricube", "uniform", "laplace"]
METHODS = [("nw", []), ("local-linear", ["--method", "local-linear"]),
           ("local-poly 2", ["--method", "local-polynomial", "--degree", "2"])]
KINDS = [("fixed", None), ("loo", []), ("aicc", ["--criterion", "aicc"])]


def make_data(path, n, weights, seed):
    rng = random.Random(seed)
    with open(path, "w") as f:
        f.write("x,y,w\n" if weights else "x,y\n")
        for _ in range(n):
            x = rng.uniform(0, 10)
            y = math.sin(x) + rng.gauss(0, 0.5)
            f.write(f"{x!r},{y!r},{rng.uniform(0.5, 2)!r}\n" if weights else f"{x!r},{y!r}\n")


def run(cmd, limit, repeat, out=None):
    """The median wall time of `repeat` runs (None past `limit` s); with `out` (a list), the
    last run's standard output appended to it."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE if out is not None else subprocess.DEVNULL,
                               stderr=subprocess.PIPE, timeout=limit)
        except subprocess.TimeoutExpired:
            return None
        if r.returncode != 0:
            sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr.decode()[:400]}")
        times.append(time.perf_counter() - t0)
        if out is not None:
            out.append(r.stdout.decode())
    return sorted(times)[len(times) // 2]


def make_columns(path, n, seed, d=3):
    rng = random.Random(seed)
    coef = [None, None, 0.2, 0.1, 0.05]  # columns past the second: a small linear trend each
    with open(path, "w") as f:
        f.write(",".join(f"x{k + 1}" for k in range(d)) + ",y\n")
        for _ in range(n):
            x = [rng.uniform(0, 10) for _ in range(d)]
            y = math.sin(x[0]) + math.cos(x[1]) + sum(coef[k] * x[k] for k in range(2, d)) + rng.gauss(0, 0.5)
            f.write(",".join(repr(v) for v in x) + f",{y!r}\n")


def learn(nwreg, path, k, limit, repeat, extra=()):
    x = ",".join(f"x{i}" for i in range(1, k + 1))
    return run([nwreg, "fit", path, "-x", x, "-y", "y", "-b", "auto", *extra], limit, repeat)


def columns(nwreg, tmp, n, big, limit, repeat):
    """Several x columns: learning 1-3 columns at n (the one column also on the sample of 50,000
    rows that several columns' descent uses; 2 and 3 also with a learned metric, --metric
    full, whose descent uses the same sample), 5 columns at 2e4, 2 columns at 1e6 where big
    reaches it; then the neighbour policies with every parameter given against a given h."""
    path = os.path.join(tmp, f"cols{n}.csv")
    make_columns(path, n, 20261126)
    t = {}
    for k in (1, 2, 3):
        t[k] = learn(nwreg, path, k, limit, repeat)
        print(f"# {k} column(s) at {n}: {fmt(t[k])}", file=sys.stderr, flush=True)
    t["1s"] = learn(nwreg, path, 1, limit, repeat, ["--loo-rows", "50000"])
    for k in (2, 3):
        t[f"{k}m"] = learn(nwreg, path, k, limit, repeat, ["--metric", "full"])
        print(f"# {k} columns, --metric full, at {n}: {fmt(t[f'{k}m'])}", file=sys.stderr, flush=True)
    five = os.path.join(tmp, "cols5.csv")
    make_columns(five, 20000, 20261127, d=5)
    t5 = {k: learn(nwreg, five, k, limit, repeat) for k in (1, 5)}
    print(f"# 5 columns at 2e4: {fmt(t5[5])}", file=sys.stderr, flush=True)
    print(f"\n## Several x columns, fit -b auto (Gaussian NW, LOO), whole process\n")
    print("| case | time | against | ratio (target) |\n|---|---|---|---|")
    print(f"| 1 column, {n:g} rows | {fmt(t[1])} | | |")
    print(f"| 1 column, {n:g} rows, --loo-rows 50000 | {fmt(t['1s'])} | | |")
    for k in (2, 3):
        print(f"| {k} columns, {n:g} rows | {fmt(t[k])} | 1 column, the same rows (50,000) | {ratio(t[k], t['1s'])} (<= 10) |")
    for k in (2, 3):
        print(f"| {k} columns, {n:g} rows, --metric full | {fmt(t[f'{k}m'])} | 1 column, the same rows (50,000) | "
              f"{ratio(t[f'{k}m'], t['1s'])} |")
    print(f"| 1 column, 2e4 rows | {fmt(t5[1])} | | |")
    print(f"| 5 columns, 2e4 rows | {fmt(t5[5])} | 1 column | {ratio(t5[5], t5[1])} (<= 30) |")
    if big >= 1000000:
        million = os.path.join(tmp, "cols1e6.csv")
        make_columns(million, 1000000, 20261126, d=2)
        t6 = {k: learn(nwreg, million, k, limit, repeat, ["--loo-rows", "50000"]) for k in (1, 2)}
        print(f"| 1 column, 1e6 rows, --loo-rows 50000 | {fmt(t6[1])} | | |")
        print(f"| 2 columns, 1e6 rows | {fmt(t6[2])} | 1 column at 1e6 | {ratio(t6[2], t6[1])} (<= 10) |")
        print(f"| | | 2 columns at {n:g} | {ratio(t6[2], t[2])} (<= 15) |")
    # Policies with every parameter given (K or F, and the column scales) against a given h
    # equal to the bandwidths they make (the report's reach_median): what the policy costs
    # beyond the sums at its bandwidths. Gaussian knn and adaptive at scales 0.2 a column, span
    # with loess's tricube.
    print(f"\n## Neighbour bandwidths in several columns, fit with every parameter given, n = {n:g}\n")
    print("| case | columns | time | given h: its median reach | time | ratio (<= 10) |\n|---|---|---|---|---|---|")
    for k in (2, 3):
        x = ",".join(f"x{i}" for i in range(1, k + 1))
        scales = ",".join(["0.2"] * k)
        for label, b, kernel in (("knn:50:0.2,...", "knn:50:" + scales, "gaussian"),
                                 ("adaptive:50:0.2,...", "adaptive:50:" + scales, "gaussian"),
                                 ("span:0.01", "span:0.01", "tricube")):
            out = []
            t = run([nwreg, "fit", path, "-x", x, "-y", "y", "-b", b, "--kernel", kernel], limit, repeat, out)
            reach = next((l.split()[1:] for l in "".join(out).splitlines() if l.startswith("reach_median:")), None)
            h = ",".join(f"{float(v):.4g}" for v in reach) if reach else None
            th = run([nwreg, "fit", path, "-x", x, "-y", "y", "-b", h, "--kernel", kernel], limit, repeat) if h else None
            print(f"| {label} ({kernel}) | {k} | {fmt(t)} | {h or '-'} | {fmt(th)} | {ratio(t, th)} |")
            print(f"# {label}, {k} columns: {fmt(t)} against h {h}: {fmt(th)}", file=sys.stderr, flush=True)


def cases():
    for kind, crit in KINDS:
        for weighted in (False, True):
            for kernel in KERNELS:
                for mname, margs in METHODS:
                    label = f"{kernel} {mname} {kind}" + (" weighted" if weighted else "")
                    base = ["--kernel", kernel] + margs + (["--sample-weight", "w"] if weighted else [])
                    if crit is None:
                        yield label, kind, weighted, ["predict", None, "-b", "0.05", "-o", "/dev/null"] + base
                    else:
                        yield label, kind, weighted, ["fit", None, "-b", "auto"] + crit + base
    yield "knn:50 (gaussian nw)", "policy", False, ["fit", None, "-b", "knn:50"]
    yield "knn:auto (gaussian nw)", "policy", False, ["fit", None, "-b", "knn:auto"]
    yield "adaptive:50 (gaussian nw)", "policy", False, ["predict", None, "-b", "adaptive:50", "-o", "/dev/null"]
    yield "span:0.3 tricube local-linear (loess)", "policy", False, [
        "predict", None, "-b", "span:0.3", "--kernel", "tricube", "--method", "local-linear", "-o", "/dev/null"]
    yield "predict --se --derivative (gaussian local-linear, h = 0.05)", "policy", False, [
        "predict", None, "-b", "0.05", "--method", "local-linear", "--se", "--derivative", "-o", "/dev/null"]


def fmt(t):
    return ">" if t is None else f"{t:.2f} s"


def ratio(a, b):
    return "" if a is None or b is None or b == 0 else f"{a / b:.1f}"


def r_compare(nwreg, path, tmp, limit):
    """KernSmooth::locpoly (binned, 401 points) and stats::loess on the 1e6 data, against nwreg."""
    if not shutil.which("Rscript"):
        print("\n(R comparison skipped: apt-get install r-base-core r-cran-kernsmooth)")
        return
    grid = os.path.join(tmp, "grid.csv")
    h = 0.05
    exact = os.path.join(tmp, "exact.csv")
    t0 = time.perf_counter()
    subprocess.run([nwreg, "predict", path, "-b", str(h), "--method", "local-linear", "--grid-n", "401",
                    "-o", exact], check=True, stderr=subprocess.DEVNULL)
    t_nw = time.perf_counter() - t0
    script = f"""
d <- read.csv("{path}"); e <- read.csv("{exact}")
out <- c()
if (requireNamespace("KernSmooth", quietly = TRUE)) {{
  t <- system.time(f <- KernSmooth::locpoly(d$x, d$y, degree = 1, bandwidth = {h}, gridsize = 401,
                                             range.x = range(d$x)))[["elapsed"]]
  out <- c(out, sprintf("locpoly|%.3f|%.3g", t, max(abs(f$y - e[[2]]))))
}}
s <- d[seq(1, nrow(d), length.out = min(nrow(d), 100000)), ]
t <- system.time(m <- loess(y ~ x, data = s, span = 0.3, degree = 1, family = "gaussian",
                            control = loess.control(surface = "interpolate")))[["elapsed"]]
out <- c(out, sprintf("loess|%.3f|%d", t, nrow(s)))
cat(out, sep = "\\n")
"""
    try:
        r = subprocess.run(["Rscript", "-e", script], capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        print("\n(R comparison past the limit)")
        return
    print("\n## Beside R, n = 1e6, local linear, h = 0.05 (a table, not a target)\n")
    print("| tool | time | accuracy |\n|---|---|---|")
    print(f"| nwreg predict --method local-linear --grid-n 401 (exact, whole process incl. reading) | {t_nw:.2f} s | reference |")
    for line in r.stdout.split():
        name, t, acc = line.split("|")
        if name == "locpoly":
            print(f"| KernSmooth::locpoly, 401 bins (in R, data already read) | {float(t):.2f} s | largest difference from exact: {acc} |")
        else:
            print(f"| stats::loess span 0.3 degree 1, surface = interpolate, on {acc} rows (in R) | {float(t):.2f} s | kd-tree interpolation (approximate) |")
    if "locpoly" not in r.stdout:
        print("| KernSmooth::locpoly | not installed (apt-get install r-cran-kernsmooth) | |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nwreg", default="build/src/nwreg")
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--only", default="")
    ap.add_argument("--limit", type=float, default=300)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-r", action="store_true")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for n in sizes:
            for w in (False, True):
                files[n, w] = os.path.join(tmp, f"d{n}{'w' if w else ''}.csv")
                make_data(files[n, w], n, w, 20261126)
        rows = []
        base = {}
        for label, kind, weighted, cmd in cases():
            if a.only and a.only not in label:
                continue
            t = {}
            for n in sizes:
                c = [a.nwreg] + [files[n, weighted] if x is None else x for x in cmd]
                t[n] = run(c, a.limit, a.repeat)
                # Past the limit at one size: larger sizes would be too.
                if t[n] is None:
                    break
            # What it is measured against: a predict against the fixed Gaussian NW predict, a fit
            # against the Gaussian NW fit of the same criterion (LOO for the policies).
            ref = kind if kind != "policy" else ("fixed" if cmd[0] == "predict" else "loo")
            rows.append((label, ref, t))
            if label.startswith("gaussian nw ") and not weighted:
                base[kind] = t
            print(f"# {label}: " + ", ".join(f"{n}: {fmt(t.get(n))}" for n in sizes), file=sys.stderr, flush=True)
        big, small = max(sizes), min(sizes)
        if rows:
            table(rows, base, sizes, big, small)
        if not a.only or a.only in "columns":
            columns(a.nwreg, tmp, min(100000, big), big, a.limit, a.repeat)
        if not a.no_r and 1000000 in sizes:
            r_compare(a.nwreg, files[1000000, False], tmp, a.limit)


def table(rows, base, sizes, big, small):
    print(f"\n## Every path, whole process, n = {', '.join(f'{n:g}' for n in sizes)} (bench/paths.py)\n")
    print(f"| case | {' | '.join(f'{n:g}' for n in sizes)} | {big:g} / {small:g} (<= 15) | vs Gaussian NW at {big:g} (<= 4) |")
    print("|---" * (len(sizes) + 3) + "|")
    for label, ref_kind, t in rows:
        ref = base.get(ref_kind, {}).get(big)
        cells = " | ".join(fmt(t.get(n)) for n in sizes)
        print(f"| {label} | {cells} | {ratio(t.get(big), t.get(small))} | {ratio(t.get(big), ref)} |")


if __name__ == "__main__":
    main()
