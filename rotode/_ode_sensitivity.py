"""Sensitivities of a user's equations (`rotode.ODE`) with respect to ``y0`` and ``params``
(``rotode.integrate(ode, ..., sensitivity=["y0", "params"])``, docs/sensitivity.md).

Forward mode through the discrete map, the accepted steps held fixed (internal
differentiation: Bock 1981; Hairer, Norsett and Wanner I, sec. II.6): every step of the run is
taken again on the matrix ``Z = [y, Y]`` whose columns after the first carry the tangent, with
the method's own tableau, dense output and normalisation of the quaternion blocks.  ``f`` is a
black box (Python or compiled), so a stage's tangent ``J Y_j + f_p dp_j`` is the central
difference of ``f`` along the joint direction ``(Y_j, dp_j)``, with a step of ``cbrt(eps)``
relative to the size of the state and the parameters (an error of about 1e-10 relative for a
smooth ``f``: the documented accuracy).  A quaternion block's tangent is
``dtheta = 2 vec(q^-1 dq)`` (the right perturbation ``q exp(dtheta/2)``, body frame), in its
place in the state, so the tangent has ``n - n_blocks`` components.
"""
from __future__ import annotations

import numpy as np

from rotode import methods
from rotode.ode import ODE, _evaluate

__all__ = ["sizes", "replay"]

_H = np.finfo(float).eps ** (1.0 / 3.0)      # central differences: the optimal relative step


def sizes(model, n):
    """{"y0": tangent size, "params": number of parameters} of an ODE with state size n."""
    m = 0 if model.params is None else model.params.shape[model.params.ndim - 1]
    return {"y0": n - len(model.quaternions), "params": m}


class _Method:
    """The tableau, dense output and normalisation of a registry method (its ``"ode"``
    kernel: rk3, rk4, a pair on the state, or the multistep ab3 with Kutta's rk3 tableau for
    its first two steps)."""

    def __init__(self, name, normalize):
        spec = methods.get(name)
        self.ab3 = spec.kernel("ode") == "ab3"
        if self.ab3:
            spec = methods.get("rk3")
        a, b, c = spec.tableau.doubles
        self.s = len(b)
        self.a = [list(row) for row in a]
        self.b = list(b)
        self.c = list(c)
        self.normalize = normalize
        self.kind = None
        emb = spec.embedded
        if emb is None:
            return
        dd = emb.doubles
        self.kind = emb.kind.value                    # 0 standard, 1 DOP853
        self.a.append(list(b))                        # the FSAL stage
        self.c.append(1.0)
        self.dense = [list(r) for r in dd["dense"]]
        self.npow = emb.powers
        for row, cr in zip(dd["extra_a"], dd["extra_c"], strict=True):
            self.a.append(list(row))
            self.c.append(cr)


class _Equations:
    """f of one body (parameters p, or None) and ``F(t, Z) = [f, J Y_j + f_p dp_j]``."""

    def __init__(self, model, n, p):
        self.n, self.p = n, p
        # one private ODE whose parameters each evaluation sets (the runner's own call path)
        self.one = ODE(model.fun, n=n, quaternions=model.quaternions, params=p, args=model.args)

    def f(self, t, y, p):
        """f(t, y) with the parameters p, as the runner evaluates it."""
        self.one.params = p
        return _evaluate(self.one, self.n, t, np.ascontiguousarray(y))

    def F(self, t, Z, D):
        """(n, 1 + d): f(t, y) and the central differences along Z[:, 1:] and D."""
        y, p = Z[:, 0], self.p
        out = np.empty_like(Z)
        out[:, 0] = self.f(t, y, p)
        scale = 1.0 + np.abs(y).max() + (0.0 if p is None else np.abs(p).max())
        for j in range(1, Z.shape[1]):
            v, dp = Z[:, j], D[:, j - 1]
            size = max(np.abs(v).max(), np.abs(dp).max() if dp.size else 0.0)
            if size == 0.0:
                out[:, j] = 0.0
                continue
            e = _H * scale / size
            moved = dp.size and dp.any()
            fp = self.f(t, y + e * v, p + e * dp if moved else p)
            fm = self.f(t, y - e * v, p - e * dp if moved else p)
            out[:, j] = (fp - fm) / (2.0 * e)
        return out


