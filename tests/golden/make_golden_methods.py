#!/usr/bin/python3
"""Golden values for the kernels and methods, from statsmodels KernelReg's estimators: local
constant and local linear (reg_type='lc', 'll'), Gaussian and the other kernels, with one and two
x columns: predictions and LOO error at fixed bandwidths, and what bw='cv_ls' reaches for local
linear.

statsmodels' own tricube (0.13/0.14) is wrong outside its support: it sets u = 0 there, so keys
beyond h get the kernel's largest weight. The kernels below are registered in its kernel table in
their textbook form (constants do not matter to the ratio): tricube (1-|u|^3)^3 and Epanechnikov
1-u^2 for |u| < 1, uniform for |u| <= 1, Laplace exp(-|u|).
Run from the repository root (takes a minute or two):
    /usr/bin/python3 tests/golden/make_golden_methods.py
Writes tests/golden/methods.csv (kind,set,reg,kernel,bandwidth,x...,value) and
tests/golden/methods_cv_ls.csv.
"""
import os
import time

import numpy as np
from statsmodels.nonparametric import _kernel_base
from statsmodels.nonparametric.kernel_regression import KernelReg

from columns import ROOT, load


def _u(h, Xi, x):
    return (Xi - x) / h


_kernel_base.kernel_func.update(
    tricube=lambda h, Xi, x: np.where(np.abs(_u(h, Xi, x)) < 1, (1 - np.abs(_u(h, Xi, x)) ** 3) ** 3, 0.0),
    epanechnikov=lambda h, Xi, x: np.where(np.abs(_u(h, Xi, x)) < 1, 1 - _u(h, Xi, x) ** 2, 0.0),
    uniform=lambda h, Xi, x: np.where(np.abs(_u(h, Xi, x)) <= 1, 1.0, 0.0),
    laplace=lambda h, Xi, x: np.exp(-np.abs(_u(h, Xi, x))),
)


# name -> (file, x columns, y column, [(reg, kernel, bandwidth)])
CASES = {
    "mcycle": ("mcycle.csv", ["times"], "accel",
               [("ll", "gaussian", [1.0]), ("ll", "gaussian", [2.5]), ("lc", "tricube", [3.0]),
                ("ll", "tricube", [4.0]), ("lc", "epanechnikov", [3.0]), ("ll", "epanechnikov", [4.0]),
                ("lc", "uniform", [2.5]), ("lc", "laplace", [1.0]), ("ll", "laplace", [1.5])]),
    "boston": ("boston.csv", ["lstat", "rm"], "medv",
               [("ll", "gaussian", [1.0, 0.3]), ("ll", "gaussian", [3.0, 1.0]), ("lc", "tricube", [8.0, 2.0]),
                ("ll", "tricube", [10.0, 3.0]), ("lc", "epanechnikov", [8.0, 2.0]), ("lc", "laplace", [1.0, 0.3]),
                ("ll", "laplace", [2.0, 0.6])]),
}


def main():
    out = os.path.join(ROOT, "tests", "golden")
    rows = []
    for name, (fname, xc, yc, runs) in CASES.items():
        x, y = load(fname, xc, yc)
        vt = "c" * len(xc)
        if len(xc) == 1:  # a grid over the data, edges included
            q = np.linspace(x.min(), x.max(), 23)[:, None]
        else:
            q = x[::7]
        for reg, ker, h in runs:
            kr = KernelReg(y, x, vt, reg_type=reg, bw=h, ckertype=ker)
            mean, _ = kr.fit(q)
            hs = " ".join(repr(float(v)) for v in h)
            for qi, mi in zip(q, mean):
                if np.isfinite(mi):  # tricube: a query with no key in reach is nan there
                    rows.append(["predict", name, reg, ker, hs] + [repr(float(v)) for v in qi] + [repr(float(mi))])
            func = kr._est_loc_linear if reg == "ll" else kr._est_loc_constant
            loo = float(kr.cv_loo(np.array(h), func))
            assert np.isfinite(loo), (name, reg, ker, h)  # every row has another key in reach
            rows.append(["loo", name, reg, ker, hs] + [""] * len(xc) + [repr(loo)])
    with open(os.path.join(out, "methods.csv"), "w") as f:
        f.write("kind,set,reg,kernel,bandwidth,x1,x2,value\n")
        for r in rows:
            pad = 8 - len(r)
            f.write(",".join(r[:-1] + [""] * pad + r[-1:]) + "\n")
    cv = []
    for name in ("mcycle", "boston"):
        fname, xc, yc, _ = CASES[name]
        x, y = load(fname, xc, yc)
        t0 = time.perf_counter()
        kr = KernelReg(y, x, "c" * len(xc), reg_type="ll", bw="cv_ls")
        seconds = time.perf_counter() - t0
        loo = float(kr.cv_loo(kr.bw, kr._est_loc_linear))
        cv.append((name, " ".join(repr(float(v)) for v in kr.bw), repr(loo), f"{seconds:.1f}"))
        print(name, kr.bw, loo, f"{seconds:.1f} s", flush=True)
    with open(os.path.join(out, "methods_cv_ls.csv"), "w") as f:
        f.write("set,bandwidth,loo_mse,seconds\n")
        for r in cv:
            f.write(",".join(r) + "\n")


if __name__ == "__main__":
    main()
