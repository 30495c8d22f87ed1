#!/usr/bin/env python
"""Fuzz probe of rotode's error messages (issue 17, items 23, 24 and 28).

Every public callable starts from a VALID call; one argument at a time is replaced by a bad
value (None, a string, a complex array, bool, NaN/inf, +-1e308, 10**400, 0, -1, empty and
wrongly shaped arrays, object arrays, ragged lists, nested dicts, lambdas that raise or return
wrong shapes/NaN, ...) or by a variant that must WORK (read-only, non-contiguous, a list).  Each
case records the exception type and message (or the result) and is flagged by the project's
standard (README "Bad input"):

``type``      an exception other than ValueError/TypeError (the user's own exception raised in
              a callable excepted), or a subclass of them (numpy's LinAlgError, AxisError)
``internal``  a Cython/NumPy internal message ("Buffer dtype mismatch", "has incorrect type",
              "could not broadcast", "must be real number, not str", ...)
``private``   a message naming a private name (``_foo``) or, in backticks, a parameter that is
              not in the signature of the call the user made
``unnamed``   a message that does not name the argument the user wrote
``shape``     a message whose expected shape does not even fit the VALID value of the argument
``nonfinite`` a result (success=True) holding NaN or inf
``work``      a variant that must work (read-only, non-contiguous, list) raised
``crash``, ``hang`` (> 60 s), ``slow`` (> 5 s)

and, for information only, ``lax``: an obviously invalid value (string, complex, NaN, dict,
ragged, ...) that was accepted (a callable that is only called later, the NaN of a
right-hand side's hot path, ...).

A flagged case judged right, or outside rotode (SciPy's own checks), is listed in `ACCEPTED`
with the reason and reported as accepted.  The regression tests of the fixed cases are in
tests/test_messages.py.

The cases run in a worker subprocess (a crash or a hang ends only that case); the parent
restarts the worker after the bad case.  About 22,000 cases, one minute on one core.

Usage::

    PYTHONPATH=. python .ci/fuzz_messages.py [--only SUBSTRING] [--json out.json] [--all]

prints the flagged cases (``--all``: every case) and a summary; the exit status is 1 when a
case is flagged and not accepted (``lax`` does not count).
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import threading
import time
import traceback
import warnings

HANG_S = 60.0
SLOW_S = 5.0
MISSING = object()


class Boom(Exception):
    """The user's own exception, raised inside a callable: it must surface unchanged."""


# ------------------------------------------------------------------------------------------
# bad values
# ------------------------------------------------------------------------------------------

def boom(*args, **kwargs):
    raise Boom("user code")


def bad_values(valid):
    """``[(label, factory, expect)]`` for one argument whose valid value is ``valid``;
    ``expect`` is "reject" (must raise), "work" (must not raise) or "any"."""
    import numpy as np

    is_callable = callable(valid) and not isinstance(valid, (type, np.ndarray))
    is_array = isinstance(valid, np.ndarray) and valid.dtype.kind == "f"
    is_str = isinstance(valid, str)
    rej = "reject"
    out = [
        ("None", lambda: None, "any"),
        ("'abc'", lambda: "abc", "any" if is_str else rej),
        ("True", lambda: True, "any"),
        ("nan", lambda: float("nan"), rej),
        ("inf", lambda: float("inf"), rej),
        ("1e308", lambda: 1e308, "any"),
        ("-1e308", lambda: -1e308, "any"),
        ("10**400", lambda: 10 ** 400, "any"),
        ("0", lambda: 0, "any"),
        ("-1", lambda: -1, "any"),
        ("empty(0)", lambda: np.empty(0), "any"),
        ("ones(2)", lambda: np.ones(2), "any"),
        ("ones(5)", lambda: np.ones(5), "any"),
        ("ones((2,2,2))", lambda: np.ones((2, 2, 2)), "any"),
        ("empty((0,4))", lambda: np.empty((0, 4)), "any"),
        ("object[3]", lambda: np.array([object(), object(), object()], dtype=object), rej),
        ("ragged", lambda: [[1.0, 2.0], [3.0]], rej),
        ("dict", lambda: {"a": {"b": 1}}, rej),
        ("lambda:raise", lambda: boom, "any" if is_callable else rej),
        ("lambda:ones(5)", lambda: (lambda *a, **k: np.ones(5)), "any" if is_callable else rej),
        ("lambda:nan", lambda: (lambda *a, **k: np.full(3, np.nan)),
         "any" if is_callable else rej),
        ("complex 1j", lambda: 1j, rej),
    ]
    if is_str:
        out += [("'BODY'", lambda: valid.upper(), "any"), ("''", lambda: "", "any"),
                ("b'str'", lambda: valid.encode(), "any")]
    if isinstance(valid, (int, float)) and not isinstance(valid, bool):
        out += [("float 1.5", lambda: 1.5, "any"), ("[valid]", lambda: [valid], "any"),
                ("np.float64", lambda: np.float64(valid),
                 "work" if isinstance(valid, float) else "any")]
        if isinstance(valid, int):
            out += [("np.int64", lambda: np.int64(valid), "work")]
    if is_array:
        def with_value(x):
            def make():
                a = valid.copy()
                a.reshape(-1)[0] = x
                return a
            return make

        def readonly():
            a = valid.copy()
            a.flags.writeable = False
            return a

        def noncontig():
            if valid.ndim == 0:
                return valid.copy()
            a = np.repeat(valid[..., None], 2, axis=-1)[..., 0]
            assert not a.flags.c_contiguous or a.size <= 1
            return a

        out += [
            ("complex(valid)", lambda: valid.astype(complex) + 1j, rej),
            ("valid+nan", with_value(np.nan), rej),
            ("valid+inf", with_value(np.inf), rej),
            ("valid+1e308", with_value(1e308), "any"),
            ("valid.astype(bool)", lambda: valid.astype(bool), "any"),
            ("valid.astype(object)", lambda: valid.astype(object), "any"),
            ("str array", lambda: valid.astype(str), rej),
            ("readonly", readonly, "work"),
            ("noncontig", noncontig, "work"),
            ("list", lambda: valid.tolist(), "work"),
            ("float32", lambda: valid.astype(np.float32), "any"),
            ("stacked (2, ...)", lambda: np.stack([valid, valid]), "any"),
            ("valid[None,None]", lambda: valid[None, None], "any"),
            ("zeros_like", lambda: np.zeros_like(valid), "any"),
            ("-valid", lambda: -valid, "any"),
        ]
        if valid.ndim >= 1:
            out += [("valid[:-1]", lambda: valid[..., :-1], "any"),
                    ("valid.T", lambda: valid.T.copy(), "any")]
    if is_callable:
        out += [("lambda:list", lambda: (lambda *a, **k: [0.1, 0.2, 0.3]), "any"),
                ("lambda:None", lambda: (lambda *a, **k: None), "any"),
                ("lambda:'abc'", lambda: (lambda *a, **k: "abc"), "any"),
                ("lambda:inf", lambda: (lambda *a, **k: np.full(3, np.inf)), "any"),
                ("lambda():no args", lambda: (lambda: np.zeros(3)), "any")]
    return out


# ------------------------------------------------------------------------------------------
# the valid calls
# ------------------------------------------------------------------------------------------

