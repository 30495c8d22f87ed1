"""The dense output of the compiled error-controlled steps, as SciPy evaluates it: one step's
continuous extension (`StepInterpolant`) and a run's steps as ``OdeSolution`` takes them
(`Steps`), shared by `rotode.solve_ivp` and the solver classes of `rotode.solvers`.
"""
import numpy as np
from scipy.integrate import DenseOutput

from rotode import methods

__all__ = ["StepInterpolant", "Steps"]


class StepInterpolant(DenseOutput):
    """The continuous extension of one step of DOPRI5 (4th order) or DOP853 (7th order), as
    SciPy's ``RkDenseOutput`` and ``Dop853DenseOutput`` evaluate them (Hairer, Norsett &
    Wanner 1993, sec. II.6): ``F`` holds the compiled step's coefficients (rotode/erk.pxd
    ``erk_dense_prepare``)."""

    def __init__(self, t_old, t, y_old, F, kind, h=None):
        super().__init__(t_old, t)
        self.h = t - t_old if h is None else h      # (a step cut short by a terminal event)
        self.y_old = y_old
        self.F = F
        self.kind = kind

    def _call_impl(self, t):
        x = (np.asarray(t, dtype=float) - self.t_old) / self.h
        if self.kind == methods.PairKind.STANDARD:       # (rows from the pair's powers on: 0)
            acc = np.zeros((self.F.shape[1],) + x.shape)
            power = np.ones_like(x)
            for r in range(4):
                power = power * x
                acc = acc + np.multiply.outer(self.F[r], power)
            return (self.y_old if x.ndim == 0 else self.y_old[:, None]) + acc
        acc = np.zeros((self.F.shape[1],) + x.shape)
        for r, f in enumerate(self.F[::-1]):
            acc = acc + (f if x.ndim == 0 else f[:, None])
            acc = acc * (x if r % 2 == 0 else 1.0 - x)
        return (self.y_old if x.ndim == 0 else self.y_old[:, None]) + acc


class Steps:
    """The steps' interpolants as a sequence, each made when ``OdeSolution`` asks for it (a
    run of 10^4 steps does not build 10^4 Python objects up front)."""

    def __init__(self, t, z, F, kind, h):
        self.t, self.z, self.F, self.kind, self.h = t, z, F, kind, h

    def __len__(self):
        return len(self.F)

    def __getitem__(self, j):
        if not -len(self) <= j < len(self):
            raise IndexError(j)
        j = j % len(self)
        return StepInterpolant(self.t[j], self.t[j + 1], self.z[j], self.F[j], self.kind,
                                self.h[j])
