"""The dense output of the compiled steps, as SciPy evaluates it: one step's continuous
extension (`StepInterpolant`), the cubic Hermite interpolant of a fixed step (`Hermite`), a
user's state with quaternion blocks mapped from either (`BlockOutput`), and a run's steps as
``OdeSolution`` takes them (`Steps`, `BlockSteps`), shared by `rotode.solve_ivp` and the solver
classes of `rotode.solvers`.
"""
import numpy as np
from scipy.integrate import DenseOutput

from rotode import methods, quaternion

__all__ = ["StepInterpolant", "Steps", "Hermite", "BlockLayout", "BlockOutput", "BlockSteps"]


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


class Hermite(DenseOutput):
    """The cubic Hermite interpolant of the state over one fixed step, from the states and
    their derivatives at both ends (the end points come out exactly: h00 = 0 and h01 = 1 at
    the step's end, so a time on the grid gets the step's own bits)."""

    def __init__(self, t_old, t, y_old, y, f_old, f):
        super().__init__(t_old, t)
        self.h = t - t_old
        self.y_old, self.y = y_old, y
        self.f_old, self.f = f_old, f

    def _call_impl(self, t):
        s = (np.asarray(t, dtype=float) - self.t_old) / self.h
        h00 = 1.0 - s * s * (3.0 - 2.0 * s)   # 2s^3 - 3s^2 + 1
        h10 = s * (1.0 - s) ** 2
        h01 = s * s * (3.0 - 2.0 * s)
        h11 = s * s * (s - 1.0)
        return (np.multiply.outer(self.y_old, h00) + np.multiply.outer(self.y, h01)
                + self.h * (np.multiply.outer(self.f_old, h10)
                            + np.multiply.outer(self.f, h11)))


class BlockLayout:
    """Where a user's state (`rotode.ODE`) holds its quaternion blocks: their offsets
    ``blocks``, the other components ``rest``, the state size ``n``; ``group``: the
    interpolated vector is the Runge-Kutta-Munthe-Kaas algebra state ``[v_1, ..., v_k,
    y[rest]]`` (each block ``q_b exp(v_b/2)`` from its unit start ``q_b``), else the state
    itself; ``normalize``: the blocks of the state are projected to unit length (as the
    integrator's rows are)."""

    def __init__(self, blocks, n, group, normalize):
        self.blocks = tuple(blocks)
        self.n = n
        inside = np.zeros(n, dtype=bool)
        for b in self.blocks:
            inside[b:b + 4] = True
        self.rest = np.flatnonzero(~inside)
        self.group = group
        self.normalize = normalize and not group

    def state(self, z, y_old):
        """The state (n,) or (n, m) of the interpolated ``z`` over a step from the row
        ``y_old``."""
        if not self.group:
            if not self.normalize or not self.blocks:
                return z
            y = np.array(z, dtype=float, copy=True)
            for b in self.blocks:
                y[b:b + 4] = y[b:b + 4] / np.linalg.norm(y[b:b + 4], axis=0)
            return y
        y = np.empty((self.n,) + z.shape[1:])
        k = len(self.blocks)
        for j, b in enumerate(self.blocks):
            base = y_old[b:b + 4] / np.linalg.norm(y_old[b:b + 4])
            e = quaternion.exp(0.5 * np.moveaxis(z[3 * j:3 * j + 3], 0, -1))
            y[b:b + 4] = np.moveaxis(quaternion.multiply(base, e), -1, 0)
        y[self.rest] = z[3 * k:]
        return y


class BlockOutput(DenseOutput):
    """One step of a user's state with quaternion blocks: ``inner`` (a `StepInterpolant` of
    the algebra state or of the state, or a `Hermite`) mapped by the `BlockLayout`, so every
    block is a unit quaternion at every time (each block ``q_b exp(v_b/2)`` on the group,
    or projected)."""

    def __init__(self, inner, layout, y_old):
        super().__init__(inner.t_old, inner.t)
        self.inner, self.layout, self.y_old = inner, layout, y_old

    def _call_impl(self, t):
        return self.layout.state(self.inner(t), self.y_old)


class BlockSteps:
    """The steps of a user's state as ``OdeSolution`` takes them, each made when asked for:
    ``make(j)`` gives the inner interpolant of step j, from ``t[j]`` to ``t[j + 1]``, and
    ``rows[j]`` is its starting row."""

    def __init__(self, t, make, layout, rows):
        self.t, self.make, self.layout, self.rows = t, make, layout, rows
        self.n = len(t) - 1

    def __len__(self):
        return self.n

    def __getitem__(self, j):
        if not -self.n <= j < self.n:
            raise IndexError(j)
        j = j % self.n
        return BlockOutput(self.make(j), self.layout, self.rows[j])