class Target:
    """A valid call ``fn(*pos, **kw)``: each parameter (name, valid value) is fuzzed in turn.

    ``allowed``: the names a message may mention in backticks (the call's public signature,
    plus what the user wrote before, e.g. a constructor's arguments for a method call).
    ``extra``: further ``(label, kwargs update, expect)`` cases (unknown options, ...).
    ``use``: applied to a successful result (e.g. evaluate a source) and checked the same way.
    """

    def __init__(self, name, fn, pos=(), kw=(), allowed=(), extra=(), use=None, fuzz=None,
                 hot=False):
        self.name = name
        self.hot = hot             # a right-hand side's hot path: NaN in, NaN out is by design
        self.fn = fn
        self.pos = list(pos)
        self.kw = list(kw)
        self.allowed = set(allowed) | {p for p, _ in self.pos} | {p for p, _ in self.kw}
        self.extra = list(extra)
        for _, update, _ in self.extra:
            self.allowed |= set(update)
        self.use = use
        self.fuzz = fuzz           # None: every parameter; else the names to fuzz

    def call(self, replace=None, value=MISSING, update=None):
        args = [value if p == replace else v() if callable(v) and getattr(v, "_fresh", False)
                else v for p, v in self.pos]
        kwargs = {}
        for p, v in self.kw:
            if callable(v) and getattr(v, "_fresh", False):
                v = v()
            kwargs[p] = value if p == replace else v
        if update:
            kwargs.update(update)
        return self.fn(*args, **kwargs)


def fresh(factory):
    """A parameter value rebuilt for every call (an array the call may not keep)."""
    factory._fresh = True
    return factory


