"""Sensitivities of a user's equations (`rotode.ODE`) with respect to ``y0`` and ``params``
(``rotode.integrate(ode, ..., sensitivity=["y0", "params"])``, docs/sensitivity.md).

Forward mode through the discrete map, the accepted steps held fixed (internal differentiation:
Bock 1981; Hairer, Norsett and Wanner I, sec. II.6): every step of the run is taken again on
the matrix ``Z = [y, Y]`` whose columns after the first carry the tangent, with the method's
own tableau, dense output and normalisation of the quaternion blocks (the
Runge-Kutta-Munthe-Kaas pairs: the algebra state of each step and its bases, `_replay_rkmk`;
Munthe-Kaas, "High order Runge-Kutta methods on manifolds", Appl. Numer. Math. 29 (1999)
115-127). Without the user's Jacobian ``f`` is a black box (Python or compiled), so a stage's
tangent ``J Y_j + f_p dp_j`` is the central difference of ``f`` along the joint direction
``(Y_j, dp_j)``, with a step of ``cbrt(eps)`` relative to the size of the state and the
parameters (an error of about 1e-10 relative for a smooth ``f``: the documented accuracy). With
the user's Jacobian (``ODE(jac=...)``, and ``jac_params``) it is ``J Y + J_p D`` exactly, one
call of each per stage; with ``jac`` alone ``J Y`` plus the central difference of ``f`` along
the parameter directions only (with ``jac_params`` alone, the differences along Y with p fixed
plus ``J_p D``). A quaternion block's tangent is ``dtheta = 2 vec(q^-1 dq)`` (the right
perturbation ``q exp(dtheta/2)``, body frame), in its place in the state, so the tangent has
``n - n_blocks`` components.
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
    kernel: rk3, rk4, a pair on the state or on the group (``group``: rkmk*), or the
    multistep ab3 with Kutta's rk3 tableau for its first two steps)."""

    def __init__(self, name, normalize):
        spec = methods.get(name)
        self.ab3 = spec.kernel("ode") == "ab3"
        self.group = spec.kernel("ode") == "rkmk"
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
        self.args = model.args
        self.jac = getattr(model, "jac", None)
        self.jac_params = getattr(model, "jac_params", None)

    def f(self, t, y, p):
        """f(t, y) with the parameters p, as the runner evaluates it."""
        self.one.params = p
        return _evaluate(self.one, self.n, t, np.ascontiguousarray(y))

    def matrix(self, name, t, y, cols):
        """The user's ``jac`` (n, n) or ``jac_params`` (n, m) at (t, y), called as ``fun``
        (ValueError naming it for another shape or a non-finite value)."""
        fn = self.jac if name == "jac" else self.jac_params
        y = np.array(y, dtype=float)
        out = fn(t, y, *self.args) if self.p is None else fn(t, y, self.p.copy(), *self.args)
        a = np.asarray(out)
        shape = (self.n, cols)
        if a.shape != shape or a.dtype.kind not in "fiub":
            raise ValueError(f"`{name}` must return a real array of shape {shape} (df/d"
                             f"{'y' if name == 'jac' else 'params'}), got "
                             f"{type(out).__name__} of shape {a.shape} and dtype {a.dtype}")
        a = a.astype(float, copy=False)
        if not np.isfinite(a).all():
            raise ValueError(f"`{name}` returned a non-finite value (NaN or inf) at t = {t!r}; "
                             f"expected a finite array of shape {shape}")
        return a

    def F(self, t, Z, D):
        """(n, 1 + d): f(t, y) and its tangent along Z[:, 1:] and D: J Y + J_p D with the
        user's Jacobians (`_exact`), else the central differences along (Z[:, 1:], D)."""
        if self.jac is not None or self.jac_params is not None:
            return self._exact(t, Z, D)
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

    def _exact(self, t, Z, D):
        """`F` by the user's Jacobians: J Z[:, 1:] (``jac``) plus J_p D (``jac_params``); the
        one not given by central differences of f along Z[:, 1:] (p fixed) or along each
        parameter direction D[:, j] (y fixed) alone."""
        y, p = Z[:, 0], self.p
        out = np.empty_like(Z)
        out[:, 0] = self.f(t, y, p)
        if self.jac is not None:
            out[:, 1:] = self.matrix("jac", t, y, self.n) @ Z[:, 1:]
        else:
            out[:, 1:] = self._differences(t, y, p, Z[:, 1:], None)
        if not D.size or not D.any():
            return out
        if self.jac_params is not None:
            out[:, 1:] += self.matrix("jac_params", t, y, p.shape[0]) @ D
        else:
            out[:, 1:] += self._differences(t, y, p, None, D)
        return out

    def _differences(self, t, y, p, V, D):
        """(n, d): central differences of f along the columns of V (p fixed) or of D (y
        fixed), the step `_H` relative to the size of what moves."""
        W = V if V is not None else D
        out = np.zeros((self.n, W.shape[1]))
        scale = 1.0 + np.abs(y if V is not None else p).max()
        for j in range(W.shape[1]):
            size = np.abs(W[:, j]).max()
            if size == 0.0:
                continue
            e = _H * scale / size
            if V is not None:
                fp, fm = self.f(t, y + e * V[:, j], p), self.f(t, y - e * V[:, j], p)
            else:
                fp, fm = self.f(t, y, p + e * D[:, j]), self.f(t, y, p - e * D[:, j])
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


