"""Views shared by the results of `rotode.integrate` (NumPy and dask alike)."""


class StateViews:
    """``q``, ``p``, ``v`` and ``nfev`` of a result holding ``y`` (..., n_t, k) and ``stats``."""

    @property
    def q(self):
        """Orientation quaternions ``y[..., :4]`` (scalar first, body to world)."""
        return self.y[..., :4]

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