def targets():
    import numpy as np
    import scipy.integrate

    import rotode
    from rotode import events, exact, frames, inertia, omega, quaternion, rhs, so3, steps, torque

    q0 = np.array([0.9, 0.1, -0.3, 0.3])
    q0 = q0 / np.linalg.norm(q0)
    qs = np.array([[1.0, 0.0, 0.0, 0.0], [0.5, 0.5, 0.5, 0.5], [0.0, 0.6, 0.8, 0.0]])
    v3 = np.array([0.3, -0.2, 0.5])
    vs = np.array([[0.3, -0.2, 0.5], [1.0, 2.0, -1.0], [0.0, 0.0, 0.0]])
    R = so3.exp(v3)
    Rs = so3.exp(vs)
    w7 = np.r_[q0, 0.3, 1.5, 0.2]
    I3 = np.array([1.0, 1.5, 2.0])
    Ifull = inertia.rotate_inertia(np.diag(I3), R)
    W = omega.Sinusoid(np.pi / 2, 2 * np.pi / 10, [0.0, 2.0, 4.0])
    TOP = rotode.RigidBody([1.0, 1.0, 0.5], torque=torque.Gravity(1.0, 1.0, [0, 0, 1]))
    FREE = rotode.RigidBody(I3)
    QK = rotode.QuaternionKinematics(W)
    ts = np.linspace(0.0, 2.0, 11)
    SAMPLES = omega.Samples(ts, np.c_[np.sin(ts), np.cos(ts), ts])
    T = []

    def add(*a, **k):
        T.append(Target(*a, **k))

    # -- quaternion / so3 -------------------------------------------------------------------
    for tag, q, v, RR in (("single", q0, v3, R), ("batch", qs, vs, Rs)):
        add(f"quaternion.multiply[{tag}]", quaternion.multiply, [("p", q), ("q", q)])
        add(f"quaternion.conjugate[{tag}]", quaternion.conjugate, [("q", q)])
        add(f"quaternion.norm[{tag}]", quaternion.norm, [("q", q)])
        add(f"quaternion.angle_between[{tag}]", quaternion.angle_between, [("p", q), ("q", q)])
        add(f"quaternion.inverse[{tag}]", quaternion.inverse, [("q", q)])
        add(f"quaternion.rotate[{tag}]", quaternion.rotate, [("q", q), ("v", v)])
        add(f"quaternion.to_matrix[{tag}]", quaternion.to_matrix, [("q", q)])
        add(f"quaternion.from_matrix[{tag}]", quaternion.from_matrix,
            [("R", RR)], [("project", False)])
        add(f"quaternion.from_matrix[{tag},project]", quaternion.from_matrix,
            [("R", RR)], [("project", True)], fuzz={"R"})
        add(f"quaternion.exp[{tag},3]", quaternion.exp, [("x", v)])
        add(f"quaternion.exp[{tag},4]", quaternion.exp, [("x", q)])
        add(f"quaternion.log[{tag}]", quaternion.log, [("q", q)])
        add(f"quaternion.exp_approx[{tag}]", quaternion.exp_approx, [("x", v)])
        add(f"quaternion.to_scipy[{tag}]", quaternion.to_scipy, [("q", q)])
        add(f"quaternion.to_matrix_jacobian[{tag}]", quaternion.to_matrix_jacobian, [("q", q)])
        add(f"so3.hat[{tag}]", so3.hat, [("v", v)])
        add(f"so3.vee[{tag}]", so3.vee, [("K", so3.hat(v))])
        add(f"so3.exp[{tag}]", so3.exp, [("v", v)], [("out", None)])
        add(f"so3.log[{tag}]", so3.log, [("R", RR)], [("project", False)])
        add(f"so3.dexp[{tag}]", so3.dexp, [("v", v)])
        add(f"so3.dexp_inv[{tag}]", so3.dexp_inv, [("v", v)])
        add(f"so3.exp_and_dexp[{tag}]", so3.exp_and_dexp, [("v", v)])
        add(f"so3.coefficients[{tag}]", so3.coefficients,
            [("angle", np.linalg.norm(v, axis=-1))])
        add(f"so3.exp_jacobian[{tag}]", so3.exp_jacobian, [("v", v)])
        add(f"so3.dexp_jacobian[{tag}]", so3.dexp_jacobian, [("v", v)])
        add(f"so3.dexp_inv_jacobian[{tag}]", so3.dexp_inv_jacobian, [("v", v)])
    add("quaternion.from_scipy", quaternion.from_scipy, [("rotation", quaternion.to_scipy(qs))])

    # -- omega --------------------------------------------------------------------------------
    def use_src(s):
        return s(0.5), s.derivative(0.5) if not isinstance(s, omega.Callable) else 0
    add("omega.Constant", omega.Constant, [("w", v3)], use=use_src)
    add("omega.Sinusoid", omega.Sinusoid, [("amplitude", np.array([1.0, 2.0, 3.0])),
                                           ("rate", 0.7), ("phase", np.array([0.0, 1.0, 2.0]))],
        use=use_src)
    add("omega.Samples", omega.Samples, [("t", ts), ("w", np.c_[ts, ts, ts])],
        [("kind", "linear"), ("offset", 0.0)], use=use_src)
    add("omega.Samples[cubic]", omega.Samples, [("t", ts), ("w", np.c_[ts, ts, ts])],
        [("kind", "cubic")], fuzz={"t", "w"}, use=use_src)
    add("omega.Callable", omega.Callable, [("function", lambda t: [0.1, 0.2, t])], use=use_src)
    add("omega.as_source", omega.as_source, [("omega", v3)], use=use_src)
    for name, src in (("Sinusoid", W), ("Samples", SAMPLES), ("Constant", omega.Constant(v3)),
                      ("Callable", omega.Callable(lambda t: [0.1, 0.2, t]))):
        add(f"omega.{name}(t)", lambda t, s=src: s(t), [("t", 0.5)])
        if name != "Callable":
            add(f"omega.{name}.derivative", lambda t, s=src: s.derivative(t), [("t", 0.5)])

    # -- torque -------------------------------------------------------------------------------
    def use_tq(s):
        return s(0.1, q0, v3) if s.n_bodies is None else s[0](0.1, q0, v3)
    add("torque.Constant", torque.Constant, [("tau", v3)], [("frame", "body")], use=use_tq)
    add("torque.Constant[per body]", torque.Constant, [("tau", vs)], [("frame", "world")],
        use=use_tq)
    add("torque.Gravity", torque.Gravity, [("mass", 1.0), ("g", 9.81), ("com", v3)],
        use=use_tq)
    add("torque.Gravity[per body]", torque.Gravity,
        [("mass", np.array([1.0, 2.0, 3.0])), ("g", 9.81), ("com", vs)], use=use_tq)
    add("torque.Callable", torque.Callable, [("function", lambda t, q, w: -0.1 * w)],
        use=use_tq)
    add("torque.as_torque", torque.as_torque, [("torque", v3)],
        use=lambda s: s(0.1, q0, v3) if s is not None else None)
    grav = torque.Gravity(1.0, 9.81, v3)
    for name, src in (("Gravity", grav), ("Constant", torque.Constant(v3, "world")),
                      ("Callable", torque.Callable(lambda t, q, w: -0.1 * w))):
        add(f"torque.{name}(t, q, w)", lambda t, q, w, s=src: s(t, q, w),
            [("t", 0.1), ("q", q0), ("w", v3)])
    add("torque.Gravity.potential_energy", lambda q: grav.potential_energy(q), [("q", q0)])
    per = torque.Gravity(np.array([1.0, 2.0, 3.0]), 9.81, vs)
    add("torque.Gravity[per body][i]", lambda i: per[i], [("i", 1)])

    # -- rhs ----------------------------------------------------------------------------------
    rhs_objs = [
        ("QuaternionKinematics", rhs.QuaternionKinematics,
         [("omega", v3)], [("frame", "body"), ("norm_gain", 0.5)], q0),
        ("QuaternionKinematics[world,source]", rhs.QuaternionKinematics,
         [("omega", W)], [("frame", "world")], q0),
        ("ExpCoordKinematics", rhs.ExpCoordKinematics, [("omega", v3)], [("frame", "body")],
         v3),
        ("RigidBody", rhs.RigidBody, [("inertia", I3)],
         [("torque", v3), ("norm_gain", 0.1), ("gyroscopic", True)], w7),
        ("RigidBody[full]", rhs.RigidBody, [("inertia", Ifull)],
         [("torque", lambda t, q, w: -0.1 * w)], w7),
        ("ExpCoordRigidBody", rhs.ExpCoordRigidBody, [("inertia", I3)], [("torque", v3)],
         np.r_[v3, v3]),
        ("QuaternionSecondOrder", rhs.QuaternionSecondOrder, [("inertia", I3)],
         [("torque", v3)], np.r_[q0, 0.0, 0.1, 0.2, 0.3]),
        ("EulerAnglesXYZ", rhs.EulerAnglesXYZ, [("inertia", I3)], [("torque", v3)],
         np.r_[v3, v3]),
        ("RotationMatrix", rhs.RotationMatrix, [("inertia", I3)], [("torque", v3)],
         np.r_[R.reshape(-1), v3]),
    ]
    for name, cls, pos, kw, y in rhs_objs:
        ctor = {p for p, _ in pos} | {p for p, _ in kw}
        add(f"rhs.{name}", cls, pos, kw, use=lambda o, y=y: (o(0.1, y), o.jac(0.1, y)))
        obj = cls(*[v for _, v in pos], **dict(kw))
        add(f"rhs.{name}(t, y)", lambda t, y, o=obj: o(t, y), [("t", 0.1), ("y", y)],
            allowed=ctor, hot=True)
        add(f"rhs.{name}(t, Y) vectorized", lambda t, y, o=obj: o(t, y),
            [("t", 0.1), ("y", np.stack([y, y], axis=1))], allowed=ctor, fuzz={"y"}, hot=True)
        add(f"rhs.{name}.jac", lambda t, y, o=obj: o.jac(t, y), [("t", 0.1), ("y", y)],
            allowed=ctor, hot=True)
        if hasattr(obj, "energy"):
            add(f"rhs.{name}.energy", lambda y, o=obj: o.energy(y), [("y", y)], allowed=ctor)
            add(f"rhs.{name}.angular_momentum", lambda y, o=obj: o.angular_momentum(y),
                [("y", y)], allowed=ctor)
    eck = rhs.ExpCoordKinematics(v3)

    def set_base(q):
        eck.base = q
        return eck.base
    add("rhs.ExpCoordKinematics.base = q", set_base, [("q", q0)], allowed={"base"})
    add("rhs.RigidBody[per body]", rhs.RigidBody, [("inertia", np.array([I3, I3]))],
        [("torque", vs[:2])], use=lambda o: (o[1], o.bodies()))
    per_rb = rhs.RigidBody(np.array([I3, I3]), torque=vs[:2])
    add("rhs.RigidBody[per body][i]", lambda i: per_rb[i], [("i", 1)])
    add("rhs.check_inertia", rhs.check_inertia, [("inertia", I3)])

    # -- events -------------------------------------------------------------------------------
    def use_ev(e):
        return e(0.1, w7), e(0.1, q0) if not isinstance(e, events.KineticEnergy) else 0
    add("events.AxisAngle", events.AxisAngle,
        [("body_axis", np.array([0.0, 0.0, 1.0])), ("world_axis", np.array([0.0, 0.0, 1.0])),
         ("angle", 0.5)], [("terminal", True), ("direction", 1)], use=use_ev)
    add("events.Component", events.Component, [("name", "q"), ("index", 1)],
        [("value", 0.2), ("terminal", 2), ("direction", -1)], use=use_ev)
    add("events.RotationAngle", events.RotationAngle, [("reference", q0), ("angle", 1.0)],
        [("terminal", False), ("direction", 0)], use=use_ev)
    add("events.KineticEnergy", events.KineticEnergy, [("inertia", I3), ("value", 1.0)],
        [("terminal", True), ("direction", 0)], use=use_ev)
    add("events.PythonEvent", events.PythonEvent, [("function", lambda t, y: y[0] - 0.5)],
        [("terminal", True), ("direction", 1)], use=use_ev)
    add("events.as_events", events.as_events, [("events", [events.Component("q", 0)])])

    def use_per_body(e):                # a per-body event: body 1's value
        return e(0.1, w7, body=1), e[1](0.1, w7)
    add("events.AxisAngle[per body]", events.AxisAngle,
        [("body_axis", vs + [0.0, 0.0, 1.0]), ("world_axis", np.array([0.0, 0.0, 1.0])),
         ("angle", np.array([0.1, 0.5, 1.0]))], use=use_per_body)
    add("events.Component[per body]", events.Component, [("name", "w"), ("index", 1)],
        [("value", np.array([0.1, 0.2, 0.3]))], use=use_per_body)
    add("events.RotationAngle[per body]", events.RotationAngle,
        [("reference", qs), ("angle", np.array([0.1, 0.5, 1.0]))], use=use_per_body)
    add("events.KineticEnergy[per body]", events.KineticEnergy,
        [("inertia", np.array([np.diag(m) for m in ([1.0, 1.0, 0.5], [1.0, 2.0, 2.5],
                                                     [2.0, 2.0, 2.0])])),
         ("value", np.array([1.0, 2.0, 3.0]))], use=use_per_body)
    for name, ev in (("AxisAngle", events.AxisAngle([0, 0, 1], [0, 0, 1], 0.5)),
                     ("KineticEnergy", events.KineticEnergy(I3, 1.0)),
                     ("PythonEvent", events.PythonEvent(lambda t, y: y[0] - 0.5))):
        add(f"events.{name}(t, y)", lambda t, y, e=ev: e(t, y), [("t", 0.1), ("y", w7)])

    # -- exact --------------------------------------------------------------------------------
    add("exact.ellipk", exact.ellipk, [("m", 0.5)], [("m1", None)])
    add("exact.ellipk[m1]", exact.ellipk, [("m", 0.5)], [("m1", 0.5)], fuzz={"m1"})
    add("exact.jacobi_sn_cn_dn", exact.jacobi_sn_cn_dn,
        [("u", np.array([0.1, 0.2])), ("m", 0.5)], [("m1", None)])
    add("exact.ellipf", exact.ellipf, [("phi", 0.3), ("m", 0.5)], [("m1", None)])
    add("exact.free_rigid_body", exact.free_rigid_body,
        [("inertia", I3), ("w0", np.array([1.0, 0.1, 0.2])), ("t", np.linspace(0, 1, 5))],
        [("q0", q0)])

    # -- inertia ------------------------------------------------------------------------------
    add("inertia.box", inertia.box, [("mass", 2.0), ("size", np.array([1.0, 2.0, 3.0]))])
    add("inertia.solid_cylinder", inertia.solid_cylinder,
        [("mass", 2.0), ("radius", 0.5), ("height", 1.0)])
    add("inertia.hollow_cylinder", inertia.hollow_cylinder,
        [("mass", 2.0), ("radius", 0.5), ("height", 1.0)], [("inner_radius", 0.2)])
    add("inertia.solid_sphere", inertia.solid_sphere, [("mass", 2.0), ("radius", 0.5)])
    add("inertia.hollow_sphere", inertia.hollow_sphere, [("mass", 2.0), ("radius", 0.5)],
        [("inner_radius", 0.2)])
    add("inertia.thin_rod", inertia.thin_rod, [("mass", 2.0), ("length", 0.5)])
    add("inertia.ellipsoid", inertia.ellipsoid,
        [("mass", 2.0), ("semi_axes", np.array([1.0, 2.0, 3.0]))])
    add("inertia.cone", inertia.cone, [("mass", 2.0), ("radius", 0.5), ("height", 1.0)])
    add("inertia.rotate_inertia", inertia.rotate_inertia, [("inertia", Ifull), ("rotation", R)])
    add("inertia.rotate_inertia[quaternion]", inertia.rotate_inertia,
        [("inertia", Ifull), ("rotation", q0)], fuzz={"rotation"})
    add("inertia.parallel_axis", inertia.parallel_axis,
        [("inertia", Ifull), ("mass", 2.0), ("offset", v3)])
    add("inertia.compound", inertia.compound,
        [("masses", np.array([1.0, 2.0])), ("inertias", np.array([Ifull, Ifull]))],
        [("positions", np.array([v3, -v3])), ("rotations", np.array([R, R]))])
    add("inertia.principal_axes", inertia.principal_axes, [("inertia", Ifull)])
    B = inertia.principal_axes(Ifull)[1]
    for fname in ("to_principal_frame", "from_principal_frame"):
        add(f"inertia.{fname}", getattr(inertia, fname), [("axes", B)],
            [("orientation", q0), ("angular_velocity", v3), ("torque", v3)])
        add(f"inertia.{fname}[batch]", getattr(inertia, fname), [("axes", np.array([B, B]))],
            [("orientation", qs[:2]), ("angular_velocity", vs[:2]), ("torque", vs[:2])])
    add("inertia.validate_inertia", inertia.validate_inertia, [("inertia", Ifull)],
        [("name", "inertia")], fuzz={"inertia"})
    add("rotode.principal_axes", rotode.principal_axes, [("inertia", Ifull)])

    # -- frames -------------------------------------------------------------------------------
    DT = frames.DynamicTransform
    Tr = frames.Transform
    add("frames.Transform", Tr, [("translation", v3)], [("rotation", R), ("scale", 2.0)])
    add("frames.Transform[quaternion]", Tr, [("translation", v3)], [("rotation", q0)],
        fuzz={"rotation"})
    add("frames.Transform[2-D]", Tr, [("translation", np.array([1.0, 2.0]))],
        [("rotation", frames.planar_rotation(0.3))])
    tr = Tr(v3, R, 2.0)
    trb = Tr(vs, Rs)
    add("frames.Transform.apply", lambda points: tr.apply(points), [("points", vs)])
    add("frames.Transform.apply_vector", lambda vectors: tr.apply_vector(vectors),
        [("vectors", v3)])
    add("frames.Transform.compose", lambda other: tr.compose(other), [("other", trb)])
    add("frames.Transform @", lambda other: tr @ other, [("other", trb)])
    add("frames.Transform[index]", lambda index: trb[index], [("index", 1)])
    add("frames.Transform.identity", Tr.identity, [("dim", 3)], [("shape", (2,))])
    add("frames.planar_rotation", frames.planar_rotation, [("angle", 0.3)])
    dkw = [("rotation", R), ("scale", 2.0), ("velocity", v3), ("acceleration", v3),
           ("angular_velocity", v3), ("angular_acceleration", v3)]
    add("frames.DynamicTransform", DT, [("translation", v3)], dkw + [("skew", False)])
    add("frames.DynamicTransform[skew]", DT, [("translation", v3)],
        [("angular_velocity", so3.hat(v3)), ("skew", True)], fuzz={"angular_velocity"})
    add("frames.DynamicTransform.from_transform", DT.from_transform, [("transform", tr)],
        dkw[2:])
    add("frames.DynamicTransform.identity", DT.identity, [("dim", 3)], [("shape", ())])
    A = DT(v3, R, 2.0, v3, v3, v3, v3)
    Ab = DT(vs, Rs, velocity=vs, angular_velocity=vs)
    A2 = DT([1.0, 2.0], angular_velocity=0.5)
    dkw_d = [("velocity", v3), ("acceleration", v3), ("angular_velocity", v3),
             ("angular_acceleration", v3)]
    for meth in ("delta_local_to_global", "delta_global_to_local", "add_delta"):
        add(f"frames.DynamicTransform.{meth}", getattr(A, meth), [], dkw_d)
    add("frames.DynamicTransform.compose", lambda other: A.compose(other), [("other", Ab)])
    add("frames.DynamicTransform.apply", lambda points: A.apply(points), [("points", vs)])
    add("frames.DynamicTransform[index]", lambda index: Ab[index], [("index", 1)])
    add("frames.local_to_global", frames.local_to_global, [("parent", A), ("child", Ab)])
    add("frames.global_to_local", frames.global_to_local, [("parent", A), ("child", Ab)])
    add("frames.chain_local_to_global", frames.chain_local_to_global, [("chain", [A, Ab])])
    add("frames.chain_global_to_local", frames.chain_global_to_local, [("chain", [A, Ab])])
    for fname in ("inherited_delta", "cancel_inherited"):
        add(f"frames.{fname}", getattr(frames, fname), [("parent", A), ("child", Ab)],
            dkw_d + [("skew", False)])
    add("frames.inertial_accelerations", frames.inertial_accelerations,
        [("parent", A), ("position", vs), ("velocity", vs)])
    add("frames.local_acceleration", frames.local_acceleration,
        [("parent", A), ("position", vs), ("velocity", vs)],
        [("force", v3), ("mass", 2.0), ("force_frame", "world")])
    add("frames.local_acceleration[2-D]", frames.local_acceleration,
        [("parent", A2), ("position", np.array([1.0, 2.0])), ("velocity", np.array([1.0, 0.0]))],
        [("force", np.array([1.0, 0.0]))])
    add("frames.MovingFrameParticle", frames.MovingFrameParticle, [("parent", A)],
        [("force", lambda t, x, v: -x), ("mass", 2.0), ("force_frame", "parent")],
        use=lambda o: o(0.1, np.r_[v3, v3]))
    mfp = frames.MovingFrameParticle(A, force=lambda t, x, v: -x)
    add("frames.MovingFrameParticle(t, y)", lambda t, y: mfp(t, y),
        [("t", 0.1), ("y", np.r_[v3, v3])], allowed={"parent", "force", "mass", "force_frame"})
    add("frames.MovingFrameParticle.local_state", frames.MovingFrameParticle.local_state,
        [("parent", A), ("position", v3), ("velocity", v3)])
    add("frames.MovingFrameParticle.world_state", frames.MovingFrameParticle.world_state,
        [("parent", A), ("y", np.r_[v3, v3])])
    add("frames.MovingFrameRigidBody", frames.MovingFrameRigidBody, [("parent", A),
                                                                     ("inertia", Ifull)],
        [("mass", 2.0), ("force", lambda t, x, v, q, w: -x), ("torque", None)],
        use=lambda o: o(0.1, np.r_[v3, v3, q0, v3]))
    mfr = frames.MovingFrameRigidBody(A, Ifull, force=lambda t, x, v, q, w: -x,
                                      torque=lambda t, x, v, q, w: -w)
    add("frames.MovingFrameRigidBody(t, y)", lambda t, y: mfr(t, y),
        [("t", 0.1), ("y", np.r_[v3, v3, q0, v3])],
        allowed={"parent", "inertia", "mass", "force", "torque"})

    # -- steps --------------------------------------------------------------------------------
    rates = {"lie_euler": ["w"], "exp2": ["w", "dw"], "magnus_ca": ["w", "alpha"],
             "magnus2": ["w_mid"], "magnus4": ["w1", "w2"], "magnus6": ["w1", "w2", "w3"],
             "magnus8": ["w1", "w2", "w3", "w4"], "cg2": ["w0", "w1"],
             "cg3": ["w1", "w2", "w3"], "rk3": ["w0", "w_mid", "w1"],
             "rk4": ["w0", "w_mid", "w1"]}
    for fname, names in rates.items():
        extra_kw = ([("norm_gain", 0.5)] if fname.startswith("rk") else [("exp", "exact")])
        if fname == "magnus_ca":
            extra_kw.append(("terms", 3))
        public = {"q", "dt", "out", "frame", *names, *(k for k, _ in extra_kw)}
        add(f"steps.{fname}", getattr(steps, fname),
            [("q", qs)] + [(n, vs) for n in names] + [("dt", 0.1)],
            [("out", None), ("frame", "body")] + extra_kw, allowed=public)
        add(f"steps.{fname}[single]", getattr(steps, fname),
            [("q", q0)] + [(n, v3) for n in names] + [("dt", 0.1)], fuzz={"q", names[0]},
            allowed=public)

    # -- integrate ----------------------------------------------------------------------------
    opts = {"norm_gain", "normalize", "terms", "exp", "alpha", "substep", "solver", "tol",
            "max_iter", "max_substeps", "bound", "force", "mass", "qdot0", "restore_momentum",
            "torque_substeps", "torque_points", "torque_start", "torque_resets"}
    sig = {"model", "t_span", "y0", "method", "dt", "rtol", "atol", "first_step", "max_step",
           "max_steps", "frame", "t_eval", "save_every", "workers", "events", "max_events"}
    unknown = [("option foo", {"foo": 1}, "reject"), ("option trace", {"trace": {}}, "reject"),
               ("option h_next", {"h_next": 0.1}, "reject"),
               ("option control", {"control": None}, "reject"),
               ("option L0", {"L0": [0.0, 0.0, 0.0]}, "any"),
               ("option qdot0 (not rkn4)", {"qdot0": [0.0, 0.0, 0.0, 0.0]}, "reject"),
               ("option Frame", {"Frame": "body"}, "reject")]
    integ = rotode.integrate
    span = (0.0, 1.0)

    def K(name, pos, kw, extra=()):
        add(f"integrate[{name}]", integ, pos, kw, allowed=sig | opts, extra=list(unknown)
            + list(extra), use=None)

    K("kinematics rk4", [("model", W), ("t_span", span), ("y0", q0)],
      [("method", "rk4"), ("dt", 0.1), ("frame", "body"), ("t_eval", np.array([0.5, 1.0])),
       ("workers", 1), ("norm_gain", 0.5), ("normalize", True)])
    K("kinematics save_every", [("model", v3), ("t_span", span), ("y0", qs)],
      [("method", "magnus4"), ("dt", 0.1), ("save_every", 2), ("workers", 2),
       ("exp", "approx")])
    K("kinematics per-body rates", [("model", vs), ("t_span", span), ("y0", qs)],
      [("method", "lie_euler"), ("dt", 0.1), ("frame", "world")])
    K("kinematics callable", [("model", lambda t: [0.1, 0.2, t]), ("t_span", span),
                              ("y0", q0)], [("method", "cg3"), ("dt", 0.25)])
    K("kinematics QuaternionKinematics", [("model", QK), ("t_span", span), ("y0", q0)],
      [("method", "exp2"), ("dt", 0.25)])
    K("magnus_ca", [("model", W), ("t_span", span), ("y0", q0)],
      [("method", "magnus_ca"), ("dt", 0.1), ("terms", 3), ("alpha", v3),
       ("substep", False)])
    K("kinematics samples", [("model", SAMPLES), ("t_span", (0.0, 2.0)), ("y0", q0)],
      [("method", "rk4"), ("dt", "samples"), ("t_eval", np.array([0.25, 1.0]))])
    K("kinematics adaptive", [("model", W), ("t_span", span), ("y0", q0)],
      [("method", "rkmk5"), ("rtol", 1e-6), ("atol", 1e-9), ("first_step", 0.01),
       ("max_step", 0.5), ("max_steps", 1000), ("t_eval", np.array([0.5, 1.0])),
       ("events", events.Component("q", 0, 0.99)), ("max_events", 5)])
    K("kinematics adaptive dopri5", [("model", QK), ("t_span", (1.0, 0.0)), ("y0", qs)],
      [("method", "dopri5"), ("rtol", 1e-6), ("atol", np.full(4, 1e-9)), ("norm_gain", 1.0),
       ("events", lambda t, y: y[0] - 0.99)])
    K("rigid rk4", [("model", TOP), ("t_span", span), ("y0", w7)],
      [("method", "rk4"), ("dt", 0.1), ("normalize", True), ("torque_substeps", 2),
       ("torque_points", 3), ("torque_start", "hold"), ("torque_resets", np.array([0.5]))])
    K("rigid free restore_momentum", [("model", FREE), ("t_span", span),
                                      ("y0", np.stack([w7, w7]))],
      [("method", "rk4"), ("dt", 0.1), ("restore_momentum", True)])
    K("rigid list", [("model", [TOP, FREE]), ("t_span", span), ("y0", np.stack([w7, w7]))],
      [("method", "cg2"), ("dt", 0.1)])
    K("rigid rkn4", [("model", TOP), ("t_span", span), ("y0", np.r_[w7, v3, v3])],
      [("method", "rkn4"), ("dt", 0.1), ("force", np.array([0.0, 0.0, -9.81])), ("mass", 2.0),
       ("qdot0", np.zeros(4))])
    K("rigid rkn4 force callable", [("model", TOP), ("t_span", span),
                                    ("y0", np.r_[w7, v3, v3])],
      [("method", "rkn4"), ("dt", 0.1), ("force", lambda t, x, v: -x), ("mass", 2.0)])
    K("rigid implicit", [("model", TOP), ("t_span", span), ("y0", w7)],
      [("method", "implicit_midpoint"), ("dt", 0.1), ("solver", "newton"), ("tol", 1e-12),
       ("max_iter", 20), ("max_substeps", 100), ("bound", "inertia")])
    K("rigid adaptive", [("model", TOP), ("t_span", span), ("y0", w7)],
      [("method", "dop853"), ("rtol", 1e-8), ("atol", 1e-10), ("t_eval", np.array([0.5])),
       ("events", [events.KineticEnergy([1.0, 1.0, 0.5], 1.0), events.Component("w", 0)]),
       ("max_events", 3)])
    K("rigid adaptive rkmk8", [("model", FREE), ("t_span", span), ("y0", w7)],
      [("method", "rkmk8"), ("rtol", 1e-8), ("max_step", 0.2)])

    # -- rotode.solve_ivp / scipy with rotode's OdeSolver classes --------------------------
    ivp_sig = {"fun", "t_span", "y0", "method", "t_eval", "dense_output", "events",
               "vectorized", "args", "rtol", "atol", "first_step", "max_step"}
    add("rotode.solve_ivp[kinematics]", rotode.solve_ivp,
        [("fun", QK), ("t_span", span), ("y0", q0)],
        [("method", "RK45"), ("t_eval", np.array([0.5, 1.0])), ("dense_output", True),
         ("events", events.Component("q", 0, 0.99)), ("rtol", 1e-6), ("atol", 1e-9),
         ("first_step", 0.01), ("max_step", 0.5)], allowed=ivp_sig,
        extra=[("option foo", {"foo": 1}, "any")])
    add("rotode.solve_ivp[rigid]", rotode.solve_ivp, [("fun", TOP), ("t_span", span),
                                                      ("y0", w7)],
        [("method", "DOP853"), ("events", lambda t, y: y[4] - 10.0)], allowed=ivp_sig)
    sp = scipy.integrate.solve_ivp
    cls_sig = {"fun", "t_span", "y0", "method", "step", "dt", "rtol", "atol", "first_step",
               "max_step", "frame", "t_eval", "dense_output", "events", "vectorized", "args"}
    add("scipy.solve_ivp[RKMK8]", sp, [("fun", QK), ("t_span", span), ("y0", q0)],
        [("method", rotode.RKMK8), ("rtol", 1e-8), ("atol", 1e-10), ("first_step", 0.01),
         ("max_step", 0.5)], allowed=cls_sig | opts, extra=unknown)
    add("scipy.solve_ivp[Magnus4]", sp, [("fun", QK), ("t_span", span), ("y0", q0)],
        [("method", rotode.Magnus4), ("step", 0.1), ("exp", "approx")],
        allowed=cls_sig | opts, extra=unknown)
    add("scipy.solve_ivp[Magnus4 callable]", sp,
        [("fun", lambda t, q: QK(t, q)), ("t_span", span), ("y0", q0)],
        [("method", rotode.Magnus4), ("dt", 0.1), ("frame", "body")], allowed=cls_sig | opts)
    add("scipy.solve_ivp[RK4 rigid]", sp, [("fun", TOP), ("t_span", span), ("y0", w7)],
        [("method", rotode.RK4), ("step", 0.1), ("normalize", True)],
        allowed=cls_sig | opts, extra=unknown)
    add("scipy.solve_ivp[ImplicitMidpoint]", sp, [("fun", TOP), ("t_span", span),
                                                  ("y0", w7)],
        [("method", rotode.ImplicitMidpoint), ("step", 0.1), ("tol", 1e-12)],
        allowed=cls_sig | opts, extra=unknown)
    add("scipy.solve_ivp[RKN4]", sp, [("fun", TOP), ("t_span", span), ("y0", w7)],
        [("method", rotode.RKN4), ("step", 0.1)], allowed=cls_sig | opts)
    add("scipy.solve_ivp[MagnusCA]", sp, [("fun", QK), ("t_span", span), ("y0", q0)],
        [("method", rotode.MagnusCA), ("step", 0.1), ("terms", 2)], allowed=cls_sig | opts)

    # -- solve helpers ------------------------------------------------------------------------
    sol = rotode.solve_ivp(QK, span, q0, dense_output=True, rtol=1e-8)
    add("as_rotation[sol]", rotode.as_rotation, [("sol_or_states", sol)],
        [("kind", "auto"), ("t", np.array([0.25, 0.5]))])
    add("as_rotation[states]", rotode.as_rotation, [("sol_or_states", qs.T.copy())],
        [("kind", "quaternion")])
    add("as_rotation[matrix]", rotode.as_rotation,
        [("sol_or_states", Rs.reshape(3, 9).T.copy())], [("kind", "matrix")],
        fuzz={"sol_or_states"})
    add("state", rotode.state, [("orientation", q0), ("w_body", v3)],
        [("position", v3), ("velocity", v3)])
    add("state[batch]", rotode.state, [("orientation", qs), ("w_body", vs)])
    add("solve_expcoord", rotode.solve_expcoord,
        [("rhs", rhs.ExpCoordKinematics(W)), ("t_span", span), ("y0", np.zeros(3))],
        [("rtol", 1e-8)], allowed={"rhs", "t_span", "y0", "rtol", "atol", "method", "events",
                                   "t_eval", "dense_output"})
    return T


