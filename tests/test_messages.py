"""Error messages of bad input (issue 17, items 23, 24 and 28): one row per case the fuzz probe
``.ci/fuzz_messages.py`` flagged.

Every row calls a public function with one bad argument and expects a ``ValueError`` or
``TypeError`` (exactly, not a subclass) whose message names the argument as the user wrote it
and the expected shape or type, without NumPy's or Cython's internal wording and without
RuntimeWarnings on the way.  The rows of `WORKS` must work (read-only input, huge but finite
values, no-limit bounds).
"""
import inspect
import threading
import warnings

import numpy as np
import pytest
import scipy.integrate

import rotode
from rotode import events, exact, frames, inertia, omega, quaternion, so3, steps, torque

Q0 = np.array([0.9, 0.1, -0.3, 0.3]) / np.linalg.norm([0.9, 0.1, -0.3, 0.3])
QS = np.array([[1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.5, 0.5], [0.0, 0.6, 0.8, 0.0]])
V3 = np.array([0.3, -0.2, 0.5])
VS = np.array([[0.3, -0.2, 0.5], [1.0, 2.0, -1.0], [0.0, 0.0, 0.0]])
R = so3.exp(V3)
W7 = np.r_[Q0, 0.3, 1.5, 0.2]
I3 = np.array([1.0, 1.5, 2.0])
W = omega.Sinusoid(np.pi / 2, 2 * np.pi / 10, [0.0, 2.0, 4.0])
QK = rotode.QuaternionKinematics(W)
TOP = rotode.RigidBody([1.0, 1.0, 0.5], torque=torque.Gravity(1.0, 1.0, [0, 0, 1]))
TS = np.linspace(0.0, 2.0, 11)
A = frames.DynamicTransform(V3, R, 2.0, V3, V3, V3, V3)
AB = frames.DynamicTransform(VS, so3.exp(VS), velocity=VS, angular_velocity=VS)
RAGGED = [[1.0, 2.0], [3.0]]
HUGE = 10 ** 400

# texts of NumPy, Cython and Python internals that a message must never show
INTERNAL = ["setting an array element", "inhomogeneous", "truth value", "unhashable",
            "has incorrect type", "must be real number, not", "an integer is required",
            "could not broadcast", "operands could not", "object is not", "not supported between",
            "unsupported operand", "Buffer", "buffer source", "could not convert",
            "0-dimensional arrays", "too large to convert", "Maximum allowed dimension",
            "invalid literal", "bytes-like", "need at least one array", "cannot reshape",
            "Non-positive determinant", "`dydx`", "quaternion states"]


def _sol():
    return rotode.solve_ivp(QK, (0.0, 1.0), Q0, dense_output=True, rtol=1e-8)


def _rk4(**kw):
    return rotode.integrate(W, (0.0, 1.0), Q0, method="rk4", dt=0.1, **kw)


def _adaptive(**kw):
    return rotode.integrate(W, (0.0, 1.0), Q0, method="rkmk5", **kw)


def _g(t, y):
    return y[1] - 0.1


def _with(g, **attributes):
    """A new event function ``g`` with the given attributes (terminal, direction)."""
    def h(t, y):
        return g(t, y)
    h.__dict__.update(attributes)
    return h


def _rigid(method="rk4", **kw):
    return rotode.integrate(TOP, (0.0, 1.0), W7, method=method, dt=0.1, **kw)


def _samples(w, kind="linear"):
    return omega.Samples(TS, w, kind=kind)


def _huge_rows():
    w = np.c_[TS, TS, TS]
    w[5, 0] = 1e308
    w[6, 0] = -1e308
    return w


def _matrix_states(M):
    return rotode.as_rotation(np.asarray(M, dtype=float).reshape(-1, 9).T.copy(), kind="matrix")


def _moving_particle_nan():
    y = np.r_[V3, V3]
    y[0] = np.nan
    return frames.MovingFrameParticle(A)(0.1, y)


def _moving_body(y=None, **kw):
    body = frames.MovingFrameRigidBody(A, inertia.rotate_inertia(np.diag(I3), R), **kw)
    return body(0.1, np.r_[V3, V3, Q0, V3] if y is None else y)