def _pair_step(M, eq, D, t, tn, Z, tout, slot, out, tangent):
    """One step t -> tn of the method's tableau on Z with the equations ``eq`` (`_Equations`, or
    `_Group` on the algebra), the outputs inside the step by the dense output, each stored as
    ``tangent`` of its Z (OUT: out[slot:]); returns the new Z and the next slot."""
    h = tn - t
    d = 1.0 if h >= 0.0 else -1.0
    K = [eq.F(t, Z, D)]
    _stages(M, eq, D, t, h, tn, Z, K, M.s)
    Znew = Z + h * sum(bj * K[j] for j, bj in enumerate(M.b) if bj != 0.0)
    if slot < len(tout) and d * (tout[slot] - tn) < 0.0:
        _stages(M, eq, D, t, h, tn, Z, K, len(M.c))          # FSAL and extra stages
    while slot < len(tout) and d * (tout[slot] - tn) < 0.0:
        out[slot] = tangent(_dense(M, h, Z, Znew, K, (tout[slot] - t) / h))
        slot += 1
    return Znew, slot


def replay(name, model, y0, p, ts, tout, cols, normalize):
    """(m, n_t, len(cols)): the derivative of one body's computed solution at the times
    `tout`, its steps `ts` held fixed (module docstring)."""
    n = y0.shape[0]
    M = _Method(name, normalize)
    blocks = tuple(model.quaternions)
    comps = _components(blocks, n)
    eq = _Equations(model, n, p)
    Z, D = _seed(np.asarray(y0, dtype=float), comps, cols, 0 if p is None else p.shape[0])
    if M.group:
        return _replay_rkmk(M, eq, Z, D, blocks, comps, ts, tout)
    out = np.empty((len(tout), len(comps), len(cols)))
    d = 1.0 if ts[-1] >= ts[0] else -1.0
    slot = 0
    while slot < len(tout) and tout[slot] == ts[0]:
        out[slot] = _tangent(Z, comps)
        slot += 1
    hist = []
    for i in range(len(ts) - 1):
        t, tn = ts[i], ts[i + 1]
        if M.ab3:
            Z = _ab3_step(M, eq, D, hist, t, tn, Z)
            if M.normalize and blocks:
                _normalize(Z, blocks)
            while slot < len(tout) and d * (tout[slot] - tn) <= 0.0:
                out[slot] = _tangent(Z, comps)
                slot += 1
            continue
        Z, slot = _pair_step(M, eq, D, t, tn, Z, tout, slot, out,
                             lambda z: _tangent(z, comps))
        if M.normalize and blocks:
            _normalize(Z, blocks)
        while slot < len(tout) and d * (tout[slot] - tn) <= 0.0:
            out[slot] = _tangent(Z, comps)
            slot += 1
    return out


# ---- Runge-Kutta-Munthe-Kaas (rkmk3, rkmk5, rkmk8) on the group ----------------------------
# As rotode/ode.pyx steps it (Munthe-Kaas 1999; Hairer, Lubich and Wanner 2006, sec. IV.8): a
# step from the base q_b of each block advances z = [v_1, ..., v_nq, y[rest]] by the pair, with
# q = q_b exp(v/2), v' = T(-v)^-1 w and w = 2 vec(q^* q') read from f; after the step
# q_b <- retract(q_b exp(v/2)) and v <- 0.  The replay carries [z, Z'] and [q_b, q_b'] and
# differentiates exp(v/2) and T(-v)^-1 exactly (`_exp_half`, `_dexp_inv`).

