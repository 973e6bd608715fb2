#!/usr/bin/python3
"""Golden values for the attention scores (--score dot, scaled-dot, general, additive).

Reference: PyTorch (Debian 12's python3-torch 1.13), float64, autograd for every gradient.
For each case: predictions, attention rows and slopes df/dq at query points, the leave-one-out
error (mean and sum) with its gradient in the parameters, the in-sample fit's tr(H) and error,
and the effective number of neighbours, at given parameters (drawn here from a seeded
generator; the tests read them from the file). Run from the repository root:
    /usr/bin/python3 tests/golden/make_golden_scores.py > tests/golden/scores.json
The tests need no Python. Numbers are written with repr (shortest round-trip form).
"""
import csv
import json
import math
import os

import torch

torch.set_default_dtype(torch.float64)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load(file, xs, y, rows):
    with open(os.path.join(ROOT, "data", file)) as f:
        r = list(csv.DictReader(f))[:rows]
    return [[float(row[c]) for c in xs] for row in r], [float(row[y]) for row in r]


def scores(kind, theta, q, k, d, H, bias):
    """score(q_j, k_i) for queries q (m x d) and keys k (n x d): m x n."""
    if kind == "dot":
        return q @ k.T
    if kind == "scaled-dot":
        return q @ k.T / math.sqrt(d)
    if kind == "general":
        W = theta.reshape(d, d)
        return q @ W @ k.T
    v = theta[:H]
    Wq = theta[H:H + H * d].reshape(H, d)
    Wk = theta[H + H * d:H + 2 * H * d].reshape(H, d)
    b = theta[H + 2 * H * d:] if bias else torch.zeros(H)
    pre = (q @ Wq.T)[:, None, :] + (k @ Wk.T)[None, :, :] + b
    return torch.tanh(pre) @ v


def case(name, file, xs, y, rows, kind, H=0, bias=True, weights=None, seed=1, queries=None):
    xl, yl = load(file, xs, y, rows)
    X, Y = torch.tensor(xl), torch.tensor(yl)
    n, d = X.shape
    W = torch.tensor(weights) if weights else torch.ones(n)
    g = torch.Generator().manual_seed(seed)
    size = {"dot": 0, "scaled-dot": 0, "general": d * d, "additive": H * (2 * d + 1) + (H if bias else 0)}[kind]
    sd = X.std(0)
    if kind == "general":
        theta = (torch.eye(d) + 0.3 * torch.randn(d, d, generator=g) / (sd[:, None] * sd[None, :])).reshape(-1)
    elif kind == "additive":
        v = torch.randn(H, generator=g) * 2
        Wq = torch.randn(H, d, generator=g) / sd
        Wk = torch.randn(H, d, generator=g) / sd
        b = -(Wq + Wk) @ X.mean(0) + 0.5 * torch.randn(H, generator=g)
        theta = torch.cat([v, Wq.reshape(-1), Wk.reshape(-1)] + ([b] if bias else []))
    else:
        theta = torch.zeros(0)
    assert theta.numel() == size
    logw = torch.where(W > 0, torch.log(W), torch.tensor(-math.inf))

    def attention(q, exclude_self):
        s = scores(kind, theta, q, X, d, H, bias) + logw
        if exclude_self:
            s = s.masked_fill(torch.eye(n, dtype=torch.bool), -math.inf)
        return torch.softmax(s, dim=1)

    out = {"name": name, "file": file, "x": xs, "y": y, "rows": rows, "score": kind, "hidden": H, "bias": bias,
           "weights": weights}
    # The LOO error and its gradient: rows of weight 0 count for nothing.
    theta.requires_grad_(True)
    keep = W > 0
    for loss in ("mean", "sum"):
        a = attention(X, True)
        f = a @ Y
        err = (W * (f - Y) ** 2)[keep].sum()
        L = err / W[keep].sum() if loss == "mean" else err
        out["loo_" + loss] = L.item()
        if size:
            (grad,) = torch.autograd.grad(L, theta)
            out["gradient_" + loss] = grad.tolist()
    theta = theta.detach()
    with torch.no_grad():
        a = attention(X, True)
        inv = 1 / (a ** 2).sum(1)
        out["neighbours"] = ((W * inv)[keep].sum() / W[keep].sum()).item()
        a_in = attention(X, False)
        f_in = a_in @ Y
        out["insample_mse"] = ((W * (f_in - Y) ** 2)[keep].sum() / W[keep].sum()).item()
        out["trace"] = torch.diagonal(a_in)[keep].sum().item()
    Q = torch.tensor(queries, requires_grad=True)
    a = attention(Q, False)
    f = a @ Y
    slopes = [torch.autograd.grad(f[j], Q, retain_graph=True)[0][j].tolist() for j in range(len(queries))]
    out.update(theta=theta.tolist(), queries=queries, predict=f.detach().tolist(), slopes=slopes,
               attention=a.detach()[0].tolist())
    return out


q1 = [[0.0], [1.3], [2.5], [4.9], [6.0]]
q2 = [[5.0, 6.0], [12.0, 6.5], [30.0, 4.0]]
w50 = [float((i * 7) % 4) for i in range(50)]  # 0 to 3, some 0
cases = [
    case("dot_synthetic", "synthetic.csv", ["x"], "y", 50, "dot", queries=q1),
    case("scaled_boston", "boston.csv", ["lstat", "rm"], "medv", 60, "scaled-dot", queries=q2),
    case("dot_boston_weights", "boston.csv", ["lstat", "rm"], "medv", 50, "dot", weights=w50, queries=q2),
    case("general_synthetic", "synthetic.csv", ["x"], "y", 50, "general", queries=q1),
    case("general_boston", "boston.csv", ["lstat", "rm"], "medv", 60, "general", seed=2, queries=q2),
    case("additive_synthetic", "synthetic.csv", ["x"], "y", 50, "additive", H=4, queries=q1),
    case("additive_nobias", "synthetic.csv", ["x"], "y", 50, "additive", H=3, bias=False, seed=3, queries=q1),
    case("additive_boston_weights", "boston.csv", ["lstat", "rm"], "medv", 50, "additive", H=5, weights=w50,
         seed=4, queries=q2),
]
print(json.dumps({"generator": "tests/golden/make_golden_scores.py", "cases": cases}, indent=1))
