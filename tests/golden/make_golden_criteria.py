#!/usr/bin/python3
"""Golden values for the bandwidth selection criteria at fixed bandwidths: the in-sample mean
squared residual RSS/n, the trace of the smoother matrix tr(H), AICc and GCV, for local constant
(NW) and local linear, four kernels, one and two x columns.

Two references: a brute-force numpy computation of the whole smoother matrix (each row the
weights of the estimate at a training point, key j included; local linear's row is the weighted
least-squares hat row), and statsmodels KernelReg.aic_hurvich for Gaussian NW. statsmodels
0.13's aic_hurvich takes tr(H) from the NW weights whatever reg_type is (so for local linear it is
not the AICc of the local-linear smoother), and its residuals from a KernelReg built without
ckertype (so for other kernels they are the Gaussian fit's): the file records it for Gaussian NW
only, where it is the textbook AICc.
Kernels as in make_golden_methods.py (textbook tricube, Epanechnikov, Laplace).
Run from the repository root:
    /usr/bin/python3 tests/golden/make_golden_criteria.py
Writes tests/golden/criteria.csv.
"""
import os

import numpy as np
from statsmodels.nonparametric.kernel_regression import KernelReg

from columns import ROOT, load
import make_golden_methods  # registers the textbook kernels in statsmodels' table  # noqa: F401

KERNELS = {
    "gaussian": lambda u: np.exp(-0.5 * u * u),
    "laplace": lambda u: np.exp(-np.abs(u)),
    "tricube": lambda u: np.where(np.abs(u) < 1, (1 - np.abs(u) ** 3) ** 3, 0.0),
    "epanechnikov": lambda u: np.where(np.abs(u) < 1, 1 - u * u, 0.0),
}

CASES = {
    "mcycle": ("mcycle.csv", ["times"], "accel", [[0.9], [4.0]]),
    "boston": ("boston.csv", ["lstat", "rm"], "medv", [[1.5, 0.4], [8.0, 2.0]]),
}


def smoother(x, h, kernel, reg):
    """The n x n smoother matrix: row j holds the weights of the estimate at x_j."""
    n, d = x.shape
    K = KERNELS[kernel]
    H = np.zeros((n, n))
    for j in range(n):
        u = (x - x[j]) / h
        e = np.prod(K(u), axis=1)
        if reg == "lc":
            H[j] = e / e.sum()
        else:
            Z = np.hstack([np.ones((n, 1)), u])
            S = (Z * e[:, None]).T @ Z
            c = np.linalg.solve(S, np.eye(d + 1)[0])
            H[j] = e * (Z @ c)
    return H


def main():
    rows = []
    for name, (fname, xc, yc, bandwidths) in CASES.items():
        x, y = load(fname, xc, yc)
        n = len(y)
        for h in bandwidths:
            for kernel in KERNELS:
                for reg in ("lc", "ll"):
                    if kernel in ("tricube", "epanechnikov") and h[0] < 4:
                        continue  # rows with too few keys in reach for a line: not a reference case
                    H = smoother(x, np.array(h), kernel, reg)
                    rss = float(((y - H @ y) ** 2).mean())
                    tr = float(np.trace(H))
                    aicc = np.log(rss) + (1 + tr / n) / (1 - (tr + 2) / n)
                    gcv = n * n * rss / (n - tr) ** 2
                    sm = "none"
                    if reg == "lc" and kernel == "gaussian":
                        kr = KernelReg(y, x, "c" * len(xc), reg_type=reg, bw=h, ckertype=kernel)
                        sm = repr(float(np.ravel(kr.aic_hurvich(np.array(h)))[0]))
                    rows.append([name, reg, kernel, " ".join(repr(float(v)) for v in h), repr(rss), repr(tr),
                                 repr(float(aicc)), repr(float(gcv)), sm])
    with open(os.path.join(ROOT, "tests", "golden", "criteria.csv"), "w") as f:
        f.write("set,reg,kernel,bandwidth,rss_mean,trace,aicc,gcv,statsmodels_aicc\n")
        for r in rows:
            f.write(",".join(r) + "\n")


if __name__ == "__main__":
    main()
