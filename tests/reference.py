"""Plain-NumPy implementations of the right-hand sides, written independently of rotode."""
import numpy as np

A, B = np.pi / 2, 2 * np.pi / 10
PHASE = np.array([0.0, 2 * np.pi / 3, 4 * np.pi / 3])


def benchmark_w(t):
    """Rucker 2018 eq. 29 (body frame)."""
    return A * np.sin(B * t + PHASE)


def qmul(p, q):
    pw, pv = p[0], p[1:]
    qw, qv = q[0], q[1:]
    return np.concatenate([[pw * qw - pv @ qv], pw * qv + qw * pv + np.cross(pv, qv)])


def pure(v):
    return np.concatenate([[0.0], v])


def conj(q):
    return np.array([q[0], -q[1], -q[2], -q[3]])


def qmat(q):
    """R(q) for any nonzero q (Rucker 2018 eq. 13)."""
    q = q / np.linalg.norm(q)
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def hat(v):
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def quat_kin(q, w, frame="body", gain=0.0):
    d = qmul(q, pure(w)) if frame == "body" else qmul(pure(w), q)
    return 0.5 * d + gain * (1 - q @ q) * q


def euler(w, tau, Im, gyroscopic=True):
    r = tau - np.cross(w, Im @ w) if gyroscopic else tau
    return np.linalg.solve(Im, r)


def gravity(q, m, g, com):
    return m * g * np.cross(com, qmat(q).T @ np.array([0, 0, -1.0]))


def dexp_inv(v, w):
    """T(v)^-1 w from the series-free closed form with the full matrix (|v| > 0)."""
    a = np.linalg.norm(v)
    K = hat(v)
    c = (1 - (a / 2) / np.tan(a / 2)) / a**2
    return (np.eye(3) - K / 2 + c * K @ K) @ w


def expmap(v):
    a = np.linalg.norm(v)
    K = hat(v)
    return np.eye(3) + np.sin(a) / a * K + (1 - np.cos(a)) / a**2 * K @ K


def rigid_body(y, Im, tau=None, gain=0.0, gyroscopic=True):
    tau = np.zeros(3) if tau is None else tau
    return np.concatenate([quat_kin(y[:4], y[4:], "body", gain),
                           euler(y[4:], tau, Im, gyroscopic)])


def second_order(y, Im, tau=None):
    tau = np.zeros(3) if tau is None else tau
    q, p = y[:4], y[4:]
    u = qmul(conj(q), p)[1:]
    a = np.linalg.solve(Im, tau - 4 * np.cross(u, Im @ u))
    return np.concatenate([p, qmul(qmul(p, conj(q)), p) + 0.5 * qmul(q, pure(a))])


def euler_xyz_rates(e, w):
    """Intrinsic XYZ: w_body = E(b, c) e', solved with numpy.linalg."""
    b, c = e[1], e[2]
    E = np.array([[np.cos(b) * np.cos(c), np.sin(c), 0],
                  [-np.cos(b) * np.sin(c), np.cos(c), 0],
                  [np.sin(b), 0, 1]])
    return np.linalg.solve(E, w)
