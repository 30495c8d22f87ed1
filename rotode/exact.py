"""Exact solutions used as references: the torque-free rigid body.

Layer 4 (facade) only: plain NumPy/SciPy, no compiled kernel of its own.  The module also
carries the elliptic-function tools the exact solution needs, evaluated so that they stay
accurate up to the separatrix of the free rigid body (parameter ``m -> 1``):

``jacobi_sn_cn_dn(u, m, m1=None)``
    Jacobi ``sn, cn, dn`` by the descending AGM/Landen scheme, taking ``m1 = 1 - m`` separately.
``ellipk(m, m1=None)``
    Complete elliptic integral of the first kind ``K(m)`` from the same AGM.
``ellipf(phi, m, m1=None)``
    Incomplete integral of the first kind ``F(phi | m)`` via Carlson's ``R_F``.
``free_rigid_body(inertia, w0, t, q0=None)``
    Orientation and body angular velocity of a torque-free rigid body at any times.

Why not ``scipy.special.ellipj``?  Measured against ``mpmath.ellipfun`` (40 digits; SciPy 1.17,
u over one or more quarter periods, ``m`` the double nearest ``1 - m1``):

=============  ======================= ==================================================
``1 - m``      ``ellipj`` abs. error    cause
=============  ======================= ==================================================
1e-6           6e-15 (sn), 7e-15 (dn)   AGM with ``sqrt(1 - m)`` formed from ``m``;
                                        ``dn`` relative error 7e-12 near ``u = K``
1e-8           1e-14 (sn), 1.6e-13 (dn) same; ``dn`` relative error 1.6e-9 near ``u = K``
2e-10          1e-14 (sn), 1.6e-12 (dn) same; ``dn`` relative error 1.1e-7 near ``u = 3K``
9.9e-11        2 (sn), 3e11 (cn, dn)    below ``1 - m = 1e-10`` Cephes switches to a
                                        first-order expansion in ``1 - m`` that is only
                                        valid for small ``u``: wrong by O(1) from ``u ~ K``
1e-12 .. 1e-16 2 (sn), 3e13+ (cn, dn)   same
=============  ======================= ==================================================

With the exact ``m1`` (not representable through ``m``) the errors are larger still: at
``m1 = 1e-8`` passing ``m = 1 - m1`` alone costs 1e-8.  ``jacobi_sn_cn_dn`` stays within
``1.5 eps (1 + |u|)`` absolute (<= 4.4e-16 for ``|u| <= K``) for ``m1`` from 0.5 down to
1e-300 and exactly 0 (``tests/test_exact.py::test_jacobi_vs_mpmath``).  It is used everywhere in
this module; ``scipy.special.ellipj`` is not.
"""

import math
from fractions import Fraction

import numpy as np
from scipy.special import elliprf

from rotode import quaternion as _quat
from rotode._validation import as_float_array, as_inertia, as_quaternions

__all__ = ["ellipf", "ellipk", "free_rigid_body", "jacobi_sn_cn_dn"]

_EPS = np.finfo(float).eps
# The AGM converges quadratically once b_n ~ a_n; from b_0 = sqrt(m1) >= 1e-154 (m1 >= 1e-308)
# it needs ~ log2(log(4/b_0)) + 6 <= 16 steps.  The cap only guards against m1 = 0.
_AGM_MAX_STEPS = 40


# ---------------------------------------------------------------------------------------------
# Elliptic functions with m and m1 = 1 - m given separately
# ---------------------------------------------------------------------------------------------

def _scalar(x, name):
    """A finite real scalar as float (``as_float_array`` returns 0-d input with shape (1,))."""
    return float(as_float_array(x, name, (), batch=False).reshape(-1)[0])


def _real_array(x, name):
    """A finite float64 array of any shape, 0-d input kept 0-d."""
    return as_float_array(x, name)


def _parameter(m, m1):
    """Validate a scalar parameter pair; return floats ``(m, m1)`` with ``m + m1 = 1``."""
    m = _scalar(m, "m")
    if m1 is None:
        if not 0.0 <= m <= 1.0:
            raise ValueError(f"`m` must lie in [0, 1], got {m!r}")
        return m, 1.0 - m
    m1 = _scalar(m1, "m1")
    if not (0.0 <= m <= 1.0 and 0.0 <= m1 <= 1.0):
        raise ValueError(f"`m` and `m1` must lie in [0, 1], got m={m!r}, m1={m1!r}")
    if abs((m - 1.0) + m1) > 4 * _EPS:
        raise ValueError(f"`m1` must equal 1 - `m` to rounding, got m={m!r}, m1={m1!r}")
    return m, m1