# C(x) of T(v)^-1 = 1 - K/2 + C K^2, x = |v|^2 (rotode/_rodrigues.hpp so3_dexp_inv_coefficient:
# the Bernoulli series, highest power first)
_DEXP_INV = (
    1.5174548844682903e-35, 5.990671762482134e-34, 2.36502241570063e-32, 9.336734257095045e-31,
    3.6859949406653103e-29, 1.455172475614865e-27, 5.744790668872202e-26,
    2.267952452337683e-24, 8.953517427037546e-23, 3.534707039629467e-21,
    1.3954464685812522e-19, 5.5090028283602295e-18, 2.174868698558062e-16,
    8.586062056277845e-15, 3.3896802963225827e-13, 1.3382536530684679e-11,
    5.284190138687493e-10, 2.08767569878681e-08, 8.267195767195768e-07, 3.306878306878307e-05,
    0.001388888888888889, 0.08333333333333333,
)


def _dexp_inv_coefficient(x):
    """C(x) = (1 - (a/2) cot(a/2))/a^2 (x = a^2 < 4 pi^2) and dC/dx: the series (and its
    derivative term by term) for x <= 6.25, else the closed form and its derivative."""
    if x <= 6.25:
        c = dc = 0.0
        for a in _DEXP_INV:
            dc = c + x * dc
            c = a + x * c
        return c, dc
    h = 0.5 * np.sqrt(x)
    cot = np.cos(h) / np.sin(h)
    c = (1.0 - h * cot) / x
    # d(h cot h)/dh = cot h - h / sin^2 h and dh/dx = 1/(8 h)
    return c, -(cot - h / np.sin(h) ** 2) / (8.0 * h * x) - c / x