ROWS = [
    # -- _validation.as_float_array: integers beyond the float range, ragged lists -----------
    ("quaternion.multiply huge int", lambda: quaternion.multiply([1, 0, 0, HUGE], Q0),
     ValueError, r"`p` must contain only finite values"),
    ("quaternion.multiply ragged", lambda: quaternion.multiply(RAGGED, Q0),
     ValueError, r"`p` must be an array of shape \(\.\.\., 4\), got a ragged nested list"),
    ("quaternion.exp shape", lambda: quaternion.exp(np.ones(5)),
     ValueError, r"`x` must have shape \(\.\.\., 3\) \(vector parts\) or \(\.\.\., 4\)"),
    ("quaternion.exp scalar", lambda: quaternion.exp(1.0),
     ValueError, r"`x` must have shape \(\.\.\., 3\) \(vector parts\) or \(\.\.\., 4\), got \(\)"),
    ("quaternion.exp ragged", lambda: quaternion.exp(RAGGED),
     ValueError, r"`x` must be a real array, got a ragged"),
    ("quaternion.from_matrix project array", lambda: quaternion.from_matrix(R, np.ones(2)),
     TypeError, r"`project` must be a bool"),
    ("quaternion.from_matrix project huge",
     lambda: quaternion.from_matrix(np.where(R > 0.9, 1e308, R), project=True),
     ValueError, r"`R` is too far from a rotation"),
    ("so3.log project array", lambda: so3.log(R, project=np.ones(2)),
     TypeError, r"`project` must be a bool"),
    ("so3.coefficients huge", lambda: so3.coefficients(1e308),
     ValueError, r"`angle` must be < 1.3e154"),
    # -- omega --------------------------------------------------------------------------------
    ("omega source t str", lambda: W("abc"), TypeError, r"`t` must be a real number, got 'abc'"),
    ("omega source t array", lambda: W(np.ones(2)), TypeError, r"`t` must be a real number"),
    ("omega source t nan", lambda: W(np.nan), ValueError, r"`t` must be a finite real number"),
    ("omega derivative t None", lambda: W.derivative(None), TypeError, r"`t` must be a real"),
    ("omega.Callable not callable", lambda: omega.Callable("x"),
     TypeError, r"`function` must be callable"),
    ("omega.Samples kind array", lambda: omega.Samples(TS, np.c_[TS, TS, TS], np.ones(2)),
     ValueError, r"`kind` must be one of 'linear', 'cubic', 'previous'"),
    ("omega.Samples offset str", lambda: omega.Samples(TS, np.c_[TS, TS, TS], offset="x"),
     TypeError, r"`offset` must be a real number"),
    ("omega.Samples linear overflow", lambda: _samples(_huge_rows()),
     ValueError, r"`w` and `t` must give finite interpolation slopes"),
    ("omega.Samples cubic overflow", lambda: _samples(_huge_rows(), "cubic"),
     ValueError, r"`w` and `t` must give finite"),
    ("omega.Sinusoid rate overflow", lambda: omega.Sinusoid(3.0, 1e308),
     ValueError, r"`amplitude` times `rate` must be finite"),
    ("omega.Sinusoid amplitude ragged", lambda: omega.Sinusoid(RAGGED, 1.0),
     ValueError, r"`amplitude` must be a real array, got a ragged"),
    ("omega.Sinusoid amplitude shape", lambda: omega.Sinusoid(np.ones(2), 1.0),
     ValueError, r"`amplitude` must be a scalar or have shape \(3,\)"),
    # -- torque -------------------------------------------------------------------------------
    ("torque call t str", lambda: torque.Gravity(1.0, 9.81, V3)("abc", Q0, V3),
     TypeError, r"`t` must be a real number"),
    ("torque call zero q", lambda: torque.Constant(V3, "world")(0.0, np.zeros(4), V3),
     ValueError, r"`q` must hold nonzero quaternions"),
    ("torque.Callable not callable", lambda: torque.Callable("x"),
     TypeError, r"torque\.Callable: `function` must be callable"),
    ("torque.Gravity overflow", lambda: torque.Gravity(1e308, 9.81, V3),
     ValueError, r"`mass` \* `g` \* `com` must be finite"),
    ("torque.Gravity per body overflow", lambda: torque.Gravity(1e308, 9.81, VS),
     ValueError, r"`mass` \* `g` \* `com` must be finite for every body"),
    ("torque.Gravity mass ragged", lambda: torque.Gravity(RAGGED, 9.81, V3),
     ValueError, r"`mass` must be a real array, got a ragged"),
    ("potential_energy None", lambda: torque.Gravity(1.0, 9.81, V3).potential_energy(None),
     TypeError, r"`q` must be a real numeric array, got None"),
    ("potential_energy scalar", lambda: torque.Gravity(1.0, 9.81, V3).potential_energy(1.0),
     ValueError, r"`q` must have shape \(4,\) or \(4, k\), got \(\)"),
    ("potential_energy str", lambda: torque.Gravity(1.0, 9.81, V3).potential_energy("abc"),
     TypeError, r"`q` must be a real numeric array"),
    ("potential_energy shape", lambda: torque.Gravity(1.0, 9.81, V3).potential_energy(
        np.ones(5)), ValueError, r"`q` must have shape \(4,\) or \(4, k\), got \(5,\)"),
    ("potential_energy nan", lambda: torque.Gravity(1.0, 9.81, V3).potential_energy(
        np.r_[np.nan, Q0[1:]]), ValueError, r"`q` must contain only finite values"),
    ("as_torque shape text (item 28)", lambda: rotode.RigidBody(np.array([I3, I3]), "abc"),
     TypeError, r"`torque` must be a Torque source, an array of shape \(3,\) or \(N, 3\)"),
    # -- rhs ----------------------------------------------------------------------------------
    ("rhs call t str", lambda: TOP("abc", W7), TypeError, r"`t` must be a real number"),
    ("rhs jac t array", lambda: QK.jac(np.ones(2), Q0), TypeError, r"`t` must be a real number"),
    ("rhs energy nan", lambda: TOP.energy(np.r_[W7[:6], np.nan]),
     ValueError, r"`y` must contain only finite values"),
    ("rhs energy zero q", lambda: TOP.angular_momentum(np.r_[np.zeros(4), V3]),
     ValueError, r"`y \(orientation part\)` must hold nonzero quaternions"),
    ("RigidBody gyroscopic array", lambda: rotode.RigidBody(I3, gyroscopic=np.ones(2)),
     TypeError, r"`gyroscopic` must be a bool"),
    ("RigidBody inertia ragged", lambda: rotode.RigidBody(RAGGED),
     ValueError, r"`inertia` must be a real array, got a ragged"),
    # -- events -------------------------------------------------------------------------------
    ("Component value None", lambda: events.Component("q", 1, value=None),
     TypeError, r"`value` must be a real number"),
    ("KineticEnergy value str", lambda: events.KineticEnergy(I3, "abc"),
     TypeError, r"`value` must be a real number"),
    ("Component name array", lambda: events.Component(np.ones(2), 1),
     ValueError, r"`name` must be one of 'q', 'w', 'y'"),
    ("Component name dict", lambda: events.Component({"a": 1}, 1),
     ValueError, r"`name` must be one of 'q', 'w', 'y', got dict"),
    ("event direction array", lambda: events.AxisAngle([0, 0, 1], [0, 0, 1], 0.5,
                                                       direction=np.ones(2)),
     ValueError, r"`direction` must be -1, 0 or 1"),
    ("event terminal huge", lambda: events.AxisAngle([0, 0, 1], [0, 0, 1], 0.5, terminal=HUGE),
     ValueError, r"`terminal` must be a bool or an integer in \[0, 2\*\*31 - 1\]"),
    ("event call y 3-D", lambda: events.KineticEnergy(I3, 1.0)(0.1, np.ones((2, 2, 2))),
     ValueError, r"`y` must be a state \[q\] of shape \(4,\) or \[q, w\] of shape \(7,\)"),
    ("event call y object", lambda: events.AxisAngle([0, 0, 1], [0, 0, 1], 0.5)(
        0.1, np.array([object()] * 7)), TypeError, r"`y` must be a real numeric array"),
    ("event call t str", lambda: events.AxisAngle([0, 0, 1], [0, 0, 1], 0.5)("abc", W7),
     TypeError, r"`t` must be a real number"),
    ("event call zero q", lambda: events.AxisAngle([0, 0, 1], [0, 0, 1], 0.5)(0.1, np.zeros(7)),
     ValueError, r"`y \(quaternion part y\[:4\]\)` must hold nonzero quaternions"),
    ("PythonEvent not callable", lambda: events.PythonEvent("x"),
     TypeError, r"`function` must be callable"),
    ("PythonEvent returns array", lambda: events.PythonEvent(lambda t, y: np.ones(5))(0.1, W7),
     TypeError, r"must return a real number, got an array of shape \(5,\)"),
    ("integrate event returns None", lambda: _adaptive(events=lambda t, y: None),
     TypeError, r"must return a real number, got NoneType"),
    ("integrate event returns complex", lambda: _adaptive(events=lambda t, y: 1j + y[0]),
     TypeError, r"must return a real number, got a complex number \(0\.9\+1j\) at t = 0\.0"),
    ("event terminal -1 in a list", lambda: _adaptive(events=[_g, _with(_g, terminal=-1)]),
     ValueError, r"`events\[1\]\.terminal` must be a bool or an integer"),
    ("event terminal 1.5 in a list", lambda: _adaptive(events=[_g, _with(_g, terminal=1.5)]),
     ValueError, r"`events\[1\]\.terminal` must be a bool .* got 1\.5"),
    ("event direction 2 in a list", lambda: _adaptive(events=[_g, _with(_g, direction=2)]),
     ValueError, r"`events\[1\]\.direction` must be -1, 0 or 1, got 2"),
    ("event terminal 1.5", lambda: events.Component("q", 0, terminal=1.5),
     ValueError, r"`terminal` must be a bool or an integer .* got 1\.5"),
    ("KineticEnergy inertia negative", lambda: events.KineticEnergy([-1, 1, 1], 1.0),
     ValueError, r"`inertia` principal moments must be positive"),
    ("KineticEnergy inertia not SPD", lambda: events.KineticEnergy(np.diag([1.0, 1, -1]), 1.0),
     ValueError, r"`inertia` must be positive definite"),
    ("KineticEnergy inertia asymmetric", lambda: events.KineticEnergy(
        np.triu(np.ones((3, 3))), 1.0), ValueError, r"`inertia` must be symmetric"),
    ("KineticEnergy inertia shape", lambda: events.KineticEnergy(np.eye(2), 1.0),
     ValueError, r"`inertia` must have shape \(3,\) \(principal moments\) or \(3, 3\)"),
    ("event call w of a kinematic state", lambda: events.Component("w", 0)(0.1, Q0.copy()),
     ValueError, r"Component\('w', 0.*returned NaN at t = 0\.1: the state y = \[q\] of 4 "
     r"entries \(quaternion kinematics\) has no body angular velocity w"),
    ("event call y beyond the row", lambda: events.Component("y", 9)(0.1, W7),
     ValueError, r"Component\('y', 9.* reads y\[9\], out of range of the state y of 7"),
    ("bare Event to integrate", lambda: _adaptive(events=[_g, events.Event()]),
     TypeError, r"`events\[1\]` \(Event\(terminal=0, direction=0\)\) has no `evaluate`"),
    ("bare Event called", lambda: events.Event()(0.1, W7),
     TypeError, r"Event\(terminal=0, direction=0\) has no `evaluate`"),
    # -- steps --------------------------------------------------------------------------------
    ("steps dt str", lambda: steps.lie_euler(QS, V3, "abc"),
     TypeError, r"`dt` must be a real number, got 'abc'"),
    ("steps dt array", lambda: steps.rk4(QS, V3, V3, V3, np.ones(2)),
     TypeError, r"`dt` must be a real number"),
    ("steps dt bool", lambda: steps.magnus_ca(QS, V3, V3, True),
     TypeError, r"`dt` must be a real number, got True"),
    ("steps frame int", lambda: steps.lie_euler(QS, V3, 0.1, frame=1),
     ValueError, r"`frame` must be 'body' or 'world', got 1"),
    ("steps exp int", lambda: steps.magnus4(QS, V3, V3, 0.1, exp=1),
     ValueError, r"`exp` must be 'exact' or 'approx', got 1"),
    ("steps terms None", lambda: steps.magnus_ca(QS, V3, V3, 0.1, terms=None),
     TypeError, r"`terms` must be an integer, got None"),
    ("steps terms huge float", lambda: steps.magnus_ca(QS, V3, V3, 0.1, terms=1e308),
     TypeError, r"`terms` must be an integer"),
    ("steps norm_gain str", lambda: steps.rk4(QS, V3, V3, V3, 0.1, norm_gain="x"),
     TypeError, r"`norm_gain` must be a real number"),
    ("steps q ragged", lambda: steps.lie_euler(RAGGED, V3, 0.1),
     ValueError, r"`q` must be a real array, got a ragged"),
    ("steps overflow", lambda: steps.lie_euler(QS, np.array([1e308, 1e308, 0.0]), 0.1),
     ValueError, r"the step of body 0 is not finite"),
    ("steps rate rows", lambda: steps.lie_euler(np.empty((0, 4)), VS, 0.1),
     ValueError, r"`w` must have shape \(3,\) or \(0, 3\) \(a row per row of `q`\)"),
    # -- exact --------------------------------------------------------------------------------
    ("free_rigid_body overflow", lambda: exact.free_rigid_body(I3, [1e308, 0.1, 0.2], 1.0),
     ValueError, r"`w0` and `inertia` are too large"),
    ("free_rigid_body t ragged", lambda: exact.free_rigid_body(I3, V3, RAGGED),
     ValueError, r"`t` must be a real array, got a ragged"),
    ("free_rigid_body inertia ragged", lambda: exact.free_rigid_body(RAGGED, V3, 1.0),
     ValueError, r"`inertia` must be a real array, got a ragged"),
    ("jacobi u ragged", lambda: exact.jacobi_sn_cn_dn(RAGGED, 0.5),
     ValueError, r"`u` must be a real array, got a ragged"),
    # -- inertia ------------------------------------------------------------------------------
    ("rotate_inertia shape text (item 28)", lambda: inertia.rotate_inertia(np.diag(I3),
                                                                           np.ones(5)),
     ValueError, r"`rotation` must have shape \(\.\.\., 3, 3\) \(matrices\) or \(\.\.\., 4\)"),
    ("to_principal_frame batches", lambda: inertia.to_principal_frame(
        np.array([np.eye(3), np.eye(3)]), orientation=np.empty((0, 4))),
     ValueError, r"cannot broadcast the batch shapes of `axes` \(2,\), `orientation` \(0,\)"),
    ("box overflow", lambda: inertia.box(1e308, [1e308, 1.0, 1.0]),
     ValueError, r"`mass` and `size` are too large"),
    ("solid_sphere overflow", lambda: inertia.solid_sphere(1e308, 1e308),
     ValueError, r"`mass` and `radius` are too large"),
    ("compound no parts", lambda: inertia.compound([], np.empty((0, 3, 3))),
     ValueError, r"`masses` must have shape \(\.\.\., k\) with k >= 1 parts"),
    ("compound parts mismatch", lambda: inertia.compound(np.ones(5), np.array([np.eye(3)] * 2)),
     ValueError, r"`inertias` must have shape \(\.\.\., 5, 3, 3\), one tensor per part of "
                 r"`masses`"),
    # -- frames -------------------------------------------------------------------------------
    ("identity dim str", lambda: frames.Transform.identity("abc"),
     TypeError, r"`dim` must be an integer, got 'abc'"),
    ("identity dim nan", lambda: frames.DynamicTransform.identity(np.nan),
     TypeError, r"`dim` must be an integer"),
    ("identity dim huge", lambda: frames.Transform.identity(HUGE),
     ValueError, r"more than 2\*\*31 entries: too large"),
    ("identity shape negative", lambda: frames.Transform.identity(3, -1),
     ValueError, r"`shape` must be >= 0, got -1"),
    ("identity shape str", lambda: frames.Transform.identity(3, "ab"),
     TypeError, r"`shape` must be a tuple of integers, got str"),
    ("skew array", lambda: frames.DynamicTransform(V3, skew=np.ones(2)),
     TypeError, r"`skew` must be a bool"),
    ("skew str", lambda: frames.inherited_delta(A, AB, velocity=V3, skew="abc"),
     TypeError, r"`skew` must be a bool \(True or False\), got 'abc'"),
    ("Transform index str", lambda: AB["abc"], TypeError, r"a batch index must be an integer"),
    ("Transform index array float", lambda: AB.transform[np.ones(2)],
     TypeError, r"a batch index must be an integer"),
    ("Transform index huge", lambda: AB.transform[HUGE],
     IndexError, r"index out of range for a batch of shape \(3,\)"),
    ("Transform @ None", lambda: A.transform @ None,
     TypeError, r"`other` must be a Transform or DynamicTransform"),
    ("Transform @ array", lambda: A.transform @ np.empty(0),
     TypeError, r"`other` must be a Transform or DynamicTransform"),
    ("chain float", lambda: frames.chain_local_to_global(3.0),
     TypeError, r"`chain` must be a sequence of DynamicTransform, got float"),
    ("chain None", lambda: frames.chain_global_to_local(None),
     TypeError, r"`chain` must be a sequence of DynamicTransform, got NoneType"),
    ("inherited_delta batches", lambda: frames.inherited_delta(A, AB, velocity=VS[:2]),
     ValueError, r"batch shapes do not broadcast: `parent` \(\), `child` \(3,\), "
                 r"`velocity` \(2,\)"),
    ("cancel_inherited batches", lambda: frames.cancel_inherited(A, AB, velocity=VS[:2]),
     ValueError, r"batch shapes do not broadcast: `parent` \(\), `child` \(3,\)"),
    ("inherited_delta overflow", lambda: frames.inherited_delta(A, AB,
                                                                angular_velocity=[1e308] * 3),
     ValueError, r"`velocity`, `acceleration`, `angular_velocity` and `angular_acceleration` "
                 r"are too large"),
    ("local_acceleration force batch", lambda: frames.local_acceleration(A, VS, VS,
                                                                         force=VS[:2]),
     ValueError, r"batch shapes do not broadcast: .*`force` \(2,\)"),
    ("local_acceleration force_frame", lambda: frames.local_acceleration(
        A, VS, VS, force=V3, force_frame=np.ones(2)),
     ValueError, r"`force_frame` must be 'parent' or 'world'"),
    ("MovingFrameParticle force_frame", lambda: frames.MovingFrameParticle(
        A, force_frame=np.ones(2)), ValueError, r"`force_frame` must be 'parent' or 'world'"),
    ("MovingFrameParticle t str", lambda: frames.MovingFrameParticle(A)("abc", np.r_[V3, V3]),
     TypeError, r"`t` must be a real number, got 'abc'"),
    ("MovingFrameRigidBody t nan", lambda: frames.MovingFrameRigidBody(A, np.eye(3))(
        np.nan, np.r_[V3, V3, Q0, V3]), ValueError, r"`t` must be a finite real number"),
    ("MovingFrameParticle y str", lambda: frames.MovingFrameParticle(A)(0.1, "abc"),
     TypeError, r"`y` must be a real numeric array"),
    ("MovingFrameParticle y nan", _moving_particle_nan,
     ValueError, r"`y` must contain only finite values"),
    ("MovingFrameParticle force shape", lambda: frames.MovingFrameParticle(
        A, force=lambda t, x, v: np.ones(5))(0.1, np.r_[V3, V3]),
     ValueError, r"the `force` callable must return shape \(3,\) or \(1, 3\), got \(5,\)"),
    ("MovingFrameRigidBody zero q", lambda: _moving_body(np.r_[V3, V3, np.zeros(4), V3]),
     ValueError, r"`y \(quaternion part y\[6:10\]\)` must hold nonzero quaternions"),
    ("MovingFrameRigidBody torque nan", lambda: _moving_body(
        torque=lambda t, x, v, q, w: np.full(3, np.nan)),
     ValueError, r"the `torque` callable returned a non-finite value"),
    ("Transform rotation to match translation", lambda: frames.Transform([1.0, 2.0], R),
     ValueError, r"`rotation` must have shape \(\.\.\., 2, 2\) to match `translation`"),
    ("Transform rotation shape text (item 28)", lambda: frames.Transform(V3, np.ones(5)),
     ValueError, r"`rotation` must have shape \(\.\.\., 3, 3\) or \(\.\.\., 4\) \(quaternions\)"),
    # -- integrate ----------------------------------------------------------------------------
    ("integrate frame array", lambda: _rk4(frame=np.ones(2)),
     ValueError, r"`frame` must be 'body' or 'world'"),
    ("integrate option trace", lambda: _rk4(trace={}), TypeError, r"unknown option `trace`"),
    ("integrate option h_next", lambda: _rk4(h_next=0.1), TypeError, r"unknown option `h_next`"),
    ("integrate option resume", lambda: _rk4(resume=True), TypeError, r"unknown option `resume`"),
    ("integrate adaptive option trace", lambda: _adaptive(trace={}),
     TypeError, r"unknown option `trace`"),
    ("integrate callable returns str", lambda: rotode.integrate(
        lambda t: "abc", (0.0, 1.0), Q0, method="rk4", dt=0.1),
     TypeError, r"the angular-velocity callable must return a real array of shape \(3,\)"),
    ("integrate torque_substeps huge", lambda: _rigid(torque_substeps=HUGE),
     ValueError, r"option `torque_substeps` must be in \[1, 2147483647\]"),
    ("integrate max_substeps huge", lambda: _rigid("implicit_midpoint", max_substeps=HUGE),
     ValueError, r"`max_substeps` must be <= 2\*\*31 - 1"),
    ("integrate alpha ragged", lambda: rotode.integrate(W, (0.0, 1.0), Q0, method="magnus_ca",
                                                        dt=0.1, alpha=RAGGED),
     ValueError, r"`alpha` must be a real array, got a ragged"),
    ("integrate exp array", lambda: rotode.integrate(W, (0.0, 1.0), Q0, method="magnus4",
                                                     dt=0.1, exp=np.ones(2)),
     ValueError, r"option `exp` must be 'exact' or 'approx'"),
    ("integrate terms array", lambda: rotode.integrate(W, (0.0, 1.0), Q0, method="magnus_ca",
                                                       dt=0.1, terms=np.ones(2)),
     TypeError, r"option `terms` must be an int"),
    ("integrate solver array", lambda: _rigid("implicit_midpoint", solver=np.ones(2)),
     ValueError, r"`solver` must be 'newton' or 'fixed-point'"),
    ("integrate bound None", lambda: _rigid("implicit_midpoint", bound=None),
     ValueError, r"`bound` must be 'inertia' or 'euclidean', got None"),
    ("integrate tol str", lambda: _rigid("implicit_midpoint", tol="1e-12"),
     TypeError, r"`tol` must be a real number"),
    ("integrate torque_start array", lambda: _rigid(torque_substeps=2, torque_start=np.ones(2)),
     ValueError, r"option `torque_start` must be 'hold' or 'evaluate'"),
    # -- rotode.solve_ivp and rotode's OdeSolver classes in scipy.integrate.solve_ivp ---------
    ("solve_ivp fun None", lambda: rotode.solve_ivp(None, (0.0, 1.0), Q0),
     TypeError, r"`fun` must be callable"),
    ("solve_ivp method array", lambda: rotode.solve_ivp(QK, (0.0, 1.0), Q0, method=np.ones(2)),
     TypeError, r"`method` must be a string or an OdeSolver subclass"),
    ("solve_ivp dense_output array", lambda: rotode.solve_ivp(QK, (0.0, 1.0), Q0,
                                                              dense_output=np.ones(2)),
     TypeError, r"`dense_output` must be a bool"),
    ("OdeSolver step str", lambda: scipy.integrate.solve_ivp(
        QK, (0.0, 1.0), Q0, method=rotode.Magnus4, step="abc"),
     TypeError, r"`step` must be a real number"),
    ("OdeSolver step nan", lambda: scipy.integrate.solve_ivp(
        QK, (0.0, 1.0), Q0, method=rotode.Magnus4, step=np.nan),
     ValueError, r"`step` must be finite and > 0"),
    ("OdeSolver fun returns (5,)", lambda: scipy.integrate.solve_ivp(
        lambda t, q: np.ones(5), (0.0, 1.0), Q0, method=rotode.RKMK8),
     ValueError, r"`fun` must return dq/dt of shape \(4,\), got shape \(5,\)"),
    ("OdeSolver fun returns str", lambda: scipy.integrate.solve_ivp(
        lambda t, q: "abc", (0.0, 1.0), Q0, method=rotode.Magnus4, step=0.1),
     TypeError, r"`fun` must return dq/dt as a real array of shape \(4,\)"),
    ("OdeSolver y0 shape (item 28)", lambda: scipy.integrate.solve_ivp(
        QK, (0.0, 1.0), [1.0, 0.0], method=rotode.RKMK8),
     ValueError, r"`y0` of a QuaternionKinematics must have shape \(4,\) for RKMK8, got \(2,\)"),
    ("OdeSolver option trace", lambda: scipy.integrate.solve_ivp(
        QK, (0.0, 1.0), Q0, method=rotode.Magnus4, step=0.1, trace={}),
     TypeError, r"unknown option `trace`"),
    ("OdeSolver frame array", lambda: scipy.integrate.solve_ivp(
        lambda t, q: QK(t, q), (0.0, 1.0), Q0, method=rotode.Magnus4, step=0.1,
        frame=np.ones(2)), ValueError, r"`frame` must be 'body' or 'world'"),
    # -- as_rotation, solve_expcoord ----------------------------------------------------------
    ("as_rotation kind array", lambda: rotode.as_rotation(QS.T, kind=np.ones(2)),
     ValueError, r"`kind` must be one of 'auto', 'quaternion'"),
    ("as_rotation t outside", lambda: rotode.as_rotation(_sol(), t=1e308),
     ValueError, r"`t` must lie within the solution's span"),
    ("as_rotation t empty", lambda: rotode.as_rotation(_sol(), t=[]),
     ValueError, r"`t` must be a scalar or have shape \(n,\) with n >= 1"),
    ("as_rotation t huge int", lambda: rotode.as_rotation(_sol(), t=HUGE),
     ValueError, r"`t` must contain only finite values"),
    ("as_rotation no dense output", lambda: rotode.as_rotation(None, t=0.5),
     ValueError, r"`sol_or_states` must be a solution with dense output"),
    ("as_rotation empty states", lambda: rotode.as_rotation(np.empty(0)),
     ValueError, r"`sol_or_states` must have shape \(n,\) or \(n, k\) with n >= 1"),
    ("as_rotation zero matrices", lambda: _matrix_states(np.zeros((3, 3, 3))),
     ValueError, r"`sol_or_states` \(matrix rows\) column 0 is not a rotation"),
    ("as_rotation zero quaternions", lambda: rotode.as_rotation(np.zeros((4, 2))),
     ValueError, r"`sol_or_states \(quaternion rows\)` must hold nonzero quaternions"),
    ("as_rotation huge matrix", lambda: _matrix_states(np.where(R > 0.9, 1e308, R)),
     ValueError, r"`sol_or_states` \(matrix rows\) column 0 is not a rotation: determinant 0"),
    ("as_rotation too few rows", lambda: rotode.as_rotation(np.ones((2, 3)), kind="matrix"),
     ValueError, r"`sol_or_states` with kind='matrix' needs at least 9"),
    ("solve_expcoord rtol shape", lambda: rotode.solve_expcoord(
        rotode.ExpCoordKinematics(W), (0.0, 1.0), np.zeros(3), rtol=np.ones((2, 2, 2))),
     ValueError, r"`rtol` must be a scalar or have shape \(3,\)"),
    ("solve_expcoord rtol str", lambda: rotode.solve_expcoord(
        rotode.ExpCoordKinematics(W), (0.0, 1.0), np.zeros(3), rtol="abc"),
     TypeError, r"`rtol` must be a real numeric array"),
    ("solve_expcoord first_step dict", lambda: rotode.solve_expcoord(
        rotode.ExpCoordKinematics(W), (0.0, 1.0), np.zeros(3), first_step={}),
     TypeError, r"`first_step` must be a real number"),
]

