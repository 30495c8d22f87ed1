"""Views shared by the results of `rotode.integrate` (NumPy and dask alike)."""


class StateViews:
    """``q``, ``p``, ``v`` and ``nfev`` of a result holding ``y`` (..., n_t, k) and ``stats``."""

    @property
    def q(self):
        return self.y[..., :4]

    @property
    def p(self):
        return self.y[..., 7:10] if self.y.shape[-1] == 13 else None

    @property
    def v(self):
        return self.y[..., 10:13] if self.y.shape[-1] == 13 else None

    @property
    def nfev(self):
        return self.stats.get("nfev", 0)