def _agm(m, m1):
    """Descending AGM (Abramowitz & Stegun 17.6.1-2) from ``a0 = 1, b0 = sqrt(m1), c0 = sqrt(m)``.

    Returns lists ``a, b, c`` (``a_n^2 = b_n^2 + c_n^2``); ``c_n`` is computed as
    ``c_{n-1}^2 / (4 a_n)`` rather than ``(a_{n-1} - b_{n-1}) / 2``, so no step subtracts nearly
    equal numbers and ``b0`` never comes from ``1 - m``.  Returns ``None`` for ``m1 = 0``
    (``K = inf``).
    """
    if m1 == 0.0:
        return None
    a, b, c = [1.0], [np.sqrt(m1)], [np.sqrt(m)]
    while c[-1] > _EPS * a[-1] / 4 and len(a) < _AGM_MAX_STEPS:
        an, bn = a[-1], b[-1]
        a.append(0.5 * (an + bn))
        b.append(np.sqrt(an * bn))
        c.append(c[-1] ** 2 / (4 * a[-1]))
    return a, b, c


def ellipk(m, m1=None):
    """Complete elliptic integral of the first kind ``K(m)``, accurate as ``m -> 1``.

    Parameters
    ----------
    m : float
        Parameter in [0, 1] (``k^2``, SciPy's convention).
    m1 : float, optional
        Complementary parameter ``1 - m``.  Pass it when ``m`` is close to 1: ``K`` depends on
        ``log(1/m1)`` and the double ``1 - m`` has lost the digits of ``m1``.

    Returns
    -------
    float
        ``K = pi / (2 AGM(1, sqrt(m1)))`` (A&S 17.6); ``inf`` for ``m1 = 0``.

    See Also
    --------
    ellipf, jacobi_sn_cn_dn

    Examples
    --------
    >>> from rotode.exact import ellipk
    >>> round(ellipk(0.0), 15) == round(3.141592653589793 / 2, 15)
    True
    >>> f"{ellipk(1.0, 1e-300):.9f}"       # log(4 / sqrt(m1)) + O(m1 log m1)
    '346.774058310'
    """
    m, m1 = _parameter(m, m1)
    agm = _agm(m, m1)
    return np.inf if agm is None else np.pi / (2 * agm[0][-1])


def jacobi_sn_cn_dn(u, m, m1=None):
    """Jacobi elliptic functions ``sn, cn, dn`` of real ``u``, accurate up to ``m = 1``.

    Parameters
    ----------
    u : array_like
        Real arguments, any shape.
    m : float
        Parameter in [0, 1] (SciPy's convention, ``m = k^2``).
    m1 : float, optional
        ``1 - m`` given separately.  Near ``m = 1`` pass the exact ``m1`` (for the rigid body it
        is a ratio of energy differences); by default ``1 - m``.

    Returns
    -------
    sn, cn, dn : ndarray
        Same shape as ``u``.

    See Also
    --------
    ellipk, ellipf

    Notes
    -----
    Descending Landen (Gauss) transformation by the AGM, A&S 16.4: with the AGM sequence
    ``a_n, b_n, c_n`` of ``(1, sqrt(m1))`` stopped when ``c_N < eps a_N / 4``,
    ``phi_N = 2^N a_N u`` and ``phi_{n-1} = (phi_n + asin(c_n/a_n sin phi_n)) / 2`` give the
    amplitude ``phi_0 = am(u|m)``; ``sn = sin phi_0``, ``cn = cos phi_0``.  Two changes keep
    the scheme accurate as ``m1 -> 0``:

    * ``b_0 = sqrt(m1)`` comes from the given ``m1`` and ``c_n = c_{n-1}^2 / (4 a_n)``
      (no cancellation anywhere in the AGM);
    * the ill-conditioned ``asin(x)`` at ``x ~ 1`` is replaced by
      ``atan2(c_n sin phi, sqrt(b_n^2 + c_n^2 cos^2 phi))``, using
      ``a_n^2 - c_n^2 sin^2 phi = b_n^2 + c_n^2 cos^2 phi``, and
      ``dn = sqrt(m1 + m cn^2)`` (a sum of non-negative terms instead of ``1 - m sn^2``).

    ``u`` is first reduced to ``[-2K, 2K]`` (period ``4K`` of ``sn, cn``).  ``m1 = 0`` uses
    ``sn = tanh u, cn = dn = sech u``.  Measured absolute error against ``mpmath.ellipfun``:
    at most ``1.5 eps (1 + |u|)`` (the phase of a double ``u``), and 4.4e-16 for ``|u| <= K``,
    for ``m1`` from 0.5 down to 1e-300 (see the module docstring for ``scipy.special.ellipj``,
    which is wrong by O(1) for ``m1 < 1e-10``).  The *relative* error of ``dn`` near odd
    multiples of ``K`` (where ``dn = sqrt(m1)``) grows like ``eps / sqrt(m1)``: 8e-13, 8e-11,
    6e-9 at ``m1`` = 1e-8, 1e-12, 1e-16, since ``cn = cos(am u)`` is taken near ``pi/2``.  The
    quarter-period shift ``dn(K + d) = sqrt(m1) / dn(d)`` would restore it; the rigid body only
    needs absolute accuracy (``w_c = A_c dn``), so it is not done.

    Examples
    --------
    >>> import numpy as np
    >>> from rotode.exact import jacobi_sn_cn_dn
    >>> sn, cn, dn = jacobi_sn_cn_dn(np.array([0.0, 1.0]), 0.0)   # m = 0: sin, cos, 1
    >>> np.allclose([sn, cn, dn], [np.sin([0, 1]), np.cos([0, 1]), [1, 1]], rtol=0, atol=1e-16)
    True
    """
    m, m1 = _parameter(m, m1)
    u = _real_array(u, "u")
    agm = _agm(m, m1)
    if agm is None:                       # m = 1: the separatrix, hyperbolic functions
        sech = 1.0 / np.cosh(u)
        return np.tanh(u), sech, sech.copy()
    a, b, c = agm
    n = len(a) - 1
    quarter = np.pi / (2 * a[-1])         # K(m)
    u = u - 4 * quarter * np.round(u / (4 * quarter))
    phi = (2.0**n * a[-1]) * u
    for k in range(n, 0, -1):
        s = np.sin(phi)
        cos = np.cos(phi)
        phi = 0.5 * (phi + np.arctan2(c[k] * s, np.sqrt(b[k] ** 2 + (c[k] * cos) ** 2)))
    sn = np.sin(phi)
    cn = np.cos(phi)
    dn = np.sqrt(m1 + m * cn * cn)
    return sn, cn, dn