# ------------------------------------------------------------------------------------------
# the cases and their judgement
# ------------------------------------------------------------------------------------------

def cases(only=None):
    """Deterministic list of ``(target, parameter, label, factory, expect, update)``."""
    out = []
    for tg in targets():
        if only and only not in tg.name:
            continue
        out.append((tg, None, "valid", None, "work", None))
        for p, v in tg.pos + tg.kw:
            if tg.fuzz is not None and p not in tg.fuzz:
                continue
            base = v() if callable(v) and getattr(v, "_fresh", False) else v
            for label, factory, expect in bad_values(base):
                out.append((tg, p, label, factory, expect, None))
        for label, update, expect in tg.extra:
            out.append((tg, next(iter(update)), label, None, expect, update))
    return out


#: Flagged cases judged right or outside rotode: (target name prefix, parameters or None,
#: value labels or None, reason).  They are reported as accepted, not counted.
ACCEPTED = [
    ("scipy.solve_ivp[", {"t_span", "y0", "method"}, None,
     "SciPy's own solve_ivp checks these before rotode's solver class is built"),
    ("rotode.solve_ivp[", {"fun"}, None,
     "a fun that is not a rotode model runs in SciPy as documented: SciPy's messages (a None "
     "or non-finite value, on which SciPy's step-size loop never ends, raises in rotode)"),
    ("integrate[rigid", {"model"}, {"lambda:raise", "lambda:ones(5)", "lambda:nan",
                                    "lambda:list", "lambda:None", "lambda:'abc'", "lambda:inf",
                                    "lambda():no args"},
     "a callable model is kinematics (w(t)): the message on `y0` or `method` is the right one"),
    ("integrate[rigid rkn4", {"force"}, {"None"},
     "without `force` the state has 7 entries: the message on `y0` is the right one"),
    ("frames.", {"skew"}, {"True"},
     "skew=True asks for matrices: the message on `angular_velocity` is the right one"),
    ("steps.", None, {"valid+1e308", "-1", "1e308", "-1e308", "float 1.5"},
     "an overflow or the Magnus bound: the message names `q`, the rates and `dt` together"),
    ("integrate[magnus_ca]", {"alpha"}, {"valid+1e308"}, "the Magnus bound: message right"),
    ("rhs.ExpCoordKinematics.base = q", None, None,
     "the user wrote `rhs.base = ...`: the messages name `base`"),
    ("scipy.solve_ivp[Magnus4 callable]", {"dt"}, {"None"}, "the message asks for step=..."),
    ("rhs.QuaternionKinematics", {"norm_gain"}, {"1e308"},
     "left as is: a gain of 1e308 is accepted and only the Jacobian overflows"),
    ("rhs.RigidBody", {"norm_gain"}, {"1e308"},
     "left as is: a gain of 1e308 is accepted and only the Jacobian overflows"),
]


