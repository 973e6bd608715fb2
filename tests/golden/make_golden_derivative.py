#!/usr/bin/python3
"""Golden slopes from statsmodels KernelReg: local linear (reg_type='ll', Gaussian product
kernel) means and marginal effects at fixed bandwidths on data/mcycle.csv (one column) and
data/boston.csv (two), at every 7th training point; and, for the record, statsmodels' local
constant marginal effects beside a central difference of its own local constant mean (their
ratio: see the README, "Slopes"). Run from the repository root:
    /usr/bin/python3 tests/golden/make_golden_derivative.py
"""
import os

import numpy as np
from statsmodels.nonparametric.kernel_regression import KernelReg

from columns import ROOT, load

SETS = {  # name -> (file, x columns, y column, bandwidths)
    "mcycle": ("mcycle.csv", ["times"], "accel", [[2.0], [5.0]]),
    "boston": ("boston.csv", ["lstat", "rm"], "medv", [[1.0, 0.3], [3.0, 1.0]]),
}


def fmt(v):
    return repr(float(v))


def main():
    out = os.path.join(ROOT, "tests", "golden")
    with open(os.path.join(out, "derivative.csv"), "w") as f:
        f.write("set,bandwidth,query,mean,slope\n")
        for name, (fname, xc, yc, bws) in SETS.items():
            x, y = load(fname, xc, yc)
            q = x[::7]
            for h in bws:
                kr = KernelReg(y, x, "c" * len(xc), reg_type="ll", bw=h)
                mean, mfx = kr.fit(q)
                for qi, mi, di in zip(q, mean, np.atleast_2d(mfx)):
                    f.write(f"{name},{' '.join(fmt(v) for v in h)},{' '.join(fmt(v) for v in qi)},{fmt(mi)},"
                            f"{' '.join(fmt(v) for v in di)}\n")
    # statsmodels' local constant marginal effects against a central difference of its mean.
    x, y = load("mcycle.csv", ["times"], "accel")
    kr = KernelReg(y, x, "c", reg_type="lc", bw=[2.0])
    with open(os.path.join(out, "derivative_lc_statsmodels.csv"), "w") as f:
        f.write("query,statsmodels_mfx,central_difference,ratio\n")
        for q in [10.0, 16.0, 20.0, 30.0, 40.0]:
            _, mfx = kr.fit(np.array([[q]]))
            eps = 1e-4
            up, _ = kr.fit(np.array([[q + eps]]))
            dn, _ = kr.fit(np.array([[q - eps]]))
            cd = (up[0] - dn[0]) / (2 * eps)
            f.write(f"{q},{fmt(mfx[0][0])},{fmt(cd)},{fmt(cd / mfx[0][0])}\n")


if __name__ == "__main__":
    main()
