"""Views shared by the results of `rotode.integrate` (NumPy and dask alike)."""
from scipy.spatial.transform import Rotation


def rotations(q):
    """``Rotation`` of scalar-first quaternions (n_t, 4), or (N, n_t, 4): an (N, n_t)
    Rotation where SciPy has N-D rotations (1.17), else a list of N (n_t,) Rotations."""
    if q.ndim <= 2:
        return Rotation.from_quat(q, scalar_first=True)
    try:
        return Rotation.from_quat(q, scalar_first=True)
    except ValueError:          # SciPy without N-D rotations: one stack per body
        return [Rotation.from_quat(qi, scalar_first=True) for qi in q]


class StateViews:
    """``q``, ``q_final``, ``p``, ``v`` and ``nfev`` of a result holding ``y`` (..., n_t, k),
    ``y_final`` (..., k) or None, and ``stats``."""

    @property
    def q(self):
        """Orientation quaternions ``y[..., :4]`` (scalar first, body to world)."""
        return self.y[..., :4]

    @property
    def q_final(self):
        """The quaternion part of ``y_final`` (where each body's run ended), or None."""
        y_final = getattr(self, "y_final", None)
        return None if y_final is None else y_final[..., :4]

    @property
    def p(self):
        """Position ``y[..., 7:10]`` (world) of a 13-component state, else None."""
        return self.y[..., 7:10] if self.y.shape[-1] == 13 else None

    @property
    def v(self):
        """Velocity ``y[..., 10:13]`` (world) of a 13-component state, else None."""
        return self.y[..., 10:13] if self.y.shape[-1] == 13 else None

    @property
    def nfev(self):
        """``stats["nfev"]``: evaluations of w(t) or of the torque per body (0 if absent)."""
        return self.stats.get("nfev", 0)