def accepted(name, param, label):
    """The reason a flagged case is accepted, or None."""
    for prefix, params, labels, reason in ACCEPTED:
        if name.startswith(prefix) and (params is None or param in params) \
                and (labels is None or label in labels):
            return reason
    return None


INTERNAL = [
    "Buffer dtype mismatch", "is not C-contiguous", "has incorrect type", "memoryview",
    "could not broadcast", "has no len()", "unsupported operand", "must be real number",
    "an integer is required", "too large to convert", "cannot convert float",
    "object is not subscriptable", "object is not iterable", "object is not callable",
    "not supported between instances", "operands could not be broadcast", "einsum",
    "Maximum allowed dimension", "array is too big", "setting an array element",
    "inhomogeneous", "invalid literal", "could not convert", "No matching signature",
    "out of bounds", "division by zero", "ufunc", "only length-1 arrays",
    "only integer scalar arrays", "truth value of an array", "index out of range",
    "cannot reshape", "unexpected keyword", "positional argument", "zero-sized",
    "object has no attribute", "Singular matrix", "Eigenvalues did not converge",
    "not enough values to unpack", "too many values to unpack", "argument must be",
    "float() argument", "int() argument", "must be a real number, not",
    "Cannot cast", "cannot be safely cast", "ndim", "Maximum allowed dimension",
    "must be str, not", "buffer source", "Buffer has wrong", "from_quat", "Found zero norm",
    "The truth value", "non-broadcastable", "size-1", "is not a valid", "dimensions are not",
    "unhashable", "need more than", "need at least one array", "shape mismatch",
    "Non-positive determinant", "did not contain a loop", "bytes-like", "0-dimensional arrays",
    "must be 1-dimensional", "negative dimensions",
]
BACKTICK = re.compile(r"`([^`]*)`")
PRIVATE = re.compile(r"(?<![\w.])(_[A-Za-z]\w*)")
SHAPE_ITEM = re.compile(r"^(\.\.\.|\d+|[A-Za-z]( ?[+-] ?\d+)?)$")


