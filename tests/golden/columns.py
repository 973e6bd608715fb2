"""Shared by the golden-file and benchmark scripts: the repository root, and a bundled data set's
columns as numpy arrays."""
import csv
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load(fname, xc, yc):
    """data/<fname>: the x columns xc as an n x d array, and y column yc."""
    with open(os.path.join(ROOT, "data", fname), newline="") as f:
        rows = list(csv.DictReader(f))
    return np.array([[float(r[c]) for c in xc] for r in rows]), np.array([float(r[yc]) for r in rows])