def ellipf(phi, m, m1=None):
    """Incomplete elliptic integral of the first kind ``F(phi | m)`` for ``|phi| <= pi/2``.

    Parameters
    ----------
    phi : array_like
        Amplitudes in ``[-pi/2, pi/2]``.
    m, m1 : float
        Parameter and, optionally, ``1 - m`` given separately (see `jacobi_sn_cn_dn`).

    Returns
    -------
    ndarray
        ``F = sin(phi) R_F(cos^2 phi, cos^2 phi + m1 sin^2 phi, 1)`` (Carlson 1995, DLMF
        19.25.5), the inverse of ``am(u|m)``: ``sn(F(phi)) = sin(phi)``.  The second argument is
        ``1 - m sin^2 phi`` written without cancellation.  ``inf`` at ``phi = +-pi/2, m1 = 0``.

    Raises
    ------
    ValueError
        For ``|phi| > pi/2`` or an invalid parameter (see `jacobi_sn_cn_dn`).

    See Also
    --------
    ellipk, jacobi_sn_cn_dn

    References
    ----------
    .. [1] NIST Digital Library of Mathematical Functions, ch. 19 "Elliptic Integrals",
       eq. 19.25.5.

    Examples
    --------
    >>> import numpy as np
    >>> from rotode import exact
    >>> u = exact.ellipf(np.pi / 4, 0.5)
    >>> round(float(u), 12), round(float(exact.jacobi_sn_cn_dn(u, 0.5)[0]), 12)   # sn(F) = sin
    (0.826017876249, 0.707106781187)
    """
    m, m1 = _parameter(m, m1)
    phi = _real_array(phi, "phi")
    if np.any(np.abs(phi) > np.pi / 2):
        raise ValueError("`phi` must lie in [-pi/2, pi/2]")
    s = np.sin(phi)
    c2 = np.cos(phi) ** 2
    with np.errstate(divide="ignore"):
        return s * elliprf(c2, c2 + m1 * s * s, 1.0)


# ---------------------------------------------------------------------------------------------
# The torque-free rigid body
# ---------------------------------------------------------------------------------------------

# Gauss-Legendre rule on each sub-interval of the period [0, 2K] of dn, for the precession angle.
# The integrand 1/(|L| + I_c A_c dn(u)) is analytic in the strip |Im u| < K' (>= pi/2: dn has
# its poles at iK' and |L| + I_c A_c dn(u) != 0 for |Im u| < K'); with sub-intervals of length
# <= 1/2 the Bernstein ellipse has rho >= 2*(pi/2)/(1/2) = 6.3, so 12 nodes leave
# rho^(-24) < 1e-19.  Measured against mpmath.quad: <= 2e-16 relative (test_precession_quadrature).
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(12)
_GL_MAX_WIDTH = 0.5
# Principal moments closer than this (relative to the largest) are taken as equal: eigh of a
# symmetric-top matrix splits the double eigenvalue by a few ulp.
_EQUAL_MOMENTS_RTOL = 16 * _EPS


