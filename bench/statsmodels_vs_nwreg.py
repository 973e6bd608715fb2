#!/usr/bin/python3
"""statsmodels KernelReg(reg_type='lc', Gaussian) against nwreg, in the same run: learning the
bandwidth (bw='cv_ls' against `nwreg fit`) and predicting at a fixed bandwidth (m = n queries),
on the bundled real data and on the seeds' function at n = 500, 1000, 2000. Prints medians,
ratios, and the LOO error each learner reaches (a speed-up only counts if nwreg's is no worse).

    /usr/bin/python3 bench/statsmodels_vs_nwreg.py [path/to/nwreg]

nwreg's times are whole processes (start, read the CSV, compute, write); statsmodels' are the
Python calls alone. Needs Debian's python3-statsmodels.
"""
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from statsmodels.nonparametric.kernel_regression import KernelReg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NWREG = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "src", "nwreg")


def median_time(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def nwreg(*args):
    return subprocess.run([NWREG, *args], check=True, capture_output=True, text=True).stdout


def real_sets():
    for fname, xc, yc in [("synthetic.csv", "x", "y"), ("mcycle.csv", "times", "accel"),
                          ("faithful.csv", "waiting", "eruptions")]:
        path = os.path.join(ROOT, "data", fname)
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        yield fname[:-4], path, xc, yc, np.array([float(r[xc]) for r in rows]), \
            np.array([float(r[yc]) for r in rows])


def seeds_sets(tmp):
    rng = np.random.default_rng(7)
    for n in (500, 1000, 2000):
        x = np.sort(rng.uniform(0, 5, n))
        y = 2 * np.sin(x) + x ** 0.8 + rng.normal(0, 0.5, n)
        path = os.path.join(tmp, f"seeds{n}.csv")
        with open(path, "w") as f:
            f.write("x,y\n" + "".join(f"{a!r},{b!r}\n" for a, b in zip(x, y)))
        yield f"seeds n={n}", path, "x", "y", x, y


def main():
    print("## Learning the bandwidth: statsmodels cv_ls (Nelder-Mead on the LOO error) against nwreg fit\n")
    print("| data | n | statsmodels | nwreg | speed-up | statsmodels LOO | nwreg LOO |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        sets = list(real_sets()) + list(seeds_sets(tmp))
        learned = {}
        for name, path, xc, yc, x, y in sets:
            def sm():
                kr = KernelReg(y, x, "c", reg_type="lc", bw="cv_ls")
                return float(kr.bw[0]), float(kr.cv_loo(kr.bw, kr._est_loc_constant))

            def nw():
                out = nwreg("fit", path, "-x", xc, "-y", yc)
                return float(out.split("loo_mse: ")[1].split()[0])

            t_sm, (h_sm, loo_sm) = median_time(sm, 1 if len(x) >= 1000 else 3)
            t_nw, loo_nw = median_time(nw, 11)
            learned[name] = h_sm
            verdict = "" if loo_nw <= loo_sm * (1 + 1e-12) else " (worse)"
            print(f"| {name} | {len(x)} | {t_sm:.3f} s | {t_nw:.4f} s | {t_sm / t_nw:.0f}x "
                  f"| {loo_sm:.12g} | {loo_nw:.12g}{verdict} |")

        print("\n## Predicting at statsmodels' bandwidth, m = n queries spanning the data\n")
        print("| data | n = m | statsmodels | nwreg | speed-up | max abs difference |")
        print("|---|---|---|---|---|---|")
        for name, path, xc, yc, x, y in sets:
            if not name.startswith("seeds"):
                continue
            h = learned[name]
            q = np.linspace(x.min(), x.max(), len(x))
            qpath = os.path.join(tmp, "q.csv")
            with open(qpath, "w") as f:
                f.write("x\n" + "".join(f"{v!r}\n" for v in q))
            kr = KernelReg(y, x, "c", reg_type="lc", bw=[h])
            t_sm, mean = median_time(lambda: kr.fit(q)[0], 3)
            t_nw, out = median_time(lambda: nwreg("predict", path, "-b", repr(h), "--query", qpath), 11)
            got = np.array([float(line.split(",")[1]) for line in out.splitlines()[1:]])
            print(f"| {name} | {len(x)} | {t_sm:.3f} s | {t_nw:.4f} s | {t_sm / t_nw:.0f}x "
                  f"| {np.max(np.abs(got - mean)):.2g} |")


if __name__ == "__main__":
    main()
