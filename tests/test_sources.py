"""Angular-velocity and torque sources, including a downstream Cython subclass."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import reference as ref
from numpy.testing import assert_allclose

import rotode
from rotode import omega, torque
from rotode.rhs import QuaternionKinematics, RigidBody

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(rotode.__file__)))


def test_constant_and_sinusoid():
    assert_allclose(omega.Constant([1, 2, 3])(5.0), [1, 2, 3])
    assert_allclose(omega.Constant([1, 2, 3]).derivative(5.0), 0)
    s = omega.Sinusoid(amplitude=np.pi / 2, rate=2 * np.pi / 10,
                       phase=[0, 2 * np.pi / 3, 4 * np.pi / 3])
    for t in [0.0, 1.3, 77.0]:
        assert_allclose(s(t), ref.benchmark_w(t), rtol=0, atol=1e-15)
        h = 1e-5
        assert_allclose(s.derivative(t), (s(t + h) - s(t - h)) / (2 * h), atol=1e-9)
    s2 = omega.Sinusoid([1, 2, 3], 0.5)
    assert_allclose(s2(1.0), np.array([1, 2, 3]) * np.sin(0.5))
    assert s.rate == 2 * np.pi / 10
    assert "Sinusoid" in repr(s)


@pytest.mark.parametrize("kind, order, tol", [("linear", 2, 2e-5), ("cubic", 4, 5e-10)])
def test_samples_interpolate_in_c(kind, order, tol):
    t = np.linspace(0, 10, 1001)
    src = omega.Samples(t, np.array([ref.benchmark_w(x) for x in t]), kind=kind)
    tt = np.random.default_rng(0).uniform(0, 10, 200)
    err = max(np.abs(src(x) - ref.benchmark_w(x)).max() for x in tt)
    assert err < tol
    # exact at the knots, also when called out of order (binary search, not only the hint)
    for i in [1000, 3, 500, 0, 999]:
        assert_allclose(src(t[i]), ref.benchmark_w(t[i]), atol=1e-15)
    h = 1e-6
    assert_allclose(src.derivative(3.333), (src(3.333 + h) - src(3.333 - h)) / (2 * h), atol=1e-6)


def test_samples_errors():
    t = np.linspace(0, 1, 5)
    w = np.zeros((5, 3))
    with pytest.raises(ValueError, match="outside the sampled interval"):
        omega.Samples(t, w)(1.5)
    with pytest.raises(ValueError, match="outside the sampled interval"):
        QuaternionKinematics(omega.Samples(t, w))(-0.1, np.array([1.0, 0, 0, 0]))
    with pytest.raises(ValueError, match="strictly increasing"):
        omega.Samples(t[::-1], w)
    with pytest.raises(ValueError, match=r"`w` must have shape \(m, 3\)"):
        omega.Samples(t, np.zeros((4, 3)))
    with pytest.raises(ValueError, match=r"`w` must have shape"):
        omega.Samples(t, np.zeros((5, 2)))
    with pytest.raises(ValueError, match="kind"):
        omega.Samples(t, w, kind="quadratic")
    with pytest.raises(ValueError, match="at least 4"):
        omega.Samples(t[:3], w[:3], kind="cubic")
    with pytest.raises(ValueError, match="finite"):
        omega.Samples(t, np.full((5, 3), np.nan))


def test_callable_sources():
    src = omega.as_source(lambda t: [t, 2 * t, 3 * t])
    assert isinstance(src, omega.Callable)
    assert_allclose(src(2.0), [2, 4, 6])
    with pytest.raises(NotImplementedError, match="w'"):
        src.derivative(1.0)
    with pytest.raises(TypeError, match="callable"):
        omega.Callable(3.0)
    assert isinstance(omega.as_source([1, 2, 3]), omega.Constant)
    with pytest.raises(ValueError, match=r"must return shape \(3,\)"):
        omega.Callable(lambda t: np.zeros((3, 1)))(0.0)


def test_torques():
    q = np.array([0.9, 0.1, -0.3, 0.2])
    w = np.array([0.4, -1.0, 2.0])
    assert_allclose(torque.Constant([1, 2, 3])(0.0, q, w), [1, 2, 3])
    assert_allclose(torque.Constant([1, 2, 3], frame="world")(0.0, q, w),
                    ref.qmat(q).T @ [1, 2, 3], atol=1e-15)
    g = torque.Gravity(mass=2.0, g=9.81, com=[0.1, 0.2, 0.5])
    assert_allclose(g(0.0, q, w), ref.gravity(q, 2.0, 9.81, np.array([0.1, 0.2, 0.5])),
                    atol=1e-14)
    assert_allclose(g.potential_energy(q), 2 * 9.81 * (ref.qmat(q) @ [0.1, 0.2, 0.5])[2])
    seen = []
    c = torque.Callable(lambda t, q, w: seen.append(q) or -w)
    assert_allclose(c(0.0, 3 * q, w), -w)
    assert_allclose(np.linalg.norm(seen[0]), 1.0)     # q is passed normalised
    with pytest.raises(TypeError, match="torque"):
        torque.Callable("x")
    with pytest.raises(ValueError, match="`g` must be finite"):
        torque.Gravity(1.0, -1.0, [0, 0, 1])
    with pytest.raises(ValueError, match=r"`com` must have shape \(3,\)"):
        torque.Gravity(1.0, 1.0, [0, 1])


DOWNSTREAM = textwrap.dedent('''
    # distutils: language = c++
    # A downstream module that stays in C by subclassing rotode's cdef base classes.
    from rotode.omega cimport AngularVelocity
    from rotode.torque cimport Torque
    from rotode.dual cimport dual


    cdef class Spin(AngularVelocity):
        cdef double rate

        def __init__(self, rate):
            self.rate = rate

        cdef int evaluate(self, double t, double* w) noexcept nogil:
            w[0] = 0.0
            w[1] = 0.0
            w[2] = self.rate * t
            return 0


    cdef class Damping(Torque):
        cdef double c

        def __init__(self, c):
            self.c = c

        cdef int evaluate(self, double t, const double* q, const double* w,
                          double* tau) noexcept nogil:
            tau[0] = -self.c * w[0]
            tau[1] = -self.c * w[1]
            tau[2] = -self.c * w[2]
            return 0


    cdef class ExactDamping(Damping):
        cdef int evaluate_dual(self, double t, const dual* q, const dual* w,
                               dual* tau) noexcept nogil:
            cdef int i, k
            for i in range(3):
                tau[i] = dual(-self.c * w[i].v)
                for k in range(7):
                    tau[i].d[k] = -self.c * w[i].d[k]
            return 0
''')

SETUP = textwrap.dedent('''
    import numpy
    from Cython.Build import cythonize
    from setuptools import Extension, setup
    ext = Extension("downstream", ["downstream.pyx"], language="c++",
                    include_dirs=[{rotode!r}], extra_compile_args=["-std=c++17", "-O1"])
    setup(ext_modules=cythonize([ext], include_path=[{root!r}],
                                compiler_directives={{"language_level": 3}}))
''')


def test_downstream_cython_subclasses(tmp_path):
    (tmp_path / "downstream.pyx").write_text(DOWNSTREAM)
    (tmp_path / "setup.py").write_text(SETUP.format(rotode=os.path.join(ROOT, "rotode"),
                                                    root=ROOT))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"],
                       cwd=tmp_path, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    sys.path.insert(0, str(tmp_path))
    try:
        import downstream
    finally:
        sys.path.remove(str(tmp_path))
    spin = downstream.Spin(0.5)
    assert_allclose(spin(2.0), [0, 0, 1.0])
    f = QuaternionKinematics(spin)
    q = np.array([1.0, 0.2, 0, 0])
    assert_allclose(f(2.0, q), ref.quat_kin(q, np.array([0, 0, 1.0])), atol=1e-15)
    y = np.array([0.9, 0.1, 0.2, 0.3, 1.0, -2.0, 0.5])
    for T in (downstream.Damping(0.3), downstream.ExactDamping(0.3)):
        rb = RigidBody([2.5, 1.4, 1.3], T)
        Im = np.diag([2.5, 1.4, 1.3])
        assert_allclose(rb(0.0, y), ref.rigid_body(y, Im, -0.3 * y[4:]), atol=1e-15)
        J = rb.jac(0.0, y)
        J_fd = np.empty((7, 7))
        for j in range(7):
            e = np.zeros(7)
            e[j] = 1e-6
            J_fd[:, j] = (rb(0.0, y + e) - rb(0.0, y - e)) / 2e-6
        assert_allclose(J, J_fd, rtol=1e-6, atol=1e-8)