def _check_inertia(inertia):
    """Principal moments and principal axes (columns, det +1) of an inertia checked by
    `rotode._validation.as_inertia` (3 moments or a symmetric positive definite 3x3; the closed
    form holds for any positive moments, so the triangle inequality is not required)."""
    arr = as_float_array(inertia, "inertia", finite=False)
    if arr.shape == (3,):
        i = as_inertia(arr, triangle=False)
        return np.diag(i).copy(), np.eye(3)
    if arr.shape != (3, 3):
        raise ValueError(
            f"`inertia` must have shape (3,) (principal moments) or (3, 3), got {arr.shape}")
    moments, axes = np.linalg.eigh(as_inertia(arr, triangle=False))
    if np.linalg.det(axes) < 0:
        axes[:, 2] *= -1
    return moments, axes


def _snap_equal_moments(moments):
    """Make moments that agree to a few ulp exactly equal (symmetric and spherical bodies)."""
    moments = moments.copy()
    order = np.argsort(moments)
    tol = _EQUAL_MOMENTS_RTOL * moments.max()
    for i, j in ((order[0], order[1]), (order[1], order[2])):
        if moments[j] - moments[i] <= tol:
            moments[i] = moments[j] = 0.5 * (moments[i] + moments[j])
    return moments


def _gauss_legendre(f, start, length):
    """Integral of the vectorised ``f`` over ``[start, start + length]`` (arrays) with the
    module's rule; the length is passed, not recomputed from the end points."""
    half = 0.5 * length
    x = (start + half)[..., None] + half[..., None] * _GL_NODES
    return half * (f(x) @ _GL_WEIGHTS)


