#!/usr/bin/python3
"""Golden values for categorical x columns, from statsmodels KernelReg on data/birthwt.csv:
Gaussian kernels for continuous columns ('c'), Aitchison-Aitken for unordered ('u'),
Wang-van Ryzin for ordered ('o'). Predictions and the LOO error at fixed bandwidths (lambda for
a categorical column), local constant ('lc') and local linear ('ll'), and what bw='cv_ls'
reaches with its time. Run from the repository root (takes a minute or two):
    /usr/bin/python3 tests/golden/make_golden_categorical.py

race is given to statsmodels as codes in nwreg's order of levels (sorted: black 0, other 1,
white 2); the golden file names levels by their labels. statsmodels' local linear fit puts
every column in its local line, categorical ones too (their codes' differences); nwreg's
--method local-linear keeps categorical columns out of the line by default (as R np), so the
'll' rows' value comes from a weighted least squares fit written here with the same kernel
weights, and statsmodels' 'll' value is beside it (column sm_ll): nwreg's with
--categorical-fit line. Columns with nothing to hold say none.
"""
import csv
import os
import time

import numpy as np
from statsmodels.nonparametric.kernel_regression import KernelReg
from statsmodels.nonparametric import kernels

from columns import ROOT

RACE = ["black", "other", "white"]
SETS = {  # name -> (x columns, var_type, fixed bandwidths)
    "lwt_race": (["lwt", "race"], "cu", [[20.0, 0.3], [40.0, 0.05]]),
    "mixed": (["age", "lwt", "race", "smoke", "ftv"], "ccuuo", [[3.0, 20.0, 0.3, 0.2, 0.5], [6.0, 40.0, 0.6, 0.45, 0.1]]),
    "levels_only": (["race", "ftv"], "uo", [[0.2, 0.3], [0.5, 0.8]]),
}


def load():
    with open(os.path.join(ROOT, "data", "birthwt.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    cols = {}
    for c in ["age", "lwt", "smoke", "ftv", "bwt"]:
        cols[c] = np.array([float(r[c]) for r in rows])
    cols["race"] = np.array([float(RACE.index(r["race"])) for r in rows])
    return cols


def weights(x, q, bw, vt):
    """The product kernel weights of every row at query q, as statsmodels' gpke makes them."""
    w = np.ones(len(x))
    for k, t in enumerate(vt):
        if t == "c":
            w *= kernels.gaussian(bw[k], x[:, k], q[k]) / bw[k]
        elif t == "u":
            w *= kernels.aitchison_aitken(bw[k], x[:, k], q[k], num_levels=len(np.unique(x[:, k])))
        else:
            w *= kernels.wang_ryzin(bw[k], x[:, k], q[k])
    return w


def local_linear(x, y, q, bw, vt, skip=None):
    """Weighted least squares of y on (1, x_c - q_c) over the continuous columns only."""
    w = weights(x, q, bw, vt)
    if skip is not None:
        w[skip] = 0
    cont = [k for k, t in enumerate(vt) if t == "c"]
    Z = np.column_stack([np.ones(len(x))] + [x[:, k] - q[k] for k in cont])
    A = Z.T @ (Z * w[:, None])
    b = Z.T @ (w * y)
    return float(np.linalg.solve(A, b)[0])


def fmt(v):
    return repr(float(v))


def main():
    cols = load()
    y = cols["bwt"]
    out = os.path.join(ROOT, "tests", "golden")
    cv_rows = []
    with open(os.path.join(out, "categorical.csv"), "w") as f:
        f.write("set,method,kind,bandwidth,query,value,sm_ll\n")
        for name, (xc, vt, bws) in SETS.items():
            x = np.column_stack([cols[c] for c in xc])
            qi = range(0, len(y), 7)  # every 7th training row as a query
            for h in bws:
                hs = " ".join(fmt(v) for v in h)
                kr = KernelReg(y, x, vt, reg_type="lc", bw=h)
                mean, _ = kr.fit(x[list(qi)])
                kl = KernelReg(y, x, vt, reg_type="ll", bw=h)
                sm_ll, _ = kl.fit(x[list(qi)])
                for j, i in enumerate(qi):
                    q = " ".join(RACE[int(v)] if c == "race" else fmt(v) for c, v in zip(xc, x[i]))
                    f.write(f"{name},nw,predict,{hs},{q},{fmt(mean[j])},none\n")
                    f.write(f"{name},local-linear,predict,{hs},{q},{fmt(local_linear(x, y, x[i], h, vt))},{fmt(sm_ll[j])}\n")
                loo = kr.cv_loo(np.array(h), kr._est_loc_constant)
                f.write(f"{name},nw,loo,{hs},,{fmt(loo)},none\n")
                ll_loo = np.mean([(y[i] - local_linear(x, y, x[i], h, vt, skip=i)) ** 2 for i in range(len(y))])
                f.write(f"{name},local-linear,loo,{hs},,{fmt(ll_loo)},none\n")
            t0 = time.perf_counter()
            kr = KernelReg(y, x, vt, reg_type="lc", bw="cv_ls")
            seconds = time.perf_counter() - t0
            loo = float(kr.cv_loo(kr.bw, kr._est_loc_constant))
            cv_rows.append((name, " ".join(fmt(v) for v in kr.bw), fmt(loo), f"{seconds:.1f}"))
            print(name, kr.bw, loo, f"{seconds:.1f} s", flush=True)
    with open(os.path.join(out, "categorical_cv_ls.csv"), "w") as f:
        f.write("set,bandwidth,loo_mse,seconds\n")
        for r in cv_rows:
            f.write(",".join(r) + "\n")


if __name__ == "__main__":
    main()
