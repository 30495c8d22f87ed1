"""A 16-state spacecraft in low Earth orbit: the benchmark problem of benchmarks/bench_ode.py.

State (16)::

    y = [r (3), v (3), q (4), w (3), h (3)]

- ``r``, ``v``: position and velocity in the inertial (world, ECI) frame, in km and km/s;
- ``q``: scalar-first unit quaternion mapping body to world (``v_world = q (x) v_body (x) q*``);
- ``w``: the body's angular rate in body axes, rad/s;
- ``h``: the momenta of three reaction wheels along the body axes, N m s.

Equations (Markley & Crassidis 2014, *Fundamentals of Spacecraft Attitude Determination and
Control*, ch. 3: quaternion kinematics, Euler's equation of a body carrying momentum wheels,
the gravity-gradient torque; ch. 7: quaternion feedback; Wie 2008, *Space Vehicle Dynamics
and Control*, 2nd ed., the same with reaction wheels; Wie, Weiss & Arapostathis 1989, J.
Guidance 12(3), the quaternion feedback regulator)::

    r' = v,   v' = -mu r / |r|^3                                (two-body orbit)
    q' = 1/2 q (x) (0, w)
    I w' = tau_gg + tau_c - w x (I w + h)                        (Euler, with wheels)
    h'   = -tau_c                                                (motor torque on the wheels)
    tau_gg = k_gg 3 mu / |r|^5 (r_b x I r_b),  r_b = R(q)^T r     (gravity gradient)

The wheels' axial momenta ``h`` enter the total body momentum ``H = I w + h``, whose
derivative in the body frame is ``H' + w x H = tau_ext`` (the wheels' motor torque is
internal): with ``h' = tau_wheel`` the body gets ``-tau_wheel``.  The controller commands
``tau_c``, the torque the wheels put on the body, so ``h' = -tau_c`` and
``I w' = tau_ext - w x H + tau_c``.  With ``k_gg = 0`` (the parameter switch ``P_GG``) the body
feels no external torque and ``R(q) (I w + h)`` is conserved (tests/test_bench_spacecraft.py).

The controller is a PD law towards the local-vertical local-horizontal (LVLH, nadir-pointing)
frame of the orbit: target axes ``o3 = -r/|r|`` (nadir), ``o2 = -(r x v)/|r x v|`` (minus the
orbit normal), ``o1 = o2 x o3`` (about the velocity); the target rate is the orbit's,
``w_t = (r x v) / |r|^2`` in the world frame (exact for a Keplerian orbit).  The error
rotation ``R_e = R_t^T R(q)`` (body to target) is the error quaternion ``dq = q_t* (x) q``;
the law uses ``e = dq_0 dq_{1:3} = vex(R_e - R_e^T) / 4``, computed from the matrices
(no branch of a matrix-to-quaternion conversion, no sign(dq_0) switch: smooth, and the same for
``q`` and ``-q``), with no saturation::

    tau_c = -Kp e - Kd (w - R(q)^T w_t),   Kp = diag(kp),  Kd = diag(kd)

with ``kp_i = 2 wn^2 I_ii``, ``kd_i = 2 zeta wn I_ii`` (for small errors ``e = theta / 2``:
about a natural frequency ``wn`` and damping ``zeta`` per axis).  The law has no gyroscopic
compensation: the wheels' momentum (~10 N m s) times the orbit rate leaves a steady pointing
offset of about 0.6 deg after the slew (the error measured is against the reference run, not
against the target).

``R(q)`` is computed with ``s = 2 / |q|^2`` so it is a rotation for any non-zero ``q`` (the
peers that do not keep ``|q| = 1`` see the attitude of ``q / |q|``).

Parameters: one flat float64 vector ``p`` (N_PARAMS) so that per-body parameters are a
``(N, N_PARAMS)`` array::

    p[P_MU]            mu, km^3/s^2
    p[P_I:P_I+9]       the inertia tensor, row-major, kg m^2 (full, not diagonal)
    p[P_IINV:P_IINV+9] its inverse, row-major
    p[P_KP:P_KP+3]     kp, N m
    p[P_KD:P_KD+3]     kd, N m s
    p[P_GG]            k_gg: 1 gravity gradient on, 0 off

The equations are written once, `rhs_source` (scalar arithmetic on indexable ``y``, ``dydt``,
``p``, ``math.sqrt``), and compiled from that one source as a numba ``cfunc`` with rotode's C
signature (`make_cfunc`), as numba ``njit`` functions (`make_njit`, and `make_nbsolve_diffeq`
for CyRK's ``nbsolve_ivp``), and run as plain Python (`py_fun`).  The Cython version for CyRK's
``cysolve_ivp`` is benchmarks/engine/cyrk_spacecraft.pyx (the same formulas in the same order).
"""
import math

