#!/usr/bin/python3
"""Size and power of `nwreg test` by simulation, beside R's sm.regression on the same data sets.

Cells: null in {constant (y = noise), linear (y = 1 + 2x + noise)} x truth in {the null, a weak
and a clear departure from it} x n in {50, 200}; x uniform on [0, 1], noise N(0, 1); REPS data
sets a cell (seed 20261126). Departures: for the constant null a sine a sin(2 pi x) with a = 0.3,
0.6; for the linear null a quadratic 1 + 2x + 4b (x - 1/2)^2 with b = 2, 4.

nwreg, M in {nw, local-linear}: `nwreg test FILE --null N --method M` with its default bandwidth
(df:6, as sm's, and the chi-square p-value); `... -b auto --permutations 0`, the chi-square
p-value at the learned bandwidth as if it were fixed (its size shows why it is not the default
there); and `... -b auto --permutations 99` at the learned
(LOO) bandwidth, calibrated by permutations with the bandwidth relearned on each permuted data
set (99 rather than the default 199 to halve the bench's time; the size is exact for any B). sm: sm.regression(x, y, model = "no effect" | "linear"), its defaults (local
linear, h with 6 approximate degrees of freedom, h.select's "df" method), run once in R over every
data set. Each prints the share of data sets with p < 0.05: under the null that is the size (5% is
nominal), under a departure the power.

Usage: bench/test_power.py [--quick] [--nwreg PATH] [--no-r] [--modes default,learned,learned-chi]
(--quick: 60 data sets a cell, not 200; --modes: which nwreg columns)
Runs two nwreg processes at a time (each --threads 1): about 25 minutes on 2 cores, 8 with --quick.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

NULLS = {
    "constant": [("null", lambda x: 0 * x), ("sine 0.3", lambda x: 0.3 * np.sin(2 * np.pi * x)),
                 ("sine 0.6", lambda x: 0.6 * np.sin(2 * np.pi * x))],
    "linear": [("null", lambda x: 1 + 2 * x), ("quadratic 2", lambda x: 1 + 2 * x + 2 * (x - 0.5) ** 2 * 4),
               ("quadratic 4", lambda x: 1 + 2 * x + 4 * (x - 0.5) ** 2 * 4)],
}
SIZES = [50, 200]
METHODS = ["nw", "local-linear"]
MODES = {  # the bandwidth and calibration of each nwreg column
    "default": [],
    "learned": ["-b", "auto", "--permutations", "99"],
    "learned-chi": ["-b", "auto", "--permutations", "0"],  # the chi-square p at the learned h: its size
}

VARIANTS = [(m, mode) for mode in MODES for m in METHODS]
TITLES = {"default": "", "learned": " learned h", "learned-chi": " learned h, chi-square"}


def nwreg_p(nwreg, path, null, method, mode):
    extra = MODES[mode]
    out = subprocess.run([nwreg, "test", path, "--null", null, "--method", method, "--threads", "1", "-q",
                          "--format", "json"] + extra, capture_output=True, text=True)
    if out.returncode != 0:
        # A learned h that interpolates leaves no noise to test against: an error, counted as
        # not rejecting (a learned h can do so; none did in the run in bench/RESULTS.md).
        if "interpolates" in out.stderr:
            return float("nan")
        raise RuntimeError(f"nwreg test failed on {path}: {out.stderr.strip()}")
    return json.loads(out.stdout)["p_value"]


R_SCRIPT = r"""
suppressMessages(library(sm))
args <- commandArgs(trailingOnly = TRUE)
files <- readLines(args[1])
out <- character(length(files))
for (i in seq_along(files)) {
  f <- strsplit(files[i], " ")[[1]]
  d <- read.csv(f[1])
  model <- if (f[2] == "constant") "no effect" else "linear"
  out[i] <- sprintf("%.17g", sm.regression(d$x, d$y, model = model, display = "none", verbose = 0)$p)
}
writeLines(out, args[2])
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--nwreg", default="build/src/nwreg")
    ap.add_argument("--no-r", action="store_true")
    ap.add_argument("--modes", default=",".join(MODES), help="nwreg's columns: " + ", ".join(MODES))
    a = ap.parse_args()
    reps = 60 if a.quick else 200
    rng = np.random.default_rng(20261126)
    have_r = not a.no_r and shutil.which("Rscript") and subprocess.run(
        ["Rscript", "-e", "library(sm)"], capture_output=True).returncode == 0
    rows = []  # (null, truth, n, {column: rejections})
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []
        for null, truths in NULLS.items():
            for truth, f in truths:
                for n in SIZES:
                    cell = {"null": null, "truth": truth, "n": n, "files": []}
                    for r in range(reps):
                        x = rng.uniform(0, 1, n)
                        y = f(x) + rng.normal(0, 1, n)
                        path = os.path.join(tmp, f"{len(rows)}_{r}.csv")
                        np.savetxt(path, np.column_stack([x, y]), delimiter=",", header="x,y", comments="",
                                   fmt="%.17g")
                        cell["files"].append(path)
                        jobs.append(f"{path} {null}")
                    rows.append(cell)
        sm_p = {}
        if have_r:
            listing, result = os.path.join(tmp, "files.txt"), os.path.join(tmp, "p.txt")
            script = os.path.join(tmp, "sm.R")
            with open(listing, "w") as fh:
                fh.write("\n".join(jobs) + "\n")
            with open(script, "w") as fh:
                fh.write(R_SCRIPT)
            subprocess.run(["Rscript", script, listing, result], check=True, capture_output=True)
            with open(result) as fh:
                for job, p in zip(jobs, fh.read().split()):
                    sm_p[job.split(" ")[0]] = float(p)
        print(f"\n## `nwreg test`: share of data sets with p < 0.05 ({reps} a cell, seed 20261126)\n")
        variants = [(m, mode) for m, mode in VARIANTS if mode in a.modes.split(",")]
        head = ("| null | truth | n | " + " | ".join(f"nwreg {m}{TITLES[mode]}" for m, mode in variants) +
                (" | sm.regression |" if have_r else " |"))
        print(head)
        print("|" + "---|" * (head.count("|") - 1))
        for cell in rows:
            rates = []
            for m, mode in variants:
                with ThreadPoolExecutor(max_workers=2) as pool:
                    ps = list(pool.map(lambda p: nwreg_p(a.nwreg, p, cell["null"], m, mode), cell["files"]))
                rates.append(sum(p < 0.05 for p in ps) / reps)
            if have_r:
                rates.append(sum(sm_p[p] < 0.05 for p in cell["files"]) / reps)
            print(f"| {cell['null']} | {cell['truth']} | {cell['n']} | " + " | ".join(f"{v:.3f}" for v in rates) + " |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
