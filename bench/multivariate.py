#!/usr/bin/python3
"""Learning on the two multivariate sets: statsmodels KernelReg(bw='cv_ls') against nwreg fit,
local constant (nw) and local linear, plus nwreg's learned metric. Prints a Markdown table of
wall times (statsmodels: one run, in process; nwreg: median of 5 whole-process runs) and the LOO
errors reached. Usage: bench/multivariate.py [path/to/nwreg]   (from the repository root)
"""
import os, statistics, subprocess, sys, time

from statsmodels.nonparametric.kernel_regression import KernelReg

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "golden"))
from columns import ROOT, load  # noqa: E402

NWREG = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "src", "nwreg")
SETS = {"boston": ("boston.csv", ["lstat", "rm"], "medv"),
        "airquality": ("airquality.csv", ["Solar.R", "Wind", "Temp"], "Ozone")}


def nwreg_fit(path, xc, yc, extra):
    cmd = [NWREG, "fit", path, "-x", ",".join(xc), "-y", yc, "--quiet"] + extra
    times, out = [], ""
    for _ in range(5):
        t0 = time.perf_counter()
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        times.append(time.perf_counter() - t0)
    loo = float(next(l for l in out.splitlines() if l.startswith("loo_mse:")).split()[1])
    return statistics.median(times), loo


print("| data | n | d | estimator | statsmodels cv_ls | nwreg fit | speed-up | statsmodels LOO | nwreg LOO |")
print("|---|---|---|---|---|---|---|---|---|")
for name, (fname, xc, yc) in SETS.items():
    x, y = load(fname, xc, yc)
    path = os.path.join(ROOT, "data", fname)
    for reg, method in (("lc", "nw"), ("ll", "local-linear")):
        t0 = time.perf_counter()
        kr = KernelReg(y, x, "c" * len(xc), reg_type=reg, bw="cv_ls")
        sm_t = time.perf_counter() - t0
        sm_loo = float(kr.cv_loo(kr.bw, kr._est_loc_linear if reg == "ll" else kr._est_loc_constant))
        t, loo = nwreg_fit(path, xc, yc, ["--method", method])
        print(f"| {name} | {len(y)} | {len(xc)} | {method} | {sm_t:.2f} s | {t:.3f} s | {sm_t / t:.0f}x | "
              f"{sm_loo:.10g} | {loo:.10g} |", flush=True)
    t, loo = nwreg_fit(path, xc, yc, ["--metric", "full"])
    print(f"| {name} | {len(y)} | {len(xc)} | nw, --metric full | | {t:.3f} s | | | {loo:.10g} |", flush=True)
