"""Vectorised kernels against their SciPy/NumPy baselines, with the accuracy they buy."""
import numpy as np
from scipy.spatial.transform import Rotation

from rotode import quaternion, so3

from .common import quaternions, rotation_vectors

SIZES = [1, 1_000, 1_000_000]


class So3Exp:
    params = SIZES
    param_names = ["n"]
    # 1e6 rows write 72 MB of fresh memory per call: the default handful of samples is too
    # few for a stable median on a loaded machine
    repeat = (10, 30, 20.0)

    def setup(self, n):
        self.v = rotation_vectors(n)
        self.out = np.empty((n, 3, 3))
        self.out.fill(0.0)  # touch the pages: time_rotode_exp_into_out measures no page faults

    def time_rotode_exp(self, n):
        so3.exp(self.v)

    def time_rotode_exp_into_out(self, n):
        so3.exp(self.v, out=self.out)

    def time_rotode_exp_portable(self, n):
        # the loop without the AVX2 and AVX-512 clones, as on CPUs that lack them
        so3._rows_isa(0)
        try:
            so3.exp(self.v)
        finally:
            so3._rows_isa(2)

    def time_scipy_from_rotvec_as_matrix(self, n):
        Rotation.from_rotvec(self.v).as_matrix()

    def track_max_deviation_from_scipy(self, n):
        return float(np.abs(so3.exp(self.v) - Rotation.from_rotvec(self.v).as_matrix()).max())

    track_max_deviation_from_scipy.unit = "abs"

    def peakmem_rotode_exp(self, n):
        so3.exp(self.v)


class So3LogDexp:
    params = SIZES
    param_names = ["n"]

    def setup(self, n):
        self.v = rotation_vectors(n)
        self.R = so3.exp(self.v)

    def time_log(self, n):
        so3.log(self.R)

    def time_scipy_from_matrix_as_rotvec(self, n):
        Rotation.from_matrix(self.R).as_rotvec()

    def time_dexp(self, n):
        so3.dexp(self.v)

    def time_dexp_inv(self, n):
        so3.dexp_inv(self.v)

    def time_exp_and_dexp(self, n):
        so3.exp_and_dexp(self.v)

    def track_log_round_trip_relative_error(self, n):
        v = self.v[np.linalg.norm(self.v, axis=1) < np.pi - 1e-6]
        back = so3.log(so3.exp(v))
        return float((np.linalg.norm(back - v, axis=1) / np.linalg.norm(v, axis=1)).max())

    track_log_round_trip_relative_error.unit = "relative"


class SingleRotation:
    """One rotation per call, as controllers and game loops call: rotode beside the SciPy
    `Rotation` calls that give the same result."""

    params = ["multiply", "rotate", "to_matrix", "exp", "log"]
    param_names = ["operation"]

    def setup(self, operation):
        self.p, self.q = quaternions(2)
        self.v = rotation_vectors(1)[0]
        self.R = so3.exp(self.v)
        self.rotode = {
            "multiply": lambda: quaternion.multiply(self.p, self.q),
            "rotate": lambda: quaternion.rotate(self.q, self.v),
            "to_matrix": lambda: quaternion.to_matrix(self.q),
            "exp": lambda: so3.exp(self.v),
            "log": lambda: so3.log(self.R),
        }[operation]
        p = Rotation.from_quat(self.p, scalar_first=True)
        q = Rotation.from_quat(self.q, scalar_first=True)
        self.scipy = {
            "multiply": lambda: Rotation.from_quat(self.p, scalar_first=True)
            * Rotation.from_quat(self.q, scalar_first=True),
            "rotate": lambda: Rotation.from_quat(self.q, scalar_first=True).apply(self.v),
            "to_matrix": lambda: Rotation.from_quat(self.q, scalar_first=True).as_matrix(),
            "exp": lambda: Rotation.from_rotvec(self.v).as_matrix(),
            "log": lambda: Rotation.from_matrix(self.R).as_rotvec(),
        }[operation]
        self.scipy_prebuilt = {       # SciPy with its Rotation objects made beforehand
            "multiply": lambda: p * q,
            "rotate": lambda: q.apply(self.v),
            "to_matrix": lambda: q.as_matrix(),
            "exp": lambda: Rotation.from_rotvec(self.v).as_matrix(),
            "log": lambda: Rotation.from_matrix(self.R).as_rotvec(),
        }[operation]

    def time_rotode(self, operation):
        self.rotode()

    def time_scipy(self, operation):
        self.scipy()

    def time_scipy_prebuilt_rotation(self, operation):
        self.scipy_prebuilt()

    def track_max_deviation_from_scipy(self, operation):
        a, b = np.asarray(self.rotode()), self.scipy()
        b = b.as_quat(scalar_first=True) if isinstance(b, Rotation) else b
        if operation == "multiply":   # the product of unit quaternions, up to sign
            a = a / np.linalg.norm(self.p) / np.linalg.norm(self.q) * np.sign(a[0] * b[0])
        return float(np.abs(a - b).max())

    track_max_deviation_from_scipy.unit = "absolute"


