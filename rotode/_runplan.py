"""The typed plan of a run and what the engine hands back (docs/architecture.md, "The plan").

The facades (`rotode.integrate`, `rotode.solve_ivp`, the solver classes of `rotode.solvers`;
dask through `integrate`) check their arguments once and build a `Plan`: the model and method,
the time grid and its output slots, the method's own options, the threads, and the run's
pieces that are not the user's options: the step size `Control`, the `EventRequest`, the
`StepRequest` (a record of every step), whether the step proposed after the last one is wanted
(``h_next``), a continued run (``resume``) and the sample times as step ends (``stops``).  A
runner's ``run_plan(plan)`` (rotode/kinematic.pyx, dynamic.pyx, implicit.pyx) returns a
`RunOutput`: the rows, the stats and, as asked, the `EventRecord`, the `StepRecord` and the
proposals ``h_next``; the driver's `drive` returns them as `Records`.  Nothing is written into
a caller's dict.

Plain data (`Control` is `rotode._validation`'s, which checks it): it imports nothing else of
rotode, so that the driver, the runners and the facades share it (its layer is the engine's,
tests/test_layers.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rotode._validation import Control

__all__ = ["Control", "EventRequest", "StepRequest", "Plan", "EventRecord", "StepRecord",
           "Records", "RunOutput"]


@dataclass(frozen=True, slots=True)
class EventRequest:
    """The events of an error-controlled run: the checked `rotode.events.Event` objects and
    the occurrences kept per body and event (None: all of them; the driver counts them all);
    ``at``: per event, the offset in the row of the quaternion block it reads and where it
    reads the body angular velocity (-1: the run's own), for a user's state (None: (0, -1)
    for every event)."""

    objects: tuple
    cap: int | None = None
    at: tuple | None = None


@dataclass(frozen=True, slots=True)
class StepRequest:
    """A record of every accepted step (one body, error control): with ``dense`` each step's
    dense-output coefficients too; ``K0``: the first stage of the first step, as the step
    before a continued run left it (a pair's; None: evaluated)."""

    dense: bool = False
    K0: np.ndarray | None = None


@dataclass(frozen=True, slots=True)
class Plan:
    """One run of a runner, checked by the facade that built it.

    ``method`` (a registry name), ``model`` (what the runner steps: an angular-velocity source
    or (N, 3) rates, a `RigidBody` or a list of them), ``y0`` (N, k), the grid ``t`` (n + 1,)
    and the indices ``save`` of its output times, ``options`` (the method's own options, as
    the runners document them: ``frame``, ``norm_gain``, ``solver``, ...), ``workers``; then
    ``control`` (None: the fixed grid ``t``), ``events``, ``steps`` (a `StepRequest`: the step
    record), ``h_next`` (return each body's proposal for the step after its last one),
    ``resume`` (``y0`` is the row stored at the end of an accepted step of an earlier run: a
    method on local coordinates starts from its retraction), ``stops`` (no controlled step
    crosses a sample time of a `rotode.omega.Samples` rate; False for SciPy's steps) and
    ``tangent`` (None, or an (N, m, 6, 6) float64 array the runner fills with the y0
    sensitivity of a rigid body's error-controlled run, carried in the same pass:
    ``rotode.dynamic.tangent_ready``, docs/sensitivity.md).
    """

    method: str
    model: Any
    y0: Any
    t: Any
    save: Any
    options: Any = None
    workers: int = 1
    control: Control | None = None
    events: EventRequest | None = None
    steps: StepRequest | None = None
    h_next: bool = False
    resume: bool = False
    stops: bool = True
    tangent: Any = None


@dataclass(frozen=True, slots=True)
class EventRecord:
    """The occurrences of a run's events: ``count`` (N, n_events) int64 (every occurrence,
    also those beyond the cap), ``t`` and ``y`` (per body, per event: the kept times (c,) and
    rows (c, k), c = min(count, cap)), ``t_stop`` (N,) (the time of a terminal event, NaN
    without one), ``y_stop`` (N, k) and ``w_stop`` (N, 3) (each body's row where its run
    ended, at t_stop or tf; NaN after a failure) and ``over`` (some count exceeds the cap)."""

    count: np.ndarray
    t: list
    y: list
    t_stop: np.ndarray
    y_stop: np.ndarray
    w_stop: np.ndarray
    over: bool


@dataclass(frozen=True, slots=True)
class StepRecord:
    """Every accepted step of one body: the rows' times ``t`` (n,), rows ``y`` (n, k) and body
    angular velocities ``w`` (n, 3); with `StepRequest.dense` each step's start ``z``
    (n - 1, nz), interpolant ``F`` (n - 1, 7 nz) and size ``h`` (n - 1,) (else None); ``K0``
    (nz,) the first stage of the step after the last one (a pair's)."""

    t: np.ndarray
    y: np.ndarray
    w: np.ndarray
    K0: np.ndarray
    z: np.ndarray | None = None
    F: np.ndarray | None = None
    h: np.ndarray | None = None

    @property
    def n(self):
        """The rows recorded (the steps and the first row)."""
        return self.t.shape[0]


@dataclass(frozen=True, slots=True)
class Records:
    """What `rotode._driver.drive` returns beside its arrays: the `EventRecord`, the
    `StepRecord` and the proposals ``h_next`` (N,), each None unless asked for."""

    events: EventRecord | None = None
    steps: StepRecord | None = None
    h_next: np.ndarray | None = None


@dataclass(frozen=True, slots=True)
class RunOutput:
    """What a runner's ``run_plan`` returns: the rows ``y`` (N, m, k) and body angular
    velocities ``w`` (N, m, 3) at the plan's output times, the ``stats`` dict of its ``run``,
    and the records the plan asked for (`Records`)."""

    y: np.ndarray
    w: np.ndarray
    stats: dict
    events: EventRecord | None = None
    steps: StepRecord | None = None
    h_next: np.ndarray | None = None