def described_shapes(msg):
    """The tuples after 'shape' (and before 'got') in a message, as lists of items."""
    m = re.search(r"must (?:have|be|hold)(?:(?!got)[^;`])*?shapes? (.*?)(?:,? got |$)", msg,
                  re.S)
    if not m:
        return []
    shapes = []
    for inner in re.findall(r"\(([^()]*)\)", m.group(1)):
        items = [s.strip() for s in inner.split(",") if s.strip()]
        if items and all(SHAPE_ITEM.match(s) for s in items):
            shapes.append(items)
        elif inner.strip() == "":
            shapes.append([])
    return shapes


def shape_fits(items, shape):
    if items and items[0] == "...":
        tail = items[1:]
        if len(shape) < len(tail):
            return False
        shape = shape[len(shape) - len(tail):]
        items = tail
    if len(items) != len(shape):
        return False
    return all(not it.isdigit() or int(it) == s for it, s in zip(items, shape, strict=True))


def judge(tg, param, label, expect, outcome):
    """The flags of one case."""
    import numpy as np

    flags = []
    kind = outcome["kind"]
    if kind in ("crash", "hang"):
        return [kind]
    if outcome.get("seconds", 0) > SLOW_S:
        flags.append("slow")
    msgs = []
    if kind == "exc":
        tname, msg = outcome["type"], outcome["message"]
        msgs.append(msg)
        indexing = tg is not None and tg.name.endswith(("[i]", "[index]"))
        if tname == "Boom" or (indexing and tname == "IndexError" and "range" in msg):
            pass                   # the user's exception; __getitem__'s protocol
        elif tname not in ("ValueError", "TypeError"):
            flags.append("type")
        if expect == "work":
            flags.append("work")
        if tname != "Boom":
            user_arity = label == "lambda():no args" and "positional argument" in msg
            if any(p in msg for p in INTERNAL) and not user_arity and not (
                    indexing and tname == "IndexError"):
                flags.append("internal")
            if param is not None and not re.search(rf"(?<![\w]){re.escape(param)}(?![\w])", msg) \
                    and not (label.startswith("lambda") and ("callable" in msg
                                                             or "the event" in msg)) \
                    and not user_arity and not indexing:
                flags.append("unnamed")
            ticks = BACKTICK.findall(msg)
            if ticks and param is not None and ticks[0].split("[")[0].split(" ")[0] == param \
                    and tg is not None:
                valid = dict(tg.pos + tg.kw).get(param)
                if isinstance(valid, np.ndarray) or isinstance(valid, (int, float)):
                    shapes = described_shapes(msg)
                    if "scalar" in msg:
                        shapes.append([])
                    if shapes and not any(shape_fits(s, np.shape(valid)) for s in shapes):
                        flags.append("shape")
    for w in outcome.get("warnings", []):
        msgs.append(w)
        if any(p in w for p in INTERNAL) or "encountered in" in w:
            flags.append("warning")
    for msg in msgs:
        names = set(PRIVATE.findall(msg))
        for t in BACKTICK.findall(msg):
            ident = re.match(r"[A-Za-z_]\w*", t)
            if ident and "." not in t.split("(")[0] and "=" not in t and " " not in t.strip():
                names.add(ident.group(0))
        allowed = tg.allowed if tg is not None else set()
        bad = [n for n in names if n.startswith("_") or n not in allowed]
        if bad:
            flags.append("private:" + ",".join(sorted(bad)))
    if kind == "ok":
        if outcome.get("nonfinite") and not (tg is not None and tg.hot and label in (
                "nan", "inf", "valid+nan", "valid+inf", "valid+1e308")):
            flags.append("nonfinite")
        if expect == "reject":
            flags.append("lax")
    if outcome.get("use_exc"):
        t, m = outcome["use_exc"]
        if t not in ("ValueError", "TypeError", "Boom", "NotImplementedError"):
            flags.append("use-type")
        if any(p in m for p in INTERNAL) and "positional argument" not in m:
            flags.append("use-internal")
    return list(dict.fromkeys(flags))


