#!/usr/bin/python3
"""Golden standard errors, bands and fit statistics on real data, from a direct implementation
of their definitions (numpy, every key, float64; quantiles by mpmath at 30 digits), independent
of nwreg's engine. For each case (data set, method, fixed Gaussian h) at a few query points:

  prediction, se                     se(q)^2 = sigma^2(q) sum_i w_i(q)^2, sigma^2(q) = sum_i a_i(q) r_i^2,
                                     w the estimate's weights, a NW's normalised kernel weights,
                                     r_i = y_i - f_-i(x_i) the leave-one-out residuals
  plain_lower, plain_upper           prediction -+ z se, z = Phi^-1(0.975)
  rbc_lower, rbc_upper               f_q -+ t se_q: f_q the local polynomial of degree max(p + 1, 2)
                                     at the same h, se_q its se from the same sigma^2, t Student's
                                     0.975 quantile with nu = 1 / sum a_i(q)^2 (sigma^2's own);
                                     where nu < 4, sigma^2 topped up to 4 residuals' worth with the
                                     mean r_i^2 and t with the mixture's Satterthwaite df,
                                     1 / ((nu/4)^2 / nu + (1 - nu/4)^2 / n); where se_q > 2.5
                                     se, the centre f + lambda (f_q - f), lambda = 6.25 sum w^2 /
                                     sum w_q^2, and
                                     its se from the weights (1 - lambda) w + lambda w_q
  critical, kappa0                   the simultaneous rbc band's multiplier over these queries: the
                                     tube formula's t form 2 P(T_nu > c) + kappa0/pi (1 + c^2/nu)^(-nu/2)
                                     = 0.05, kappa0 the length of the path of the corrected fit's
                                     unit weight vectors over the sorted queries, nu the harmonic mean
                                     of max(4, 1 / sum a_i^2) over them
  df, gcv, aicc                      tr(H), n RSS / (n - tr H)^2, log(RSS / n) + (1 + tr(H)/n) /
                                     (1 - (tr(H) + 2)/n), in-sample (the same on every row of a case)

Run from the repository root: /usr/bin/python3 tests/golden/make_golden_bands.py
Writes tests/golden/bands.csv.
"""
import csv
import math

import mpmath
import numpy as np

mpmath.mp.dps = 30
CASES = [("mcycle", "times", "accel", "nw", 2.0, [5, 12, 20, 28, 36, 44, 52]),
         ("mcycle", "times", "accel", "local-linear", 2.5, [5, 12, 20, 28, 36, 44, 52]),
         ("cars", "speed", "dist", "nw", 3.0, [5, 8.5, 12, 15.5, 19, 22.5, 25]),
         ("lakehuron", "year", "level", "local-linear", 4.0, [1880, 1895, 1910, 1925, 1940, 1955, 1970])]


def read(name, xc, yc):
    with open(f"data/{name}.csv") as f:
        rows = list(csv.DictReader(f))
    return np.array([float(r[xc]) for r in rows]), np.array([float(r[yc]) for r in rows])


def weights(q, x, h, degree, leave=None):
    """The estimate's weights at q over every key (0 for the left-out one)."""
    d = (x - q) / h
    e = np.exp(-0.5 * (d * d - np.min(d * d if leave is None else np.delete(d * d, leave))))
    if leave is not None:
        e[leave] = 0.0
    if degree == 0:
        return e / e.sum()
    Z = np.vander(d, degree + 1, increasing=True)
    S = (Z * e[:, None]).T @ Z
    c = np.linalg.solve(S, np.eye(degree + 1)[0])
    return e * (Z @ c)


def t_quantile(p, nu):
    f = lambda t: 1 - mpmath.betainc(nu / 2, 0.5, 0, nu / (nu + t * t), regularized=True) / 2 - p
    lo, hi = mpmath.mpf(0), mpmath.mpf(1)
    while f(hi) < 0:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return float((lo + hi) / 2)


def main():
    out = []
    for name, xc, yc, method, h, qs in CASES:
        x, y = read(name, xc, yc)
        n = len(x)
        p = 0 if method == "nw" else 1
        r = np.array([y[j] - weights(x[j], x, h, p, leave=j) @ y for j in range(n)])
        H = np.array([weights(x[j], x, h, p) for j in range(n)])
        trace = float(np.trace(H))
        rss = float(np.sum((y - H @ y) ** 2))
        gcv = n * rss / (n - trace) ** 2
        aicc = math.log(rss / n) + (1 + trace / n) / (1 - (trace + 2) / n)
        z = float(-mpmath.erfinv(-0.95) * mpmath.sqrt(2))
        q = np.array(sorted(qs), dtype=float)
        rows, units, inv_nu = [], [], 0.0
        for qq in q:
            w = weights(qq, x, h, p)
            a = weights(qq, x, h, 0)
            wc = weights(qq, x, h, max(p + 1, 2))
            sigma2 = a @ (r * r)
            se = math.sqrt(sigma2 * (w @ w))
            f, fc = w @ y, wc @ y
            nu = 1 / (a @ a)
            s2 = sigma2 if nu >= 4 else (nu * sigma2 + (4 - nu) * np.mean(r * r)) / 4
            lam = min(1.0, 6.25 * (w @ w) / (wc @ wc))
            wl = (1 - lam) * w + lam * wc
            centre, se_c = f + lam * (fc - f), math.sqrt(s2 * (wl @ wl))
            share = nu / 4  # topped up: Satterthwaite's degrees of freedom of the mixture
            t = t_quantile(0.975, nu if nu >= 4 else 1 / (share * share / nu + (1 - share) ** 2 / len(r)))
            rows.append([qq, f, se, f - z * se, f + z * se, centre - t * se_c, centre + t * se_c])
            units.append(wc / np.linalg.norm(wc))
            inv_nu += min(0.25, a @ a) / len(q)
        kappa0 = sum(2 * math.asin(np.linalg.norm(units[i] - units[i + 1]) / 2) for i in range(len(q) - 1))
        nu = 1 / inv_nu
        # P(|T_nu| > c) = I_{nu / (nu + c^2)}(nu / 2, 1 / 2), plus the tube's term, falls through 0.05.
        def g(c):
            return (mpmath.betainc(nu / 2, 0.5, 0, nu / (nu + c * c), regularized=True)
                    + kappa0 / mpmath.pi * (1 + c * c / nu) ** (-nu / 2) - 0.05)
        lo, hi = mpmath.mpf(z), mpmath.mpf(20)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if g(mid) > 0 else (lo, mid)
        critical = float((lo + hi) / 2)
        for row in rows:
            out.append([name, xc, yc, method, h] + row + [critical, kappa0, trace, gcv, aicc])
    with open("tests/golden/bands.csv", "w") as f:
        f.write("set,x,y,method,h,q,prediction,se,plain_lower,plain_upper,rbc_lower,rbc_upper,critical,kappa0,df,gcv,aicc\n")
        for row in out:
            f.write(",".join(v if isinstance(v, str) else repr(float(v)) for v in row) + "\n")


if __name__ == "__main__":
    main()