import numpy as np

N_STATE = 16
QUATERNION = 6                     # the quaternion block starts at y[6]
MU_EARTH = 398600.4418             # km^3/s^2 (WGS-84 / EGM96)
T_END = 3600.0                     # s: about 0.6 of an orbit

P_MU, P_I, P_IINV, P_KP, P_KD, P_GG = 0, 1, 10, 19, 22, 25
N_PARAMS = 26

#: a ~1000 kg spacecraft's inertia about its centre of mass (kg m^2): full, positive definite,
#: principal axes a few degrees off the body axes
INERTIA = np.array([[1350.0, -42.5, 31.8],
                    [-42.5, 1120.0, -17.3],
                    [31.8, -17.3, 890.0]])
WN, ZETA = 0.03, 0.8               # rad/s, -: the attitude loop

#: the state's scale per component: atol = rtol * SCALE for every tool (positions ~7000 km,
#: velocities ~7.5 km/s, q ~1, body rates up to ~1e-2 rad/s in the slew, wheels ~10 N m s), so
#: that a component crossing zero (r_z, the q_i) is not held to a tolerance far below its
#: block's size and each block is controlled relative to its own scale
SCALE = np.array([7000.0] * 3 + [7.5] * 3 + [1.0] * 4 + [1e-2] * 3 + [10.0] * 3)


def atol_of(rtol):
    """The absolute tolerance vector of every tool at ``rtol``."""
    return rtol * SCALE


def params(inertia=INERTIA, wn=WN, zeta=ZETA, gravity_gradient=True, mu=MU_EARTH):
    """The flat parameter vector (N_PARAMS,)."""
    inertia = np.asarray(inertia, dtype=float)
    p = np.zeros(N_PARAMS)
    p[P_MU] = mu
    p[P_I:P_I + 9] = inertia.ravel()
    p[P_IINV:P_IINV + 9] = np.linalg.inv(inertia).ravel()
    p[P_KP:P_KP + 3] = 2.0 * wn * wn * np.diag(inertia)
    p[P_KD:P_KD + 3] = 2.0 * zeta * wn * np.diag(inertia)
    p[P_GG] = 1.0 if gravity_gradient else 0.0
    return p


# ---- the equations, written once -------------------------------------------------------------