class QuaternionProduct:
    params = SIZES
    param_names = ["n"]

    def setup(self, n):
        self.p = quaternions(n)
        self.q = quaternions(n)[::-1].copy()

    def time_rotode_multiply(self, n):
        quaternion.multiply(self.p, self.q)

    def time_numpy_multiply(self, n):
        p, q = self.p, self.q
        w1, v1, w2, v2 = p[:, :1], p[:, 1:], q[:, :1], q[:, 1:]
        np.concatenate([w1 * w2 - np.sum(v1 * v2, 1, keepdims=True),
                        w1 * v2 + w2 * v1 + np.cross(v1, v2)], axis=1)

    def time_to_matrix(self, n):
        quaternion.to_matrix(self.p)

    def time_rotate(self, n):
        quaternion.rotate(self.p, self.q[:, 1:])

    def time_angle_between(self, n):
        quaternion.angle_between(self.p, self.q)

    def time_scipy_angle_between(self, n):
        (Rotation.from_quat(self.p, scalar_first=True).inv()
         * Rotation.from_quat(self.q, scalar_first=True)).magnitude()

    def track_norm_of_product_error(self, n):
        pq = quaternion.multiply(self.p, self.q)
        expected = np.linalg.norm(self.p, axis=1) * np.linalg.norm(self.q, axis=1)
        return float(np.abs(np.linalg.norm(pq, axis=1) / expected - 1).max())

    track_norm_of_product_error.unit = "relative"


def _facade_calls(n):
    """Every public kernel facade with seeded arguments of batch size n."""
    v = rotation_vectors(n)
    q = quaternions(n)
    R = so3.exp(v)
    rot = quaternion.to_scipy(q)
    return {
        "so3.hat": lambda: so3.hat(v),
        "so3.vee": lambda: so3.vee(so3.hat(v)),
        "so3.exp": lambda: so3.exp(v),
        "so3.log": lambda: so3.log(R),
        "so3.dexp": lambda: so3.dexp(v),
        "so3.dexp_inv": lambda: so3.dexp_inv(v),
        "so3.exp_and_dexp": lambda: so3.exp_and_dexp(v),
        "so3.coefficients": lambda: so3.coefficients(np.linalg.norm(v, axis=1)),
        "so3.exp_jacobian": lambda: so3.exp_jacobian(v),
        "so3.dexp_jacobian": lambda: so3.dexp_jacobian(v),
        "so3.dexp_inv_jacobian": lambda: so3.dexp_inv_jacobian(v),
        "quaternion.multiply": lambda: quaternion.multiply(q, q),
        "quaternion.conjugate": lambda: quaternion.conjugate(q),
        "quaternion.inverse": lambda: quaternion.inverse(q),
        "quaternion.norm": lambda: quaternion.norm(q),
        "quaternion.rotate": lambda: quaternion.rotate(q, v),
        "quaternion.to_matrix": lambda: quaternion.to_matrix(q),
        "quaternion.from_matrix": lambda: quaternion.from_matrix(R),
        "quaternion.exp": lambda: quaternion.exp(q),
        "quaternion.log": lambda: quaternion.log(q),
        "quaternion.exp_approx": lambda: quaternion.exp_approx(v),
        "quaternion.to_scipy": lambda: quaternion.to_scipy(q),
        "quaternion.from_scipy": lambda: quaternion.from_scipy(rot),
        "quaternion.to_matrix_jacobian": lambda: quaternion.to_matrix_jacobian(q),
        "quaternion.angle_between": lambda: quaternion.angle_between(q, q[::-1]),
    }


FACADES = sorted(_facade_calls(1))


class KernelFacades:
    """Every public kernel facade at batch sizes 1 (call overhead) to 1e5 (throughput)."""

    params = (FACADES, [1, 1_000, 100_000])
    param_names = ["kernel", "n"]

    def setup(self, kernel, n):
        self.call = _facade_calls(n)[kernel]

    def time_facade(self, kernel, n):
        self.call()