def nonfinite(x, depth=0):
    """True if a result holds NaN or inf where it claims success."""
    import numpy as np
    if depth > 4 or x is None:
        return False
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "fc" and not np.isfinite(x).all()
    if isinstance(x, float):
        return not math.isfinite(x)
    if hasattr(x, "status") and hasattr(x, "y"):           # IntegrationResult, OdeResult
        if getattr(x, "status", 0) not in (0,):
            return False
        return nonfinite(np.asarray(x.y, dtype=float), depth + 1)
    if type(x).__name__ == "Rotation":
        return nonfinite(x.as_quat(), depth + 1)
    if hasattr(x, "translation") and hasattr(x, "rotation"):
        parts = [x.translation, x.rotation, x.scale]
        if hasattr(x, "velocity"):
            parts += [x.velocity, x.acceleration, x.angular_velocity, x.angular_acceleration]
        return any(nonfinite(np.asarray(p, dtype=float), depth + 1) for p in parts)
    if isinstance(x, (tuple, list)):
        return any(nonfinite(v, depth + 1) for v in x[:20])
    return False


def run_case(case):
    tg, param, label, factory, expect, update = case
    out = {"kind": "ok"}
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if update is not None:
                res = tg.call(update=update)
            elif param is None:
                res = tg.call()
            else:
                res = tg.call(param, factory())
            out["nonfinite"] = bool(nonfinite(res))
            if tg.use is not None:
                try:
                    out["nonfinite"] |= bool(nonfinite(tg.use(res)))
                except BaseException as exc:   # noqa: BLE001
                    out["use_exc"] = (type(exc).__name__, str(exc))
        except BaseException as exc:   # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt):
                raise
            out = {"kind": "exc", "type": type(exc).__name__, "message": str(exc)}
            if type(exc).__name__ not in ("ValueError", "TypeError", "Boom"):
                out["where"] = traceback.format_exc(limit=-2).strip().splitlines()[-3:]
    out["seconds"] = time.perf_counter() - t0
    out["warnings"] = [f"{w.category.__name__}: {w.message}" for w in caught
                       if not issubclass(w.category, DeprecationWarning)]
    return out


