#!/usr/bin/python3
"""Time bandwidth learning: statsmodels KernelReg(reg_type='lc', bw='cv_ls') against
`nwreg fit`, on the bundled real data sets, in the same run. Prints medians and ratios.

    /usr/bin/python3 bench/statsmodels_vs_nwreg.py [path/to/nwreg]

Needs Debian's python3-statsmodels. The LOO error each reaches is printed too: a speed-up
only counts if nwreg's error is no worse.
"""
import csv
import os
import statistics
import subprocess
import sys
import time

import numpy as np
from statsmodels.nonparametric.kernel_regression import KernelReg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NWREG = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "src", "nwreg")
SETS = [("synthetic.csv", "x", "y"), ("mcycle.csv", "times", "accel"),
        ("faithful.csv", "waiting", "eruptions")]


def median_time(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main():
    print(f"{'data':<10} {'n':>5} {'statsmodels s':>14} {'nwreg s':>10} {'speed-up':>9}"
          f" {'statsmodels LOO':>18} {'nwreg LOO':>18}")
    for fname, xc, yc in SETS:
        path = os.path.join(ROOT, "data", fname)
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        x = np.array([float(r[xc]) for r in rows])
        y = np.array([float(r[yc]) for r in rows])

        def sm():
            kr = KernelReg(y, x, "c", reg_type="lc", bw="cv_ls")
            return kr.cv_loo(kr.bw, kr._est_loc_constant)

        def nw():
            out = subprocess.run([NWREG, "fit", path, "-x", xc, "-y", yc], check=True,
                                 capture_output=True, text=True).stdout
            return float(out.split("loo_mse: ")[1].split()[0])

        t_sm, loo_sm = median_time(sm, 3)
        t_nw, loo_nw = median_time(nw, 11)
        print(f"{fname[:-4]:<10} {len(x):>5} {t_sm:>14.3f} {t_nw:>10.4f} {t_sm / t_nw:>8.0f}x"
              f" {float(loo_sm):>18.12g} {loo_nw:>18.12g}")


if __name__ == "__main__":
    main()
