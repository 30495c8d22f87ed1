"""Views shared by the results of `rotode.integrate` (NumPy and dask alike)."""
import numpy as np
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


def _blocks(y, quaternions):
    """The quaternion columns of rows y: y[..., :4], the one block of an ODE, or its blocks
    stacked (..., B, 4) (None for an ODE without any)."""
    if quaternions is None:
        return y[..., :4]
    if len(quaternions) == 1:
        return y[..., quaternions[0]:quaternions[0] + 4]
    if not quaternions:
        return None
    return np.stack([y[..., b:b + 4] for b in quaternions], axis=-2)


class StateViews:
    """``q``, ``q_final``, ``p``, ``v`` and ``nfev`` of a result holding ``y`` (..., n_t, k),
    ``y_final`` (..., k) or None, and ``stats``."""

    @property
    def q(self):
        """Orientation quaternions ``y[..., :4]`` (scalar first, body to world); for a user's
        `rotode.ODE` its block, or all of them stacked (..., B, 4)."""
        return _blocks(self.y, getattr(self, "quaternions", None))

    @property
    def q_final(self):
        """The quaternion part of ``y_final`` (where each body's run ended), or None."""
        y_final = getattr(self, "y_final", None)
        return None if y_final is None else _blocks(y_final, getattr(self, "quaternions", None))

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
