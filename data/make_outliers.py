#!/usr/bin/python3
"""Make data/outliers.csv: a smooth curve with gross errors, for robust smoothing (--robust).

y = 2 sin(x) + x^0.8 + N(0, 0.3^2) at 120 sorted x uniform on [0, 10); one row in ten (drawn
at random) is a gross error, 3 to 8 above the curve (a sensor that sometimes double-counts).
numpy's PCG64 generator with a fixed seed, so the file is reproducible:
    /usr/bin/python3 data/make_outliers.py > data/outliers.csv
Values are written in shortest round-trip form (repr), so they read back exactly.
"""
import sys

import numpy as np

SEED = 20261125
N = 120

rng = np.random.default_rng(SEED)
x = np.sort(rng.uniform(0.0, 10.0, N))
y = 2.0 * np.sin(x) + x ** 0.8 + rng.normal(0.0, 0.3, N)
bad = rng.random(N) < 0.1
y[bad] += rng.uniform(3.0, 8.0, int(bad.sum()))

out = sys.stdout
out.write("x,y\n")
for xi, yi in zip(x, y):
    out.write(f"{float(xi)!r},{float(yi)!r}\n")