# ------------------------------------------------------------------------------------------
# worker and parent
# ------------------------------------------------------------------------------------------

def worker(start, only):
    import resource
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
    stream = os.fdopen(os.dup(1), "w", buffering=1)
    sys.stdout = sys.stderr
    all_cases = cases(only)
    stream.write(json.dumps({"total": len(all_cases)}) + "\n")
    for i in range(start, len(all_cases)):
        tg, param, label, _, expect, _ = all_cases[i]
        stream.write(json.dumps({"start": i, "call": tg.name, "param": param, "value": label})
                     + "\n")
        out = run_case(all_cases[i])
        out["flags"] = judge(tg, param, label, expect, out)
        if any(f != "lax" for f in out["flags"]):
            reason = accepted(tg.name, param, label)
            if reason:
                out["accepted"] = reason
        stream.write(json.dumps({"i": i, "call": tg.name, "param": param, "value": label,
                                 "expect": expect, **out}) + "\n")
    stream.write(json.dumps({"done": True}) + "\n")


def parent(only):
    results, start, total = {}, 0, None
    while True:
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", str(start)]
        if only:
            cmd += ["--only", only]
        errlog = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "fuzz_messages.err"), "w+")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errlog, text=True,
                                bufsize=1)
        lines, current, done = [], None, False
        # read line by line with a watchdog on the time since the last line
        last = time.monotonic()
        pos = 0

        def pump(stream=proc.stdout, sink=lines):
            for line in stream:
                sink.append(line)
        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        hung = False
        while True:
            while pos < len(lines):
                msg = json.loads(lines[pos])
                pos += 1
                last = time.monotonic()
                if "total" in msg:
                    total = msg["total"]
                elif "start" in msg:
                    current, info = msg["start"], msg
                elif "done" in msg:
                    done = True
                else:
                    results[msg["i"]] = msg
                    current = None
            if done or (not reader.is_alive() and pos >= len(lines)):
                break
            if current is not None and time.monotonic() - last > HANG_S:
                proc.kill()          # our own worker, by its handle
                hung = True
                break
            time.sleep(0.05)
        proc.wait()
        if done:
            break
        if current is None:
            errlog.seek(0)
            raise RuntimeError("the worker died outside a case:\n" + errlog.read()[-3000:])
        results[current] = {**info, "i": current, "kind": "hang" if hung else "crash",
                            "flags": ["hang" if hung else "crash"],
                            "returncode": proc.returncode}
        print(f"case {current}: {'hang' if hung else 'crash'} (rc {proc.returncode})",
              file=sys.stderr)
        start = current + 1
        if start >= total:
            break
    return [results[i] for i in sorted(results)], total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--only", default=None, help="only targets whose name contains this")
    ap.add_argument("--json", default=None, help="write every case here")
    ap.add_argument("--all", action="store_true", help="print every case")
    args = ap.parse_args()
    if args.worker is not None:
        worker(args.worker, args.only)
        return 0
    t0 = time.time()
    results, total = parent(args.only)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    counts = {}
    bad = n_accepted = 0
    for r in results:
        flags = r.get("flags", [])
        if r.get("kind") in ("crash", "hang"):      # (the worker could not judge these)
            reason = accepted(r.get("call", ""), r.get("param"), r.get("value"))
            if reason:
                r["accepted"] = reason
        serious = [f for f in flags if f != "lax"]
        for f in flags:
            key = f.split(":")[0]
            counts[key] = counts.get(key, 0) + 1
        if serious and r.get("accepted"):
            n_accepted += 1
            serious = []
        if serious:
            bad += 1
        if serious or args.all or (flags and "lax" in flags and os.environ.get("SHOW_LAX")):
            what = (f"{r.get('type', '')}: {r.get('message', '')}" if r.get("kind") == "exc"
                    else r.get("kind"))
            print(f"[{','.join(flags)}] {r.get('call')} {r.get('param')}={r.get('value')} "
                  f"-> {what[:300]}")
    print(f"\n{len(results)} cases in {time.time() - t0:.0f} s; {bad} flagged, {n_accepted} "
          f"flagged but accepted (ACCEPTED: {len(ACCEPTED)} reasons); flag counts "
          f"{dict(sorted(counts.items()))}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