# calls that used to hang (SciPy's step-size loop on NaN): rejected before any step now
HANGS = [
    ("solve_expcoord y0 huge", lambda: rotode.solve_expcoord(
        rotode.ExpCoordKinematics(W), (0.0, 1.0), np.array([1e308, 0.0, 0.0])),
     ValueError, r"`y0` rotation vector y0\[:3\] must satisfy \|v\| < 2 pi"),
    ("solve_expcoord rtol nan", lambda: rotode.solve_expcoord(
        rotode.ExpCoordKinematics(W), (0.0, 1.0), np.zeros(3), rtol=np.nan),
     ValueError, r"`rtol` must contain only finite values"),
]


def _read_only(x):
    x = np.array(x, dtype=float)
    x.flags.writeable = False
    return x


# calls that must work: finite results, no warning
WORKS = [
    ("torque call read-only q", lambda: torque.Gravity(1.0, 9.81, V3)(0.0, _read_only(Q0),
                                                                      _read_only(V3))),
    ("rhs energy read-only y", lambda: TOP.energy(_read_only(W7))),
    ("rhs angular_momentum read-only", lambda: TOP.angular_momentum(_read_only(W7))),
    ("quaternion.norm huge", lambda: quaternion.norm([1e308, 1e308, 0.0, 0.0])),
    ("validate_inertia huge", lambda: inertia.validate_inertia(np.diag([1e308] * 3))),
    ("principal_axes huge", lambda: inertia.principal_axes(np.diag([1e308, 2e307, 3e307]))),
    ("AxisAngle huge axis", lambda: events.AxisAngle([1e308, 1e308, 0.0], [0, 0, 1], 0.5)(
        0.1, W7)),
    ("RotationAngle huge reference", lambda: events.RotationAngle([1e308, 1e308, 0, 0], 1.0)(
        0.1, W7)),
    ("free_rigid_body huge t", lambda: exact.free_rigid_body(I3, [1.0, 0.1, 0.2],
                                                            [1e300, -1e308])),
    ("integrate max_step huge int", lambda: _adaptive(max_step=HUGE).y),
    ("integrate max_steps huge int", lambda: _adaptive(max_steps=HUGE).y),
    ("solve_ivp max_step huge int", lambda: rotode.solve_ivp(QK, (0.0, 1.0), Q0,
                                                             max_step=HUGE).y),
    ("solve_expcoord rtol None", lambda: rotode.solve_expcoord(
        rotode.ExpCoordKinematics(W), (0.0, 1.0), np.zeros(3), rtol=None).y),
]


