#!/usr/bin/python3
"""Make the golden files that nwreg's tests compare against.

References (Debian 12 packages): python3-statsmodels 0.13.5 (KernelReg, Gaussian kernel,
reg_type='lc' = Nadaraya-Watson), python3-torch 1.13 (the d2l training run), r-base-core
(bw.nrd0 = Silverman's rule). Run from the repository root:
    /usr/bin/python3 tests/golden/make_golden.py
The tests themselves need none of these. Every number is written with repr (shortest
round-trip form), so the tests read back exactly what the reference computed.
"""
import csv
import os
import subprocess
import time

import numpy as np
from statsmodels.nonparametric.kernel_regression import KernelReg

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "data")
OUT = os.path.join(ROOT, "tests", "golden")

# name -> (file, x column, y column, fixed bandwidths to check)
SETS = {
    "synthetic": ("synthetic.csv", "x", "y", [0.05, 0.3, 1.0]),
    "mcycle": ("mcycle.csv", "times", "accel", [0.5, 2.0, 10.0]),
    "faithful": ("faithful.csv", "waiting", "eruptions", [1.0, 4.0, 20.0]),
}


def load(name):
    fname, xc, yc, _ = SETS[name]
    with open(os.path.join(DATA, fname), newline="") as f:
        rows = list(csv.DictReader(f))
    x = np.array([float(r[xc]) for r in rows])
    y = np.array([float(r[yc]) for r in rows])
    return x, y


def queries(x):
    """The training x, then 41 points spanning the range widened by 10% each side."""
    lo, hi = x.min(), x.max()
    pad = 0.1 * (hi - lo)
    return np.concatenate([x, np.linspace(lo - pad, hi + pad, 41)])


def write(path, header, rows):
    with open(os.path.join(OUT, path), "w") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(repr(float(v)) if not isinstance(v, str) else v for v in r) + "\n")


def statsmodels_golden():
    cv_rows = []
    for name, (_, _, _, bws) in SETS.items():
        x, y = load(name)
        q = queries(x)
        pred_rows, loo_rows = [], []
        for h in bws:
            kr = KernelReg(y, x, "c", reg_type="lc", bw=[h])
            mean, _ = kr.fit(q)
            pred_rows += [(h, qi, mi) for qi, mi in zip(q, mean)]
            loo_rows.append((h, kr.cv_loo(np.array([h]), kr._est_loc_constant)))
        write(f"predict_{name}.csv", ["bandwidth", "query", "prediction"], pred_rows)
        write(f"loo_{name}.csv", ["bandwidth", "loo_mse"], loo_rows)

        t0 = time.perf_counter()
        kr = KernelReg(y, x, "c", reg_type="lc", bw="cv_ls")
        seconds = time.perf_counter() - t0
        h = float(kr.bw[0])
        cv_rows.append((name, h, kr.cv_loo(np.array([h]), kr._est_loc_constant), seconds))
        print(f"{name}: cv_ls h={h!r} loo={cv_rows[-1][2]!r} ({seconds:.2f} s)")
    write("cv_ls.csv", ["set", "bandwidth", "loo_mse", "seconds"], cv_rows)


def silverman_golden():
    """R's bw.nrd0 (Silverman's rule of thumb) on each set's x column."""
    rows = []
    for name, (fname, xc, _, _) in SETS.items():
        expr = (f'd <- read.csv("{os.path.join(DATA, fname)}"); '
                f'cat(sprintf("%.17g", bw.nrd0(d[["{xc}"]])))')
        value = float(subprocess.check_output(["Rscript", "-e", expr], text=True))
        rows.append((name, value))
    write("silverman.csv", ["set", "bandwidth"], rows)


def d2l_golden():
    """The d2l training run: w = 1/h, keys and values = the other 49 points (LOO),
    summed squared error, plain SGD at lr 0.5, 5 full-batch steps (float64).
    Rows: epoch e = 0..5, the weight w after e steps and the summed LOO loss at that w."""
    import torch

    x, y = load("synthetic")
    xt = torch.tensor(x, dtype=torch.float64)
    yt = torch.tensor(y, dtype=torch.float64)
    n = len(x)
    mask = ~torch.eye(n, dtype=torch.bool)
    keys = xt.repeat(n, 1)[mask].reshape(n, n - 1)
    values = yt.repeat(n, 1)[mask].reshape(n, n - 1)
    rows = []
    for w0 in (0.3, 1.0):
        w = torch.tensor([w0], dtype=torch.float64, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.5)

        def loss_at():
            a = torch.softmax(-((xt[:, None] - keys) * w) ** 2 / 2, dim=1)
            return ((a * values).sum(1) - yt).pow(2).sum()

        for epoch in range(6):
            opt.zero_grad()
            loss = loss_at()
            rows.append((w0, float(epoch), float(w.detach()[0]), float(loss.detach())))
            if epoch < 5:
                loss.backward()
                opt.step()
    write("d2l_sgd.csv", ["w0", "epoch", "w", "loss_sum"], rows)


if __name__ == "__main__":
    statsmodels_golden()
    silverman_golden()
    d2l_golden()