class _PeriodicIntegral:
    """``G(u) = int_0^u f(s) ds`` of an even function ``f`` with period ``P = 2K``.

    ``G(u) = n G(P) + G(r)`` with ``u = n P + r``, ``0 <= r < P``; ``G`` at the nodes of a fixed
    partition of ``[0, P]`` is tabulated once, so each evaluation costs one Gauss-Legendre rule on
    a single sub-interval: O(1) per time, however long the time span.
    """

    def __init__(self, f, period):
        self.f = f
        self.period = period
        self.n_sub = max(1, int(np.ceil(period / _GL_MAX_WIDTH)))
        self.width = period / self.n_sub
        edges = self.width * np.arange(self.n_sub + 1)
        pieces = _gauss_legendre(f, edges[:-1], np.diff(edges))
        self.cumulative = np.concatenate([[0.0], np.cumsum(pieces)])

    def __call__(self, u):
        n = np.floor(u / self.period)
        r = u - n * self.period
        # (clipped before the cast: for |u| ~ 1e300 the rounding of n * period leaves r far
        # outside [0, P), beyond the integer range)
        j = np.clip(r // self.width, 0, self.n_sub - 1).astype(np.intp)
        start = j * self.width
        return n * self.cumulative[-1] + self.cumulative[j] + _gauss_legendre(self.f, start,
                                                                              r - start)

    def span(self, u0, du):
        """``int_{u0}^{u0 + du} f`` for a scalar ``u0`` and an array ``du``.

        Spans shorter than one sub-interval are integrated directly over ``[u0, u0 + du]`` with
        the given ``du``: ``G(u0 + du) - G(u0)`` would lose the digits of a small ``du`` (a
        nearly steady symmetric body has ``lambda ~ 1e-15``, so ``du = lambda t`` is tiny next to
        ``u0 ~ K``).
        """
        du = np.asarray(du, dtype=float)
        out = np.empty_like(du)
        short = np.abs(du) <= self.width
        out[short] = _gauss_legendre(self.f, np.full(short.sum(), u0), du[short])
        out[~short] = self(u0 + du[~short]) - self(np.array(u0))
        return out


def _steady(w, q0, t):
    """Rotation about a principal axis (or any axis of a spherical body): constant ``w``."""
    scale = np.abs(w).max()
    if scale == 0.0:
        return np.broadcast_to(q0, (t.size, 4)).copy(), np.zeros((t.size, 3))
    axis = w / scale                      # scaled first: |w| of a subnormal w underflows
    angle = scale * np.linalg.norm(axis) * t
    axis /= np.linalg.norm(axis)
    q = _quat.multiply(q0, _about(axis, angle))
    return q, np.broadcast_to(w, (t.size, 3)).copy()


def _principal_motion(moments, w0, q0, t):
    """Exact motion in a principal frame: ``(q, w)`` at times ``t`` (1-D).

    ``moments`` are the principal moments (any order), ``w0`` the principal-frame rate and
    ``q0`` the unit quaternion of the principal frame.  See `free_rigid_body` for the formulas.
    """
    I = moments  # noqa: E741 (the inertia, as in the formulas)
    Iw = I * w0
    # Steady rotation: w x I w = 0 (w along a principal axis, in the plane of two equal moments,
    # or a spherical body).  Components as (I_k - I_j) w_j w_k, which is exactly 0 for equal
    # moments, unlike np.cross(w, I w) whose two products round differently.
    torque_free_rate = [(I[k] - I[j]) * w0[j] * w0[k] for j, k in ((1, 2), (2, 0), (0, 1))]
    if not any(torque_free_rate):
        return _steady(w0, q0, t)
    lo, mid, hi = np.argsort(I, kind="stable")
    # D_x = L^2 - 2 E I_x = sum_i I_i (I_i - I_x) w_i^2, evaluated exactly in rational arithmetic
    # (doubles are rationals) and rounded once: near the separatrix D_mid is a small difference
    # of two terms and any rounding before the subtraction would cost digits of 1 - m, hence
    # of the flip period (K ~ log(16 / (1 - m)) / 2).
    exact_I = [Fraction(x) for x in I]
    exact_w2 = [Fraction(x) ** 2 for x in w0]

    def dist(x):
        terms = zip(exact_I, exact_w2, strict=True)
        return sum(Ii * (Ii - exact_I[x]) * wi2 for Ii, wi2 in terms)

    # Axis c is the one the body rotates about (w_c keeps its sign, the dn axis), a the other
    # extreme axis (cn), b the intermediate axis (sn).  L^2 > 2 E I_mid: c = largest moment.
    a, b, c = (lo, mid, hi) if dist(mid) >= 0 else (hi, mid, lo)
    Ia, Ic = I[a], I[c]
    xa, xb, xc = exact_I[a], exact_I[b], exact_I[c]
    # Kept exact: a tiny rate component (1e-161) makes some D of order 1e-322, whose products
    # and ratios would underflow in doubles (and give 0/0); amplitudes are rounded once.
    xDa, xDb, xDc = dist(a), dist(b), dist(c)
    if xDa == 0 or xDc == 0:       # only at steady rotation: no motion
        return _steady(w0, q0, t)
    Dc = float(xDc)
    sign_a = 1.0 if w0[a] >= 0 else -1.0
    sign_c = 1.0 if w0[c] >= 0 else -1.0
    parity = 1.0 if (b - a) % 3 == 1 else -1.0        # Levi-Civita symbol of (a, b, c)
    # Amplitudes and frequency (Landau & Lifshitz sec. 37, eqs. 37.10-37.11, any axis labels).
    Aa = _sqrt_ratio(xDc, xa * (xa - xc))
    Ab = _sqrt_ratio(xDc, xb * (xb - xc))
    Ac = _sqrt_ratio(xDa, xc * (xc - xa))
    lam = parity * np.sign(Ic - Ia) * sign_a * sign_c * _sqrt_ratio((xc - xb) * xDa,
                                                                    xa * xb * xc)
    # m and m1 = 1 - m, each from its own exact product: m1 keeps full accuracy near m = 1.
    m = float((xb - xa) * -xDc / ((xc - xb) * xDa))
    m1 = float((xc - xa) * xDb / ((xc - xb) * xDa))
    m, m1 = min(max(m, 0.0), 1.0), min(max(m1, 0.0), 1.0)
    scale = m + m1                                      # 1 to rounding
    m, m1 = m / scale, m1 / scale
    # Initial phase: sn(u0) = w_b0 / A_b, cn(u0) = sign_a w_a0 / A_a >= 0, so |am(u0)| <= pi/2.
    # Their squares from the exact rationals: with a subnormal rate component, A_a or A_b can
    # round to 0 (w0 = [5e-324, 1, 0]: 0/0 in doubles), while sn^2 and cn^2 are of order 1.
    sn2 = float(Fraction(w0[b]) ** 2 * xb * (xb - xc) / xDc)
    cn2 = float(Fraction(w0[a]) ** 2 * xa * (xa - xc) / xDc)
    phi0 = np.arctan2(np.copysign(np.sqrt(sn2), w0[b]), np.sqrt(cn2))
    u0 = float(ellipf(phi0, m, m1))
    u = u0 + lam * t
    sn, cn, dn = jacobi_sn_cn_dn(u, m, m1)
    w = np.empty((t.size, 3))
    w[:, a] = sign_a * Aa * cn
    w[:, b] = Ab * sn
    w[:, c] = sign_c * Ac * dn

    # Orientation.  L is fixed in the world; l(t) = I w / |L| is its body direction.  With s the
    # body axis sign_c e_c and P(t) the smallest rotation taking l(t) to s,
    # R(t) = R(0) P(0)^T Rot_s(psi(t)) P(t),  psi' = w . (l + s) / (1 + l . s)
    #      = |L|/I_c - D_c / (I_c (|L| + I_c A_c dn(u)))   (derivation in free_rigid_body).
    L = np.sqrt(float(np.sum(Iw * Iw)))
    s = np.zeros(3)
    s[c] = sign_c
    alpha, beta = L, Ic * Ac

    def f(v):
        return 1.0 / (alpha + beta * jacobi_sn_cn_dn(v, m, m1)[2])

    if m1 == 0.0:
        # Separatrix: dn = sech and the integral is elementary, with alpha^2 - beta^2 = (I_a A_a)^2:
        # int_0^u ds / (alpha + beta sech s)
        #   = u/alpha - 2 beta / (alpha I_a A_a) atan(sqrt((alpha-beta)/(alpha+beta)) tanh(u/2))
        # (substitute tanh(s/2)).
        root = Ia * Aa
        ratio = root / (alpha + beta)                  # = sqrt((alpha - beta)/(alpha + beta))

        def G(v):
            return v / alpha - 2 * beta / (alpha * root) * np.arctan(ratio * np.tanh(0.5 * v))

        du = lam * t
        short = np.abs(du) <= _GL_MAX_WIDTH             # as in _PeriodicIntegral.span
        integral = G(u0 + du) - G(u0)
        integral[short] = _gauss_legendre(f, np.full(short.sum(), u0), du[short])
    else:
        integral = _PeriodicIntegral(f, 2 * ellipk(m, m1)).span(u0, lam * t)
    if abs(lam) < 1e-100:
        # u hardly moves (a rate component of ~1e-300): integral / lam = t f(u0) up to a relative
        # O(lam t) < 1e-80, and Dc / lam alone would overflow
        psi = t * (L - Dc * f(np.array([u0]))[0]) / Ic
    else:
        psi = L / Ic * t - Dc / (Ic * lam) * integral

    q = _quat.multiply(
        _quat.multiply(q0, _quat.conjugate(_swing(Iw / L, s))),
        _quat.multiply(_about(s, psi), _swing((I * w) / L, s)),
    )
    return q, w


def _sqrt_ratio(num, den):
    """sqrt(num / den) of exact rationals, rounded once; no underflow of a tiny ratio."""
    r = Fraction(num) / Fraction(den)
    if r <= 0:
        return 0.0
    e = (r.numerator.bit_length() - r.denominator.bit_length()) // 2
    return math.ldexp(math.sqrt(float(r / Fraction(4) ** e)), e)


def _swing(d, s):
    """Unit quaternion of the smallest rotation taking unit ``d`` (..., 3) to unit ``s`` (3,).

    ``(1 + d.s, d x s) / |.|``; callers keep ``d . s >= 0`` so ``1 + d.s`` has no cancellation.
    """
    d = np.asarray(d)
    p = np.empty(d.shape[:-1] + (4,))
    p[..., 0] = 1.0 + d @ s
    p[..., 1:] = np.cross(d, s)
    return p / np.linalg.norm(p, axis=-1, keepdims=True)


def _about(s, angle):
    """Unit quaternions of rotations by ``angle`` (n,) about the unit axis ``s`` (3,)."""
    out = np.empty(np.shape(angle) + (4,))
    out[..., 0] = np.cos(0.5 * angle)
    out[..., 1:] = np.sin(0.5 * angle)[..., None] * s
    return out


def free_rigid_body(inertia, w0, t, q0=None):
    """Exact torque-free motion of a rigid body: orientation and body angular velocity.

    Parameters
    ----------
    inertia : array_like, shape (3,) or (3, 3)
        Principal moments (body axes are principal axes), or a symmetric positive definite
        inertia matrix in body coordinates, which is diagonalised (``numpy.linalg.eigh``); the
        motion is computed in its principal frame and rotated back.  Any moments: distinct,
        two equal (symmetric top) or three equal (spherical).  The triangle inequality of
        physical bodies is not required.
    w0 : array_like, shape (3,)
        Initial angular velocity in the **body** frame (rad/s).
    t : float or array_like, shape (n,)
        Times (s) after the initial one, any order and sign.
    q0 : array_like, shape (4,), or Rotation, optional
        Initial orientation ``[w, x, y, z]`` (body to world; normalised here) or a single
        ``scipy.spatial.transform.Rotation``.  Identity if omitted.

    Returns
    -------
    q : ndarray, shape (n, 4), or (4,) for scalar ``t``
        Unit quaternions body to world, continuous in ``t`` (no sign flips), ``q(0) = q0``.
    w : ndarray, shape (n, 3), or (3,) for scalar ``t``
        Body-frame angular velocity, solving ``I w' + w x I w = 0``.

    Raises
    ------
    ValueError
        For a shape mismatch, non-finite values, a non-symmetric or non-positive-definite
        ``inertia``, a ``t`` with more than one dimension, or a zero ``q0``.
    TypeError
        For non-numeric input.

    See Also
    --------
    rotode.RigidBody, rotode.integrate

    Notes
    -----
    **Angular velocity** (Landau & Lifshitz, *Mechanics*, sec. 37, eqs. 37.10-37.11, written for
    any labelling).  With ``D_x = L^2 - 2 E I_x = sum_i I_i (I_i - I_x) w_i^2`` (summed term by
    term, so the distance to the separatrix ``D_b`` keeps its relative accuracy), let ``b`` be
    the intermediate axis, ``c`` the largest-moment axis if ``L^2 >= 2 E I_b`` (rotation near
    the axis of largest moment) and the smallest otherwise, and ``a`` the remaining one::

        w_a = s_a A_a cn(u),  w_b = A_b sn(u),  w_c = s_c A_c dn(u),   u = u0 + lambda t,
        A_a^2 = D_c / (I_a (I_a - I_c)),  A_b^2 = D_c / (I_b (I_b - I_c)),
        A_c^2 = D_a / (I_c (I_c - I_a)),  lambda^2 = (I_c - I_b) D_a / (I_a I_b I_c),
        m = (I_b - I_a)(-D_c) / ((I_c - I_b) D_a),  1 - m = (I_c - I_a) D_b / ((I_c - I_b) D_a),

    with ``s_a, s_c`` the signs of ``w_a(0), w_c(0)``,
    ``sign(lambda) = eps_abc sign(I_c - I_a) s_a s_c`` (``eps_abc`` the Levi-Civita symbol,
    since ``(a, b, c)`` need not be a cyclic labelling) and
    ``u0 = F(atan2(w_b0 / A_b, s_a w_a0 / A_a) | m)`` (`ellipf`).  ``1 - m`` is formed from
    ``D_b`` directly and handed to `jacobi_sn_cn_dn`, which is accurate up to the separatrix.
    Both energy regimes are the same formula with ``a`` and ``c`` exchanged.  ``D_b = 0`` (the
    separatrix, ``m = 1``) gives ``sn = tanh, cn = dn = sech``.  A symmetric body gets ``m = 0``
    (``sn, cn, dn = sin, cos, 1``: regular precession); rotation about a principal axis, in the
    plane of two equal moments, or of a spherical body is steady, ``q = q0 exp(w0 t / 2)``.

    **Orientation** (the construction of Celledoni, Fasso, Safstrom & Zanna 2008, sec. 2-3, with
    a twist-free reference rotation).  ``L_world`` is constant and ``l(t) = I w(t) / |L|`` is its
    body direction; ``s = s_c e_c`` is a body axis with ``l . s = |l_c| > 0``.  Let ``P(t)`` be the
    smallest rotation taking ``l(t)`` to ``s``, ``p = (1 + l.s, l x s)/|.|``.  Then
    ``Y = R P^T`` fixes ``s -> L_world/|L|`` for all ``t``, so ``Y(t) = Y(0) Rot_s(psi(t))`` and,
    from ``R' = R [w]x``, ``l' = -w x l`` and the angular velocity of ``P``,
    ``psi' = w . (l + s) / (1 + l . s)``, i.e.::

        psi(t) = |L| t / I_c - D_c / (I_c lambda) int_{u0}^{u(t)} ds / (|L| + I_c A_c dn(s)),
        q(t)   = q0 conj(p(0)) [cos(psi/2), sin(psi/2) s] p(t).

    ``1 + l.s >= 1`` keeps everything free of cancellation and singularities.  The integral (an
    elliptic integral of the third kind) is evaluated by **quadrature** rather than through
    ``Pi(n; phi | m)``: the integrand is even with period ``2K``, its integral over one period
    and at the nodes of a partition of ``[0, 2K]`` into sub-intervals of length <= 1/2 are
    tabulated once with 12-point Gauss-Legendre, and each time then costs one 12-point rule on a
    single sub-interval (O(1) per time for any ``t``).  On the separatrix the integral is
    elementary (``atan``).

    **Measured accuracy** (``tests/test_exact.py``).  The tabulated quadrature agrees with
    ``mpmath.quad`` to 1.7e-16, 3.2e-16 and 1.4e-16 relative at ``1 - m`` = 0.6, 1e-3, 1e-12
    (8, 20 and 61 sub-intervals per period); the Jacobi functions are within
    ``1.5 eps (1 + |u|)`` of ``mpmath.ellipfun``.  Against a 25-30 digit Taylor-series solution
    (``mpmath.odefun``) of Euler's equations plus quaternion kinematics: <= 5e-14 rad and
    2e-13 rad/s over 40 s for the T-handle at ``1 - m`` from 8e-7 down to 2e-11, and on the exact
    separatrix.  Against DOP853 (rtol 1e-13, atol 1e-14) over 100 s: <= 3e-13 rad for distinct,
    symmetric, near-spherical, spherical and non-diagonal inertias; 1e-11 .. 6e-10 rad for the
    T-handle spun at |w| = 5 near its intermediate axis (``1 - m`` = 2e-3 .. 4e-5, both
    regimes), which is DOP853's own drift: its result moves by as much when its tolerances
    change, and it is off by 1e-7 rad at ``1 - m = 1e-5`` and by 1e-3 rad at 2e-11.  Energy and
    world angular momentum are conserved to a few ulp (``|L|`` relative 64 eps (1 + |t|)).

    References
    ----------
    .. [1] L. D. Landau and E. M. Lifshitz, *Mechanics*, 3rd ed., sec. 37 (1976).
    .. [2] E. Celledoni, F. Fasso, N. Safstrom and A. Zanna, "The exact computation of the free
       rigid body motion and its use in splitting methods", SIAM J. Sci. Comput. 30(4),
       2084-2112 (2008).
    .. [3] M. Abramowitz and I. A. Stegun, *Handbook of Mathematical Functions*, 16.4 and 17.6.
    .. [4] M. Mizerski, "Motion of spinning bodies" (2020; docs/references.md), secs. 5-6:
       the free rigid body and its invariants.

    Examples
    --------
    The T-handle spun near its intermediate axis flips over and back (Dzhanibekov effect): the
    spin ``w_y`` changes sign about every 9.7 s.

    >>> import numpy as np
    >>> from rotode.exact import free_rigid_body
    >>> t = np.linspace(0.0, 20.0, 2001)
    >>> q, w = free_rigid_body([2.5, 1.4, 1.3], [0.05, 5.0, 0.05], t)
    >>> q.shape, w.shape
    ((2001, 4), (2001, 3))
    >>> t[1:][np.diff(np.sign(w[:, 1])) != 0]          # the flips
    array([ 4.64, 14.38])
    >>> bool(np.allclose(np.linalg.norm(q, axis=1), 1.0, rtol=0, atol=1e-15))
    True
    """
    moments, axes = _check_inertia(inertia)
    w0 = as_float_array(w0, "w0", (3,), batch=False)
    with np.errstate(over="ignore"):
        Iw = moments.max() * np.abs(w0).max()
        if not np.isfinite(Iw * Iw * 3.0):
            raise ValueError(f"`w0` and `inertia` are too large: |I w0|^2 overflows (largest "
                             f"moment {moments.max()!r}, largest |w0| component "
                             f"{np.abs(w0).max()!r})")
    t_arr = as_float_array(t, "t")
    scalar = t_arr.ndim == 0
    if t_arr.ndim > 1:
        raise ValueError(f"`t` must be a scalar or have shape (n,), got {t_arr.shape}")
    t = t_arr.reshape(-1)
    if q0 is None:
        q0 = np.array([1.0, 0.0, 0.0, 0.0])
    else:
        q0 = as_quaternions(q0, "q0", batch=False)
        q0 = q0 / np.linalg.norm(q0)
    moments = _snap_equal_moments(moments)
    # Principal frame: body coordinates x_b = V x_p, orientation principal -> world R(q0) V.
    diagonal = np.array_equal(axes, np.eye(3))
    q_axes = None if diagonal else _quat.from_matrix(axes)
    qp0 = q0 if diagonal else _quat.multiply(q0, q_axes)
    wp0 = w0 if diagonal else axes.T @ w0
    q, w = _principal_motion(moments, wp0, qp0, t)
    if not diagonal:
        q = _quat.multiply(q, _quat.conjugate(q_axes))
        q /= np.linalg.norm(q, axis=-1, keepdims=True)  # unit to round-off after the products
        w = w @ axes.T
    if scalar:
        return q[0], w[0]
    return q, w


def __dir__():
    """The public names, ``__all__`` (not the imported helpers)."""
    return list(__all__)
