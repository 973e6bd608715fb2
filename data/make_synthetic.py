#!/usr/bin/python3
"""Make data/synthetic.csv: the seed texts' (d2l) toy regression set.

y = 2 sin(x) + x^0.8 + N(0, 0.5^2), 50 sorted x drawn uniform on [0, 5).
numpy's PCG64 generator with a fixed seed, so the file is reproducible:
    /usr/bin/python3 data/make_synthetic.py > data/synthetic.csv
Values are written in shortest round-trip form (repr), so they read back exactly.
"""
import sys

import numpy as np

SEED = 20261121
N = 50

rng = np.random.default_rng(SEED)
x = np.sort(rng.uniform(0.0, 5.0, N))
y = 2.0 * np.sin(x) + x ** 0.8 + rng.normal(0.0, 0.5, N)

out = sys.stdout
out.write("x,y\n")
for xi, yi in zip(x, y):
    out.write(f"{float(xi)!r},{float(yi)!r}\n")
