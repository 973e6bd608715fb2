#!/usr/bin/python3
"""Golden values for several x columns, from statsmodels KernelReg (reg_type='lc', Gaussian
product kernel, one bandwidth per column): predictions and LOO error at fixed bandwidths, and
what bw='cv_ls' reaches. Run from the repository root (takes a few minutes):
    /usr/bin/python3 tests/golden/make_golden_multi.py
"""
import os
import time

import numpy as np
from statsmodels.nonparametric.kernel_regression import KernelReg

from columns import ROOT, load

SETS = {  # name -> (file, x columns, y column, fixed bandwidth vectors)
    "boston": ("boston.csv", ["lstat", "rm"], "medv", [[1.0, 0.3], [3.0, 1.0]]),
    "airquality": ("airquality.csv", ["Solar.R", "Wind", "Temp"], "Ozone", [[60.0, 2.0, 4.0], [150.0, 5.0, 10.0]]),
}


def main():
    out = os.path.join(ROOT, "tests", "golden")
    cv_rows = []
    for name, (fname, xc, yc, bws) in SETS.items():
        x, y = load(fname, xc, yc)
        vt = "c" * len(xc)
        q = x[::7]  # every 7th training point as queries
        with open(os.path.join(out, f"multi_{name}.csv"), "w") as f:
            f.write("kind,bandwidth," + ",".join(xc) + ",value\n")
            for h in bws:
                kr = KernelReg(y, x, vt, reg_type="lc", bw=h)
                mean, _ = kr.fit(q)
                hs = " ".join(repr(float(v)) for v in h)
                for qi, mi in zip(q, mean):
                    f.write("predict," + hs + "," + ",".join(repr(float(v)) for v in qi) + "," + repr(float(mi)) + "\n")
                loo = kr.cv_loo(np.array(h), kr._est_loc_constant)
                f.write("loo," + hs + "," + ",".join("" for _ in xc) + "," + repr(float(loo)) + "\n")
        t0 = time.perf_counter()
        kr = KernelReg(y, x, vt, reg_type="lc", bw="cv_ls")
        seconds = time.perf_counter() - t0
        loo = float(kr.cv_loo(kr.bw, kr._est_loc_constant))
        cv_rows.append((name, " ".join(repr(float(v)) for v in kr.bw), repr(loo), f"{seconds:.1f}"))
        print(name, kr.bw, loo, f"{seconds:.1f} s", flush=True)
    with open(os.path.join(out, "multi_cv_ls.csv"), "w") as f:
        f.write("set,bandwidth,loo_mse,seconds\n")
        for r in cv_rows:
            f.write(",".join(r) + "\n")


if __name__ == "__main__":
    main()
