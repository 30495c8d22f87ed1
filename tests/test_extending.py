"""A downstream Cython module cimports rotode's kernels and dual numbers and calls them nogil."""
import importlib
import math as m
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from docs_examples import downstream_example

import rotode
from rotode import quaternion as Q
from rotode import so3

DOWNSTREAM = textwrap.dedent('''
    # distutils: language = c++
    from rotode.dual cimport *
    from rotode.so3 cimport so3_exp, so3_dexp_inv_apply
    from rotode.quaternion cimport quat_mul, quat_to_matrix

    def exp_nogil(double[::1] v):
        cdef double R[9]
        with nogil:
            so3_exp(&v[0], R)
        return [R[i] for i in range(9)]

    def product_nogil(double[::1] p, double[::1] q):
        cdef double out[4]
        with nogil:
            quat_mul(&p[0], &q[0], out)
        return [out[i] for i in range(4)]

    cdef dual user_function(dual x) noexcept nogil:
        # one generic expression through every elementary function of rotode.dual
        return (real_sin(x) * real_cos(x) + real_exp(0.5 * x) - real_log(x) + real_sqrt(x)
                + real_atan2(x, 2.0 - x) + real_tan(0.3 * x) + real_atan(x) / x
                + real_pow(x, 2.5) - 1.0 / x + real_sinh(x) - real_cosh(0.5 * x)
                + real_asin(0.5 * x) + real_acos(0.25 * x) + real_fabs(-x))

    def dual_value_and_derivative(double x):
        cdef dual d = dual(x)
        d.d[0] = 1.0
        cdef dual y
        with nogil:
            y = user_function(d)
        return y.v, y.d[0], DUAL_N

    # a downstream event: the body's x axis crosses the world horizontal plane (z = 0),
    # evaluated by rotode's driver without the GIL
    from rotode.events cimport Event
    from rotode.quaternion cimport quat_rotate

    cdef class XAxisHorizontal(Event):
        cdef double evaluate(self, double t, const double* y, int k,
                             const double* w) noexcept nogil:
            cdef double e[3]
            cdef double v[3]
            e[0] = 1.0
            e[1] = 0.0
            e[2] = 0.0
            quat_rotate(y, e, v)
            return v[2]

    # a downstream event that returns NaN after t = 1 without storing an error
    from libc.math cimport NAN

    cdef class NaNAfterOne(Event):
        cdef double evaluate(self, double t, const double* y, int k,
                             const double* w) noexcept nogil:
            return 2.0 - t if t <= 1.0 else NAN

    # a downstream event that reads the body index the driver passes: body i at t = i + 1
    cdef class OnePerBody(Event):
        cdef double evaluate_body(self, Py_ssize_t i, double t, const double* y, int k,
                                  const double* w) noexcept nogil:
            return t - (i + 1.0)

    # a downstream right-hand side of a user's state [x (3), q (4)]: a body spinning at the
    # body rate (0, 0, p[0]), x its rotation vector's integral; fails from t = 1e3 on
    from rotode.ode cimport Equations

    cdef class SpinZ(Equations):
        cdef double fail_at
        def __init__(self, fail_at=1e3):
            self.fail_at = fail_at
        cdef int evaluate(self, double t, const double* y, double* dydt,
                          const double* p) noexcept nogil:
            cdef double w = p[0]
            if t >= self.fail_at:
                return 3
            dydt[0] = 0.0
            dydt[1] = 0.0
            dydt[2] = w
            dydt[3] = 0.5 * (-y[6] * w)
            dydt[4] = 0.5 * (-y[5] * w)
            dydt[5] = 0.5 * (y[4] * w)
            dydt[6] = 0.5 * (y[3] * w)
            return 0
''')

SETUP = textwrap.dedent('''
    import sys
    from Cython.Build import cythonize
    from setuptools import Extension, setup
    inc = sys.argv.pop()
    ext = Extension("downstream_kernels", ["downstream_kernels.pyx"], language="c++",
                    include_dirs=[inc], extra_compile_args=["-std=c++17", "-O1"])
    setup(ext_modules=cythonize([ext], include_path=[inc + "/.."], quiet=True),
          script_args=["build_ext", "--inplace"])
''')