def _components(blocks, n):
    """Per tangent component (block offset, axis) or (-1, state index), in state order."""
    comps = []
    for k in range(n):
        if k in blocks:
            comps += [(k, 0), (k, 1), (k, 2)]
        elif not any(b < k < b + 4 for b in blocks):
            comps.append((-1, k))
    return comps


def _seed(y0, comps, cols, m):
    """Z (n, 1 + d) and the parameter directions D (m, d) of the columns `cols`: ("y0", j)
    (tangent component j: dq = q (0, e_k/2) of a block, or e_k) or ("params", k)."""
    Z = np.zeros((y0.shape[0], 1 + len(cols)))
    Z[:, 0] = y0
    D = np.zeros((m, len(cols)))
    for c, (name, j) in enumerate(cols):
        if name == "params":
            D[j, c] = 1.0
            continue
        b, k = comps[j]
        if b < 0:
            Z[k, 1 + c] = 1.0
            continue
        q = y0[b:b + 4]
        e = np.zeros(3)
        e[k] = 0.5
        Z[b, 1 + c] = -q[1:] @ e
        Z[b + 1:b + 4, 1 + c] = q[0] * e + np.cross(q[1:], e)
    return Z, D


def _tangent(Z, comps):
    """The tangent columns of Z in tangent coordinates (n_t, d): 2 vec(q^-1 dq) per block."""
    out = np.empty((len(comps), Z.shape[1] - 1))
    for i, (b, k) in enumerate(comps):
        if b < 0:
            out[i] = Z[k, 1:]
            continue
        q, dq = Z[b:b + 4, 0], Z[b:b + 4, 1:]
        x = q[1:]
        # vec(conj(q) dq) = q0 dv - dq0 x - x cross dv
        v = q[0] * dq[1 + k] - dq[0] * x[k] - np.cross(x, dq[1:], axis=0)[k]
        out[i] = 2.0 * v / (q @ q)
    return out


def _normalize(Z, blocks):
    """q <- q/|q| for every block; its tangent by the derivative of the map,
    dq/|q| - q (q . dq)/|q|^3 (IN/OUT: Z)."""
    for b in blocks:
        q = Z[b:b + 4, 0].copy()
        nq = np.sqrt(q @ q)
        Z[b:b + 4, 1:] = Z[b:b + 4, 1:] / nq - np.outer(q, q @ Z[b:b + 4, 1:]) / nq**3
        Z[b:b + 4, 0] = q / nq


def _stages(M, eq, D, t, h, tn, Z, K, r1):
    """Stages len(K)..r1-1: K_r = F(t + c_r h, Z + h sum_j a_rj K_j), at tn when c_r = 1
    (IN/OUT: K)."""
    for r in range(len(K), r1):
        acc = np.zeros_like(Z)
        for j, arj in enumerate(M.a[r]):
            if arj != 0.0:
                acc = acc + arj * K[j]
        K.append(eq.F(tn if M.c[r] == 1.0 else t + M.c[r] * h, Z + h * acc, D))


def _dense(M, h, Z, Znew, K, x):
    """The pair's interpolant at t + x h (HNW sec. II.6 and II.10, rotode/erk.pxd)."""
    if M.kind == 0:
        acc = np.zeros_like(Z)
        for r in range(M.npow):
            Fr = h * sum(M.dense[j][r] * K[j] for j in range(len(K)) if M.dense[j][r] != 0.0)
            acc = acc + Fr * x ** (r + 1)
        return Z + acc
    dy = Znew - Z
    F = [dy, h * K[0] - dy, 2.0 * dy - h * (K[M.s] + K[0])]
    for r in range(4):
        F.append(h * sum(M.dense[r][j] * K[j] for j in range(len(K)) if M.dense[r][j] != 0.0))
    acc = np.zeros_like(Z)
    u = 1.0 - x
    for r in range(7):
        acc = (acc + F[6 - r]) * (x if r % 2 == 0 else u)
    return Z + acc


