#!/usr/bin/python3
"""The scores side by side on simulated d2l sines: y = 2 sin x + x^0.8 + N(0, 0.5^2), x uniform
on [0, 5), n = 50 training rows (as data/synthetic.csv), 100 data sets (numpy PCG64, seeds
1..100). For each score (learned with its defaults): the leave-one-out error it reports, and the
error of its curve against the true one at 1000 fresh points (what the LOO error estimates,
less the noise variance 0.25). Prints medians and each score's ratio to the Gaussian's.
Usage: bench/scores.py [path/to/nwreg] [data sets]   (needs python3-numpy)
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

nwreg = sys.argv[1] if len(sys.argv) > 1 else "build/src/nwreg"
sets = int(sys.argv[2]) if len(sys.argv) > 2 else 100
scores = ["gaussian", "dot", "scaled-dot", "general", "additive"]
truth = lambda x: 2 * np.sin(x) + x ** 0.8
rows = {s: {"loo": [], "err": []} for s in scores}
with tempfile.TemporaryDirectory() as tmp:
    xq = np.linspace(0, 5, 1000, endpoint=False)
    query = os.path.join(tmp, "q.csv")
    np.savetxt(query, xq, header="x", comments="", fmt="%r")
    for seed in range(1, sets + 1):
        rng = np.random.default_rng(seed)
        x = np.sort(rng.uniform(0, 5, 50))
        y = truth(x) + rng.normal(0, 0.5, 50)
        train = os.path.join(tmp, "train.csv")
        np.savetxt(train, np.column_stack([x, y]), header="x,y", comments="", delimiter=",", fmt="%r")
        for s in scores:
            model = os.path.join(tmp, "m.json")
            subprocess.run([nwreg, "fit", train, "--score", s, "-o", model, "-q"], check=True, stdout=subprocess.DEVNULL)
            loo = json.load(open(model))["loo_mse"]
            out = subprocess.run([nwreg, "predict", train, "--model", model, "--query", query, "-q"], check=True,
                                 stdout=subprocess.PIPE, text=True).stdout
            f = np.loadtxt(out.splitlines()[1:], delimiter=",")[:, 1]
            rows[s]["loo"].append(loo)
            rows[s]["err"].append(float(np.mean((f - truth(xq)) ** 2)))
g_loo, g_err = np.array(rows["gaussian"]["loo"]), np.array(rows["gaussian"]["err"])
print(f"# bench/scores.py: {sets} simulated d2l sines, n = 50 each (seeds 1..{sets})\n")
print("| score | median LOO error | median LOO / Gaussian's | median error against the true curve | median error / Gaussian's |")
print("|---|---|---|---|---|")
for s in scores:
    loo, err = np.array(rows[s]["loo"]), np.array(rows[s]["err"])
    print(f"| {s} | {np.median(loo):.3f} | {np.median(loo / g_loo):.2f} | {np.median(err):.3f} | {np.median(err / g_err):.2f} |")
a_loo, d_loo, q_loo = np.array(rows["additive"]["loo"]), np.array(rows["dot"]["loo"]), np.array(rows["general"]["loo"])
print(f"\nadditive's LOO error within 25% of the Gaussian's on {np.sum(a_loo <= 1.25 * g_loo)} of {sets} data sets;"
      f" general's at most dot's on {np.sum(q_loo <= d_loo)} of {sets}")