def _cross(a, b):
    """a x b along axis 0 of (3,) or (3, d) arrays (broadcast)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


def _dexp_inv(u, w, du, dw):
    """T(u)^-1 w = w - u x w / 2 + C u x (u x w) (rotode/_rodrigues.hpp so3_dexp_inv_apply;
    Hairer, Lubich and Wanner 2006, sec. IV.8, the inverse of the derivative of exp) and its
    derivative along the columns (du, dw) (3, d): (3,), (3, d)."""
    c, dc = _dexp_inv_coefficient(u @ u)
    uw = np.cross(u, w)
    uuw = np.cross(u, uw)
    u1, w1, uw1 = u[:, None], w[:, None], uw[:, None]
    duw = _cross(du, w1) + _cross(u1, dw)                 # d(u x w)
    d = (dw - 0.5 * duw + (2.0 * dc) * uuw[:, None] * (u @ du)
         + c * (_cross(du, uw1) + _cross(u1, duw)))
    return w - 0.5 * uw + c * uuw, d


def _exp_half(v, dv):
    """e = exp(v/2) = [cos a, sin(a)/a x] (x = v/2, a = |x|; rotode/_rkmk.hpp quat_exp_half)
    and its derivative along dv (3, d): de = [-s (x . dx), s dx + g x (x . dx)] with s =
    sin(a)/a and g = ds/da / a = (cos a - s)/a^2 (the series in a^2 for a^2 <= 1): (4,), (4, d)."""
    x, dx = 0.5 * v, 0.5 * dv
    a2 = x @ x
    if a2 <= 1.0:
        co = s = g = 0.0
        term, gterm = 1.0, -0.5           # (-a2)^k / (2k)!, (-1)^k a2^(k-1) / (2k)!
        for k in range(13):
            co += term
            s += term / (2 * k + 1)
            term *= -a2 / ((2 * k + 1) * (2 * k + 2))
            if k:
                g += gterm * (2 * k) / (2 * k + 1)
                gterm *= -a2 / ((2 * k + 1) * (2 * k + 2))
    else:
        a = np.sqrt(a2)
        co, s = np.cos(a), np.sin(a) / a
        g = (co - s) / a2
    xdx = x @ dx
    de = np.empty((4, dv.shape[1]))
    de[0] = -s * xdx
    de[1:] = s * dx + g * np.outer(x, xdx)
    return np.r_[co, s * x], de


def _qmul(p, q):
    """The Hamilton product p q of (4,) or (4, d) arrays (broadcast)."""
    return np.array([p[0] * q[0] - p[1] * q[1] - p[2] * q[2] - p[3] * q[3],
                     p[0] * q[1] + p[1] * q[0] + p[2] * q[3] - p[3] * q[2],
                     p[0] * q[2] - p[1] * q[3] + p[2] * q[0] + p[3] * q[1],
                     p[0] * q[3] + p[1] * q[2] - p[2] * q[1] + p[3] * q[0]])


def _rate(q, f):
    """w = 2 vec(q^* f) of (4,) or (4, d) arrays (rotode/ode.pyx `_body_rate`)."""
    return 2.0 * (q[0] * f[1:] - f[0] * q[1:] - _cross(q[1:], f[1:]))


class _Group:
    """The algebra equation of one rkmk step on [z, Z'] from the bases B (the state layout:
    each block's q_b and its tangent in rows b..b+3; the other rows unused)."""

    def __init__(self, eq, blocks, rest):
        self.eq, self.blocks, self.rest = eq, blocks, rest
        self.B = None

    def row(self, V):
        """[y, Y] (n, 1 + d) of the algebra state V: q = q_b exp(v/2) per block."""
        Y = np.empty((self.eq.n, V.shape[1]))
        for i, b in enumerate(self.blocks):
            e, de = _exp_half(V[3 * i:3 * i + 3, 0], V[3 * i:3 * i + 3, 1:])
            qb, dqb = self.B[b:b + 4, 0], self.B[b:b + 4, 1:]
            Y[b:b + 4, 0] = _qmul(qb, e)
            Y[b:b + 4, 1:] = _qmul(dqb, e[:, None]) + _qmul(qb[:, None], de)
        Y[self.rest] = V[3 * len(self.blocks):]
        return Y

    def F(self, t, V, D):
        """[z', Z'']: each block's v' = T(-v)^-1 w and its derivative, the rest's f."""
        Y = self.row(V)
        FY = self.eq.F(t, Y, D)
        out = np.empty_like(V)
        for i, b in enumerate(self.blocks):
            q, dq, f, df = Y[b:b + 4, 0], Y[b:b + 4, 1:], FY[b:b + 4, 0], FY[b:b + 4, 1:]
            w = _rate(q, f)
            dw = _rate(dq, f[:, None]) + _rate(q[:, None], df)
            v, dv = V[3 * i:3 * i + 3, 0], V[3 * i:3 * i + 3, 1:]
            out[3 * i:3 * i + 3, 0], out[3 * i:3 * i + 3, 1:] = _dexp_inv(-v, w, -dv, dw)
        out[3 * len(self.blocks):] = FY[self.rest]
        return out

    def accept(self, V):
        """q_b <- retract(q_b exp(v/2)) (rotode/_rkmk.hpp rkmk_retract: q (3 - |q|^2)/2) with
        its tangent, v <- 0 (IN/OUT: V)."""
        Y = self.row(V)
        for i, b in enumerate(self.blocks):
            q, dq = Y[b:b + 4, 0], Y[b:b + 4, 1:]
            self.B[b:b + 4, 0] = q * (1.5 - 0.5 * (q @ q))
            self.B[b:b + 4, 1:] = dq * (1.5 - 0.5 * (q @ q)) - np.outer(q, q @ dq)
            V[3 * i:3 * i + 3] = 0.0


def _replay_rkmk(M, eq, Z, D, blocks, comps, ts, tout):
    """`replay` of rkmk*: Z (n, 1 + d) the seeded state, q_b = q/|q| its first bases."""
    rest = [k for b, k in comps if b < 0]
    G = _Group(eq, blocks, rest)
    _normalize(Z, blocks)                                  # rkmk_unit
    G.B = Z
    V = np.zeros((3 * len(blocks) + len(rest), Z.shape[1]))
    V[3 * len(blocks):] = Z[rest]
    out = np.empty((len(tout), len(comps), Z.shape[1] - 1))
    d = 1.0 if ts[-1] >= ts[0] else -1.0
    slot = 0
    while slot < len(tout) and tout[slot] == ts[0]:
        out[slot] = _tangent(G.row(V), comps)
        slot += 1
    for i in range(len(ts) - 1):
        t, tn = ts[i], ts[i + 1]
        V, slot = _pair_step(M, G, D, t, tn, V, tout, slot, out,
                             lambda v: _tangent(G.row(v), comps))
        G.accept(V)
        while slot < len(tout) and d * (tout[slot] - tn) <= 0.0:
            out[slot] = _tangent(G.row(V), comps)
            slot += 1
    return out