def _ab3_weights(h, h1, h2):
    """Variable-step Adams-Bashforth 3 weights (rotode/dynamic.pxd `ab3_weights`: the integrals
    over [0, h] of the Lagrange basis on the nodes 0, -h1, -(h1 + h2); Hairer, Norsett and
    Wanner I, 2nd ed., sec. III.5)."""
    a, bb = h1, h1 + h2
    i3, i2 = h * h * h / 3.0, 0.5 * h * h
    return ((i3 + (a + bb) * i2 + a * bb * h) / (a * bb), -(i3 + bb * i2) / (a * (bb - a)),
            (i3 + a * i2) / (bb * (bb - a)))


def _ab3_step(M, eq, D, hist, t, tn, Z):
    """One step of ab3 on Z as rotode/ode.pyx `_ab3_step` takes it: F at the step's start
    joins the history (``hist``: [(t, F)], newest last); the first two steps are Kutta's rk3
    (M's tableau), the later ones the variable-step weights of the last three starts."""
    h = tn - t
    F0 = eq.F(t, Z, D)
    if len(hist) < 2:
        K = [F0]
        _stages(M, eq, D, t, h, tn, Z, K, M.s)
        Znew = Z + h * sum(bj * K[j] for j, bj in enumerate(M.b) if bj != 0.0)
    else:
        (t2, F2), (t1, F1) = hist[-2], hist[-1]
        b0, b1, b2 = _ab3_weights(h, t - t1, t1 - t2)
        Znew = Z + (b0 * F0 + b1 * F1 + b2 * F2)
    hist.append((t, F0))
    del hist[:-2]
    return Znew


def replay(name, model, y0, p, ts, tout, cols, normalize):
    """(m, n_t, len(cols)): the derivative of one body's computed solution at the times
    `tout`, its steps `ts` held fixed (module docstring)."""
    n = y0.shape[0]
    M = _Method(name, normalize)
    blocks = tuple(model.quaternions)
    comps = _components(blocks, n)
    eq = _Equations(model, n, p)
    Z, D = _seed(np.asarray(y0, dtype=float), comps, cols, 0 if p is None else p.shape[0])
    out = np.empty((len(tout), len(comps), len(cols)))
    d = 1.0 if ts[-1] >= ts[0] else -1.0
    slot = 0
    while slot < len(tout) and tout[slot] == ts[0]:
        out[slot] = _tangent(Z, comps)
        slot += 1
    hist = []
    for i in range(len(ts) - 1):
        t, tn = ts[i], ts[i + 1]
        h = tn - t
        if M.ab3:
            Z = _ab3_step(M, eq, D, hist, t, tn, Z)
            if M.normalize and blocks:
                _normalize(Z, blocks)
            while slot < len(tout) and d * (tout[slot] - tn) <= 0.0:
                out[slot] = _tangent(Z, comps)
                slot += 1
            continue
        K = [eq.F(t, Z, D)]
        _stages(M, eq, D, t, h, tn, Z, K, M.s)
        Znew = Z + h * sum(bj * K[j] for j, bj in enumerate(M.b) if bj != 0.0)
        if slot < len(tout) and d * (tout[slot] - tn) < 0.0:
            _stages(M, eq, D, t, h, tn, Z, K, len(M.c))      # FSAL and extra stages
        while slot < len(tout) and d * (tout[slot] - tn) < 0.0:
            out[slot] = _tangent(_dense(M, h, Z, Znew, K, (tout[slot] - t) / h), comps)
            slot += 1
        Z = Znew
        if M.normalize and blocks:
            _normalize(Z, blocks)
        while slot < len(tout) and d * (tout[slot] - tn) <= 0.0:
            out[slot] = _tangent(Z, comps)
            slot += 1
    return out
