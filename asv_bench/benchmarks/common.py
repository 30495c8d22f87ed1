"""Seeded problem set-up shared by every benchmark."""
import numpy as np

SEED = 20261121


def rotation_vectors(n, scale=1.0):
    """n seeded rotation vectors with normally distributed components (times ``scale``)."""
    return scale * np.random.default_rng(SEED).normal(size=(n, 3))


def quaternions(n):
    """n seeded non-unit quaternions."""
    return np.random.default_rng(SEED + 1).normal(size=(n, 4))


# ---- seed 004 benchmark (Rucker 2018, eq. 29): w(t) = A sin(B t + phase_i), body frame ----------
A, B = np.pi / 2, 2 * np.pi / 10
PHASE = np.array([0.0, 2 * np.pi / 3, 4 * np.pi / 3])
T_END = 100.0

# T-handle (Dzhanibekov) body of seed 002 sec. 11, principal moments, spun near the middle axis.
T_HANDLE = np.array([2.5, 1.4, 1.3])
T_HANDLE_W0 = np.array([0.05, 5.0, 0.05])

# Lagrange top of seed 004 sec. IV.
TOP_INERTIA = np.array([1.0, 1.0, 0.5])
TOP_W0 = np.array([1.5, 0.0, 1.0])


def seed004_omega():
    """The seed 004 angular-velocity source."""
    from rotode import omega

    return omega.Sinusoid(amplitude=A, rate=B, phase=PHASE)


def numpy_quaternion_kinematics(t, q):
    """q' = 1/2 q * w (body frame), w of seed 004 eq. 29, written out by hand (strong baseline)."""
    w = A * np.sin(B * t + PHASE)
    return 0.5 * np.array([
        -q[1] * w[0] - q[2] * w[1] - q[3] * w[2],
        q[0] * w[0] + q[2] * w[2] - q[3] * w[1],
        q[0] * w[1] - q[1] * w[2] + q[3] * w[0],
        q[0] * w[2] + q[1] * w[1] - q[2] * w[0]])


def numpy_rigid_body(t, y, inertia=T_HANDLE):
    """Torque-free rigid body with principal moments: [q' ; I^-1 (-w x I w)]."""
    q, w = y[:4], y[4:]
    Iw = inertia * w
    gyro = np.array([w[1] * Iw[2] - w[2] * Iw[1],
                     w[2] * Iw[0] - w[0] * Iw[2],
                     w[0] * Iw[1] - w[1] * Iw[0]])
    dq = 0.5 * np.array([
        -q[1] * w[0] - q[2] * w[1] - q[3] * w[2],
        q[0] * w[0] + q[2] * w[2] - q[3] * w[1],
        q[0] * w[1] - q[1] * w[2] + q[3] * w[0],
        q[0] * w[2] + q[1] * w[1] - q[2] * w[0]])
    return np.concatenate([dq, -gyro / inertia])


_CACHE = {}


def seed004_reference():
    """Unit quaternion at t = 100 of the seed 004 benchmark (DOP853, rtol 1e-13, NumPy rhs)."""
    if "seed004" not in _CACHE:
        from scipy.integrate import solve_ivp

        sol = solve_ivp(numpy_quaternion_kinematics, (0.0, T_END), [1.0, 0, 0, 0],
                        method="DOP853", rtol=1e-13, atol=1e-14)
        q = sol.y[:, -1]
        _CACHE["seed004"] = q / np.linalg.norm(q)
    return _CACHE["seed004"]


def angle_error_deg(q, q_ref):
    """Angle in degrees of the rotation between q (any nonzero length) and the unit q_ref."""
    q = np.asarray(q, dtype=float)
    c = abs(float(np.dot(q, q_ref))) / np.linalg.norm(q)
    s = np.linalg.norm(np.cross(q_ref[1:], q[1:]) + q_ref[0] * q[1:] - q[0] * q_ref[1:])
    return float(np.degrees(2.0 * np.arctan2(s / np.linalg.norm(q), c)))