def rhs_source(t, y, dydt, p):
    """dydt = f(t, y; p) of the spacecraft; returns 0.  Scalar code only: numba compiles it
    for C pointers (cfunc) and arrays (njit), Python runs it on lists or arrays."""
    mu = p[0]
    rx = y[0]
    ry = y[1]
    rz = y[2]
    vx = y[3]
    vy = y[4]
    vz = y[5]
    q0 = y[6]
    q1 = y[7]
    q2 = y[8]
    q3 = y[9]
    wx = y[10]
    wy = y[11]
    wz = y[12]
    # two-body orbit
    r2 = rx * rx + ry * ry + rz * rz
    rn = math.sqrt(r2)
    mu_r3 = mu / (r2 * rn)
    dydt[0] = vx
    dydt[1] = vy
    dydt[2] = vz
    dydt[3] = -mu_r3 * rx
    dydt[4] = -mu_r3 * ry
    dydt[5] = -mu_r3 * rz
    # R(q), body to world, a rotation for any q != 0
    s = 2.0 / (q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
    R00 = 1.0 - s * (q2 * q2 + q3 * q3)
    R01 = s * (q1 * q2 - q0 * q3)
    R02 = s * (q1 * q3 + q0 * q2)
    R10 = s * (q1 * q2 + q0 * q3)
    R11 = 1.0 - s * (q1 * q1 + q3 * q3)
    R12 = s * (q2 * q3 - q0 * q1)
    R20 = s * (q1 * q3 - q0 * q2)
    R21 = s * (q2 * q3 + q0 * q1)
    R22 = 1.0 - s * (q1 * q1 + q2 * q2)
    # gravity gradient: k_gg 3 mu / |r|^5 (r_b x I r_b), r_b = R^T r
    bx = R00 * rx + R10 * ry + R20 * rz
    by = R01 * rx + R11 * ry + R21 * rz
    bz = R02 * rx + R12 * ry + R22 * rz
    Ibx = p[1] * bx + p[2] * by + p[3] * bz
    Iby = p[4] * bx + p[5] * by + p[6] * bz
    Ibz = p[7] * bx + p[8] * by + p[9] * bz
    g = p[25] * 3.0 * mu_r3 / r2
    tx = g * (by * Ibz - bz * Iby)
    ty = g * (bz * Ibx - bx * Ibz)
    tz = g * (bx * Iby - by * Ibx)
    # LVLH target: o3 = -r/|r|, o2 = -(r x v)/|r x v|, o1 = o2 x o3; rate (r x v)/|r|^2
    hx = ry * vz - rz * vy
    hy = rz * vx - rx * vz
    hz = rx * vy - ry * vx
    hn = math.sqrt(hx * hx + hy * hy + hz * hz)
    o3x = -rx / rn
    o3y = -ry / rn
    o3z = -rz / rn
    o2x = -hx / hn
    o2y = -hy / hn
    o2z = -hz / hn
    o1x = o2y * o3z - o2z * o3y
    o1y = o2z * o3x - o2x * o3z
    o1z = o2x * o3y - o2y * o3x
    # e = dq0 dq_v = vex(R_e - R_e^T) / 4, R_e = R_t^T R: R_e[i][j] = o_(i+1) . R[:, j]
    ex = 0.25 * ((o3x * R01 + o3y * R11 + o3z * R21) - (o2x * R02 + o2y * R12 + o2z * R22))
    ey = 0.25 * ((o1x * R02 + o1y * R12 + o1z * R22) - (o3x * R00 + o3y * R10 + o3z * R20))
    ez = 0.25 * ((o2x * R00 + o2y * R10 + o2z * R20) - (o1x * R01 + o1y * R11 + o1z * R21))
    # the rate error: w - R^T w_t
    dwx = wx - (R00 * hx + R10 * hy + R20 * hz) / r2
    dwy = wy - (R01 * hx + R11 * hy + R21 * hz) / r2
    dwz = wz - (R02 * hx + R12 * hy + R22 * hz) / r2
    # PD: tau_c = -Kp e - Kd dw, the torque of the wheels on the body; h' = -tau_c
    cx = -p[19] * ex - p[22] * dwx
    cy = -p[20] * ey - p[23] * dwy
    cz = -p[21] * ez - p[24] * dwz
    dydt[13] = -cx
    dydt[14] = -cy
    dydt[15] = -cz
    # Euler with wheels: I w' = tau_gg + tau_c - w x (I w + h)
    Hx = p[1] * wx + p[2] * wy + p[3] * wz + y[13]
    Hy = p[4] * wx + p[5] * wy + p[6] * wz + y[14]
    Hz = p[7] * wx + p[8] * wy + p[9] * wz + y[15]
    mx = tx + cx - (wy * Hz - wz * Hy)
    my = ty + cy - (wz * Hx - wx * Hz)
    mz = tz + cz - (wx * Hy - wy * Hx)
    dydt[10] = p[10] * mx + p[11] * my + p[12] * mz
    dydt[11] = p[13] * mx + p[14] * my + p[15] * mz
    dydt[12] = p[16] * mx + p[17] * my + p[18] * mz
    # q' = 1/2 q (x) (0, w)
    dydt[6] = 0.5 * (-q1 * wx - q2 * wy - q3 * wz)
    dydt[7] = 0.5 * (q0 * wx + q2 * wz - q3 * wy)
    dydt[8] = 0.5 * (q0 * wy - q1 * wz + q3 * wx)
    dydt[9] = 0.5 * (q0 * wz + q1 * wy - q2 * wx)
    return 0


# ---- the compiled and Python versions of that one source -------------------------------------

def c_signature():
    """rotode.ODE.signature when rotode has it, else the same C signature written here:
    ``int f(double t, const double* y, double* dydt, const double* p)``."""
    import rotode
    if hasattr(rotode, "ODE"):
        return rotode.ODE.signature
    from numba import types
    ptr = types.CPointer(types.float64)
    return types.intc(types.float64, ptr, ptr, ptr)


def make_cfunc():
    """`rhs_source` as a numba ``cfunc`` with rotode's C signature (``.address``, ``.ctypes``)."""
    import numba
    return numba.cfunc(c_signature(), nopython=True)(rhs_source)


def make_njit():
    """`rhs_source` as a numba ``njit`` function ``f(t, y, dydt, p)`` on arrays (inlined into
    its callers at numba's IR level)."""
    import numba
    return numba.njit(inline="always")(rhs_source)


def make_nbsolve_diffeq():
    """The right-hand side in ``nbsolve_ivp``'s form, ``diffeq(t, y, p) -> dydt`` (njit), with
    `rhs_source` inlined."""
    import numba
    core = make_njit()

    @numba.njit
    def diffeq(t, y, p):
        dydt = np.empty(16)
        core(t, y, dydt, p)
        return dydt

    return diffeq


def py_fun(t, y, p):
    """`rhs_source` in plain Python, SciPy's form ``fun(t, y, p) -> dydt`` (``args=(p,)``).  The
    state and parameters are read as Python floats (``tolist``), which runs the scalar code
    several times faster than on NumPy scalars."""
    out = [0.0] * 16
    rhs_source(t, y.tolist(), out, p.tolist() if isinstance(p, np.ndarray) else p)
    return np.array(out)


# ---- the initial state -----------------------------------------------------------------------

def _quaternion_from_matrix(R):
    """Scalar-first unit quaternion of a rotation matrix (Shepperd's method)."""
    tr = np.trace(R)
    k = int(np.argmax([tr, R[0, 0], R[1, 1], R[2, 2]]))
    if k == 0:
        q = np.array([1 + tr, R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    elif k == 1:
        q = np.array([R[2, 1] - R[1, 2], 1 + 2 * R[0, 0] - tr, R[0, 1] + R[1, 0],
                      R[0, 2] + R[2, 0]])
    elif k == 2:
        q = np.array([R[0, 2] - R[2, 0], R[0, 1] + R[1, 0], 1 + 2 * R[1, 1] - tr,
                      R[1, 2] + R[2, 1]])
    else:
        q = np.array([R[1, 0] - R[0, 1], R[0, 2] + R[2, 0], R[1, 2] + R[2, 1],
                      1 + 2 * R[2, 2] - tr])
    q /= np.linalg.norm(q)
    return q if q[0] >= 0 else -q


def rotation_matrix(q):
    """R(q) of a scalar-first quaternion, body to world (NumPy, for checks)."""
    q = np.asarray(q, dtype=float)
    q0, q1, q2, q3 = q / np.linalg.norm(q)
    return np.array([
        [1 - 2 * (q2 * q2 + q3 * q3), 2 * (q1 * q2 - q0 * q3), 2 * (q1 * q3 + q0 * q2)],
        [2 * (q1 * q2 + q0 * q3), 1 - 2 * (q1 * q1 + q3 * q3), 2 * (q2 * q3 - q0 * q1)],
        [2 * (q1 * q3 - q0 * q2), 2 * (q2 * q3 + q0 * q1), 1 - 2 * (q1 * q1 + q2 * q2)]])


def lvlh(r, v):
    """The LVLH target: (R_t, whose columns are o1, o2, o3 in the world frame; its rate in the
    world frame)."""
    r, v = np.asarray(r, float), np.asarray(v, float)
    o3 = -r / np.linalg.norm(r)
    h = np.cross(r, v)
    o2 = -h / np.linalg.norm(h)
    return np.column_stack([np.cross(o2, o3), o2, o3]), h / (r @ r)


def _axis_angle(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def initial_state(altitude_km=621.863, speed_factor=1.002, inclination_deg=51.6,
                  error_deg=40.0, error_axis=(1.0, -2.0, 0.5), rate_error=(4e-3, -6e-3, 3e-3),
                  wheels=(2.0, -1.5, 0.8)):
    """y0: a slightly eccentric LEO orbit (r0 = 7000 km on the x axis, 0.2 % above circular
    speed, inclined 51.6 deg), the body 40 deg off LVLH with rate errors of a few mrad/s and
    some wheel momentum: the controller slews to nadir pointing in the first ten minutes, then
    tracks it against the gravity gradient."""
    r0 = np.array([6378.137 + altitude_km, 0.0, 0.0])
    inc = np.radians(inclination_deg)
    v0 = speed_factor * math.sqrt(MU_EARTH / r0[0]) * np.array([0.0, np.cos(inc), np.sin(inc)])
    Rt, wt = lvlh(r0, v0)
    R0 = Rt @ _axis_angle(error_axis, np.radians(error_deg))
    w0 = R0.T @ wt + np.asarray(rate_error, float)
    return np.concatenate([r0, v0, _quaternion_from_matrix(R0), w0, np.asarray(wheels, float)])


def ensemble(n, seed=20261127):
    """(y0 (n, 16), params (n, N_PARAMS)): n spacecraft, each with its own parameters (the
    inertia scaled by 0.5 .. 1.5 and turned up to 5 deg, the loop's natural frequency 0.02 ..
    0.04 rad/s and the gains with it) and wheel momenta (+- 0.5 N m s), for batches."""
    rng = np.random.default_rng(seed)
    P = np.empty((n, N_PARAMS))
    scale = rng.uniform(0.5, 1.5, n)
    angle = np.radians(rng.uniform(-5.0, 5.0, n))
    wn = rng.uniform(0.02, 0.04, n)
    for i in range(n):
        R = _axis_angle((1.0, 2.0, -1.0), angle[i])
        P[i] = params(inertia=scale[i] * R @ INERTIA @ R.T, wn=wn[i])
    y0 = np.tile(initial_state(), (n, 1))
    y0[:, 13:16] += rng.normal(scale=0.5, size=(n, 3))
    return y0, P


# ---- measures --------------------------------------------------------------------------------

def angle_deg(q, ref):
    """The angle (deg) of ``ref^-1 q``, both normalised: the attitude error."""
    q = np.asarray(q, dtype=float) / np.linalg.norm(q)
    r = np.asarray(ref, dtype=float) / np.linalg.norm(ref)
    w = abs(float(r @ q))                             # the scalar part of r* (x) q
    v = np.array([r[0] * q[1] - q[0] * r[1] - (r[2] * q[3] - r[3] * q[2]),
                  r[0] * q[2] - q[0] * r[2] - (r[3] * q[1] - r[1] * q[3]),
                  r[0] * q[3] - q[0] * r[3] - (r[1] * q[2] - r[2] * q[1])])
    return float(np.degrees(2.0 * math.atan2(np.linalg.norm(v), w)))


def momentum_world(y, p):
    """Total angular momentum in the world frame, R(q) (I w + h), N m s."""
    inertia = np.asarray(p[P_I:P_I + 9]).reshape(3, 3)
    return rotation_matrix(y[6:10]) @ (inertia @ y[10:13] + y[13:16])
