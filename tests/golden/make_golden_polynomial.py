#!/usr/bin/python3
"""Golden values for --method local-polynomial: a weighted least squares fit of y on every
monomial of (x - q) up to the degree, with Gaussian product weights, written here in numpy
(long double where it matters is not needed at these sizes: the systems are solved by lstsq
on the weighted design). Predictions, slopes (the degree-1 coefficients) and the LOO error at
fixed bandwidths, on data/mcycle.csv (one column) and data/boston.csv (two). Run from the
repository root:
    /usr/bin/python3 tests/golden/make_golden_polynomial.py
"""
import itertools
import os

import numpy as np

from columns import ROOT, load

SETS = {  # name -> (file, x columns, y column, bandwidths)
    "mcycle": ("mcycle.csv", ["times"], "accel", [[2.0], [5.0]]),
    "boston": ("boston.csv", ["lstat", "rm"], "medv", [[2.0, 0.5], [4.0, 1.0]]),
}


def monomials(d, degree):
    """Exponent tuples of every monomial up to the degree, degree 0 and 1 first."""
    out = []
    for deg in range(degree + 1):
        for combo in itertools.combinations_with_replacement(range(d), deg):
            e = [0] * d
            for k in combo:
                e[k] += 1
            out.append(tuple(e))
    return out


def fit(x, y, q, h, degree, skip=None):
    """The local polynomial's value and slopes at q."""
    u = (x - q) / h
    w = np.exp(-0.5 * (u ** 2).sum(axis=1))
    if skip is not None:
        w[skip] = 0
    mons = monomials(x.shape[1], degree)
    Z = np.column_stack([np.prod((x - q) ** np.array(e), axis=1) for e in mons])
    sw = np.sqrt(w)
    beta = np.linalg.lstsq(Z * sw[:, None], y * sw, rcond=None)[0]
    slopes = [beta[mons.index(tuple(1 if j == k else 0 for j in range(x.shape[1])))] for k in range(x.shape[1])]
    return beta[0], slopes


def fmt(v):
    return repr(float(v))


def main():
    with open(os.path.join(ROOT, "tests", "golden", "polynomial.csv"), "w") as f:
        f.write("set,degree,bandwidth,kind,query,value,slope\n")
        for name, (fname, xc, yc, bws) in SETS.items():
            x, y = load(fname, xc, yc)
            for degree in (2, 3):
                for h in bws:
                    hs = " ".join(fmt(v) for v in h)
                    for q in x[3::11]:
                        m, s = fit(x, y, q, np.array(h), degree)
                        f.write(f"{name},{degree},{hs},predict,{' '.join(fmt(v) for v in q)},{fmt(m)},"
                                f"{' '.join(fmt(v) for v in s)}\n")
                    loo = np.mean([(y[i] - fit(x, y, x[i], np.array(h), degree, skip=i)[0]) ** 2 for i in range(len(y))])
                    f.write(f"{name},{degree},{hs},loo,,{fmt(loo)},none\n")


if __name__ == "__main__":
    main()