def _check(call, exc, match):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(exc, match=match) as info:
            call()
    assert type(info.value) is exc, type(info.value)
    message = str(info.value)
    for text in INTERNAL:
        assert text not in message, message


@pytest.mark.parametrize("call, exc, match", [row[1:] for row in ROWS],
                         ids=[row[0] for row in ROWS])
def test_bad_input_gets_a_message_naming_the_argument(call, exc, match):
    _check(call, exc, match)


@pytest.mark.parametrize("call, exc, match", [row[1:] for row in HANGS],
                         ids=[row[0] for row in HANGS])
def test_bad_input_that_hung_is_rejected(call, exc, match):
    done = []

    def run():
        try:
            _check(call, exc, match)
            done.append(None)
        except BaseException as err:      # re-raised below, in the test's thread
            done.append(err)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(30.0)
    if not done:
        pytest.fail("the call hangs")
    if done[0] is not None:
        raise done[0]


def _all_finite(x):
    if isinstance(x, tuple):
        return all(_all_finite(p) for p in x)
    if isinstance(x, frames.Transform):
        return _all_finite((np.asarray(x.translation), np.asarray(x.rotation)))
    return bool(np.isfinite(np.asarray(x, dtype=float)).all())


@pytest.mark.parametrize("call", [row[1] for row in WORKS], ids=[row[0] for row in WORKS])
def test_valid_input_works(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        out = call()
    assert _all_finite(out)


@pytest.mark.parametrize("name", [m for m in steps.__all__ if m != "NODES"])
def test_every_step_reports_an_overflow(name):
    # finite input whose step overflows (|q| near the largest float, a rotation of ~1.7 rad):
    # a ValueError from every step function's row loop, magnus_ca's own loop included, never
    # an inf in the output
    step = getattr(steps, name)
    n_rates = sum(p.kind is p.POSITIONAL_OR_KEYWORD
                  for p in inspect.signature(step).parameters.values()) - 3   # q, dt, out
    w = np.array([1.0, 1.0, 1.0])
    rates = [w] + [np.zeros(3) if name == "magnus_ca" else w] * (n_rates - 1)   # (alpha 0)
    q = np.array([1.5e308, -1.5e308, 1.5e308, -1.5e308])
    with pytest.raises(ValueError, match=r"the step of body 0 is not finite"):
        step(q, *rates, 1.0)