def build_and_import(directory, files, args, module):
    """Write ``files`` into ``directory``, run ``python setup.py *args`` there against the rotode
    this test imports (installed, or a source folder built in place), and yield ``module``."""
    for name, text in files.items():
        (directory / name).write_text(text)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(rotode.get_include()))
    res = subprocess.run([sys.executable, "setup.py", *args], cwd=directory,
                         capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    sys.path.insert(0, str(directory))
    try:
        yield importlib.import_module(module)
    finally:
        sys.path.remove(str(directory))


@pytest.fixture(scope="module")
def downstream(tmp_path_factory):
    files = {"downstream_kernels.pyx": DOWNSTREAM, "setup.py": SETUP}
    yield from build_and_import(tmp_path_factory.mktemp("downstream"), files,
                                [rotode.get_include()], "downstream_kernels")


@pytest.fixture(scope="module")
def readme_module(tmp_path_factory):
    """The cimport example of docs/cython.md (mymod.pyx + setup.py), built exactly as written."""
    pyx, setup = downstream_example()
    yield from build_and_import(tmp_path_factory.mktemp("readme_downstream"),
                                {"mymod.pyx": pyx, "setup.py": setup},
                                ["build_ext", "--inplace"], "mymod")


def test_readme_cimport_example(readme_module, rng):
    for v in [np.zeros(3), np.array([0.0, 0.0, np.pi / 2]), rng.normal(size=3)]:
        np.testing.assert_array_equal(readme_module.rotation_matrix(v), so3.exp(v))
    value, derivative = readme_module.sin_and_derivative(0.7)
    assert value == m.sin(0.7) and abs(derivative - m.cos(0.7)) <= 1e-16


def test_get_include_ships_headers():
    inc = rotode.get_include()
    for name in ["so3.pxd", "quaternion.pxd", "dual.pxd", "_dual.hpp"]:
        assert os.path.exists(os.path.join(inc, name)), name


def test_downstream_kernels_match_facade(downstream):
    v = np.array([0.3, -1.2, 2.0])
    np.testing.assert_array_equal(np.reshape(downstream.exp_nogil(v), (3, 3)), so3.exp(v))
    p, q = np.array([1.0, 2.0, 3.0, 4.0]), np.array([-0.5, 0.1, 0.7, 0.2])
    np.testing.assert_array_equal(downstream.product_nogil(p, q), Q.multiply(p, q))


def test_dual_elementary_functions(downstream):
    def f(x):  # the same expression with the C library's functions (Python's math module)
        return (m.sin(x) * m.cos(x) + m.exp(0.5 * x) - m.log(x) + m.sqrt(x)
                + m.atan2(x, 2.0 - x) + m.tan(0.3 * x) + m.atan(x) / x + m.pow(x, 2.5) - 1.0 / x
                + m.sinh(x) - m.cosh(0.5 * x) + m.asin(0.5 * x) + m.acos(0.25 * x) + abs(-x))

    def fprime(x):  # written out by hand
        return (np.cos(2 * x) + 0.5 * np.exp(0.5 * x) - 1 / x + 0.5 / np.sqrt(x)
                + 2.0 / ((2.0 - x) ** 2 + x**2) + 0.3 / np.cos(0.3 * x) ** 2
                + (x / (1 + x * x) - np.arctan(x)) / x**2 + 2.5 * x**1.5 + 1 / x**2
                + np.cosh(x) - 0.5 * np.sinh(0.5 * x) + 0.5 / np.sqrt(1 - 0.25 * x * x)
                - 0.25 / np.sqrt(1 - x * x / 16) + 1.0)

    for x in [0.2, 0.7, 1.3]:
        val, der, n = downstream.dual_value_and_derivative(x)
        assert n == 7
        assert val == f(x)  # same expression evaluated in double: bit for bit
        h = 1e-5
        fd = (f(x + h) - f(x - h)) / (2 * h)
        assert abs(der - fprime(x)) <= 1e-13 * max(1.0, abs(der))
        assert abs(der - fd) <= 1e-7 * max(1.0, abs(der))


def test_downstream_event_subclass_runs_in_the_driver(downstream):
    """A Cython Event written downstream: the x axis of a body spinning about world y at
    1 rad/s (body frame = world frame at t0) crosses z = 0 at t = k pi (t = 0 included: g is
    zero there and moves away from zero, which SciPy records as an event too)."""
    event = downstream.XAxisHorizontal(terminal=False, direction=0)
    res = rotode.integrate([0.0, 1.0, 0.0], (0, 10), [1.0, 0, 0, 0], method="rkmk8",
                           rtol=1e-10, max_step=0.5, events=event)
    np.testing.assert_allclose(res.t_events[0], [0.0, np.pi, 2 * np.pi, 3 * np.pi], atol=1e-12)
    assert event(0.0, [1.0, 0, 0, 0]) == 0.0
    assert event.needs_w           # (the default: the driver computes w for it)


@pytest.mark.parametrize("workers", [1, 2])
def test_downstream_event_reads_the_body_index(downstream, workers):
    """`evaluate_body` receives the index of the body in the batch (rotode/events.pxd)."""
    event = downstream.OnePerBody(terminal=True)
    res = rotode.integrate([0.0, 1.0, 0.0], (0, 10), [[1.0, 0, 0, 0]] * 3, method="dopri5",
                           rtol=1e-8, events=event, workers=workers)
    np.testing.assert_allclose(res.t_stop, [1.0, 2.0, 3.0], rtol=1e-14)
    assert event(2.5, [1.0, 0, 0, 0], body=1) == 0.5


@pytest.mark.parametrize("workers", [1, 2])
def test_downstream_event_returning_nan_is_named_with_its_time(downstream, workers):
    """A compiled event whose evaluate returns NaN without storing an error stops the run with
    a ValueError naming it and the time, as a Python event returning NaN does (not a
    RuntimeError about an error never stored)."""
    event = downstream.NaNAfterOne(terminal=False, direction=0)
    with pytest.raises(ValueError, match=r"the event NaNAfterOne\(terminal=0, direction=0\) "
                                         r"returned NaN at t = 1\.\d+"):
        rotode.integrate([0.0, 1.0, 0.0], (0, 10), [[1.0, 0, 0, 0]] * 3, method="rkmk8",
                         rtol=1e-10, max_step=0.5, events=event, workers=workers)
    assert event.error is None
    with pytest.raises(ValueError, match=r"NaNAfterOne.* returned NaN at t = 1\.5"):
        event(1.5, [1.0, 0, 0, 0])


def _spin_z(t, y, p):
    """SpinZ of the downstream module in Python (the same products)."""
    w = p[0]
    return np.array([0.0, 0.0, w, 0.5 * (-y[6] * w), 0.5 * (-y[5] * w), 0.5 * (y[4] * w),
                     0.5 * (y[3] * w)])


@pytest.mark.parametrize("method", ["rkmk8", "dop853", "rk4"])
def test_downstream_equations_subclass_runs_as_an_ode(downstream, method):
    """A Cython subclass of rotode.ode.Equations is the fun of a rotode.ODE: the bits of the
    same equations in Python, per-body parameters on 2 threads, its failure reported."""
    rates = np.array([[0.5], [1.0], [2.0]])
    y0 = np.tile([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], (3, 1))
    kw = dict(dt=0.01) if method == "rk4" else dict(rtol=1e-10, atol=1e-12)
    ours = rotode.integrate(rotode.ODE(downstream.SpinZ(), n=7, quaternions=[3], params=rates),
                            (0, 3), y0, method=method, workers=2, **kw)
    ref = rotode.integrate(rotode.ODE(_spin_z, n=7, quaternions=[3], params=rates),
                           (0, 3), y0, method=method, **kw)
    np.testing.assert_array_equal(ours.y, ref.y)
    half = 1.5 * rates[:, 0]                   # q(3) = [cos(3 w / 2), 0, 0, sin(3 w / 2)]
    np.testing.assert_allclose(ours.y[:, -1, 3], np.cos(half), atol=1e-7)
    np.testing.assert_allclose(ours.y[:, -1, 6], np.sin(half), atol=1e-7)
    if method == "dop853":      # one body: the thin call path (`ode.run_single`) takes it too
        from rotode import ode

        one = rotode.ODE(downstream.SpinZ(), n=7, quaternions=[3], params=rates[1])
        assert ode.run_single(one, (0, 3), y0[1], method, 1e-10, 1e-12) is not None
        np.testing.assert_array_equal(
            rotode.integrate(one, (0, 3), y0[1], method=method, **kw).y, ours.y[1])
    failing = rotode.ODE(downstream.SpinZ(1.5), n=7, quaternions=[3], params=rates)
    bad = rotode.integrate(failing, (0, 3), y0, method=method, **kw)
    assert bad.status < 0 and "nonzero" in bad.message
    np.testing.assert_allclose(downstream.SpinZ()(0.0, y0[0], [2.0]), _spin_z(0, y0[0], [2.0]))


def test_python_subclass_of_equations_is_refused():
    from rotode.ode import Equations

    class InPython(Equations):
        pass

    for bad in (InPython(), Equations()):
        with pytest.raises(TypeError, match="Cython"):
            rotode.ODE(bad, n=4, quaternions=[0])
