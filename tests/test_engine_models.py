"""A model of one's own through the specialised engine, with no runner of its own.

The engine's loop (rotode/_engine.hpp, `erk_body<P, M>`) is written once over the model
interface (docs/architecture.md, "The specialised engine"): a struct with the state size ``n``,
the output width ``k``, ``f(t, y, dy)``, ``begin``, ``first_row`` and ``store``.  Here a
downstream module, built at test time against the installed headers as a user's would be,
defines a third model that rotode has no runner for -- a torque-free rigid body carrying three
Euclidean states, the position of a point moving with a constant body-frame velocity, x' = R(q)
v -- and runs it with two registry pairs (their generated coefficients, rotode/_tableaux.hpp).
The reference is SciPy's ``solve_ivp`` with the same pair and controller on the same equations
written in NumPy: the same accepted steps and right-hand-side evaluations, and the same values
to round-off.
"""
import textwrap

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from test_extending import build_and_import

TOY = textwrap.dedent('''
    # distutils: language = c++
    import numpy as np
    from rotode._engine cimport EngineRun

    cdef extern from *:
        """
        #include "_engine.hpp"
        #include "_tableaux.hpp"

        // [q (4), w (3), x (3)]: a torque-free body, and x' = R(q) v for a constant body-frame v
        struct Vehicle {
            static constexpr int n = 10, k = 10;
            double I[3], Iinv[3], v[3];
            void operator()(double, const double* y, double* dy) const {
                const double* q = y;
                const double* w = y + 4;
                dy[0] = 0.5 * (-q[1] * w[0] - q[2] * w[1] - q[3] * w[2]);
                dy[1] = 0.5 * (q[0] * w[0] + q[2] * w[2] - q[3] * w[1]);
                dy[2] = 0.5 * (q[0] * w[1] - q[1] * w[2] + q[3] * w[0]);
                dy[3] = 0.5 * (q[0] * w[2] + q[1] * w[1] - q[2] * w[0]);
                const double L0 = I[0] * w[0], L1 = I[1] * w[1], L2 = I[2] * w[2];
                dy[4] = Iinv[0] * -(w[1] * L2 - w[2] * L1);
                dy[5] = Iinv[1] * -(w[2] * L0 - w[0] * L2);
                dy[6] = Iinv[2] * -(w[0] * L1 - w[1] * L0);
                // R(q) v for any nonzero q
                const double s = 2.0 / (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
                const double c0 = q[2] * v[2] - q[3] * v[1];
                const double c1 = q[3] * v[0] - q[1] * v[2];
                const double c2 = q[1] * v[1] - q[2] * v[0];
                dy[7] = v[0] + s * (q[0] * c0 + q[2] * c2 - q[3] * c1);
                dy[8] = v[1] + s * (q[0] * c1 + q[3] * c0 - q[1] * c2);
                dy[9] = v[2] + s * (q[0] * c2 + q[1] * c1 - q[2] * c0);
            }
            void begin(const double* y0, double* z) const {
                for (int i = 0; i < n; ++i) z[i] = y0[i];
            }
            void first_row(double, const double* y0, const double*, double* y, double* w) const {
                store(0.0, y0, y, w);
            }
            void store(double, const double* z, double* y, double* w) const {
                for (int i = 0; i < k; ++i) y[i] = z[i];
                for (int i = 0; i < 3; ++i) w[i] = z[4 + i];
            }
        };

        static int vehicle_never_stop(void*) { return 0; }

        template <class P>
        int vehicle_run(const double* p, rotode::EngineRun* run) {
            Vehicle m;
            for (int i = 0; i < 3; ++i) {
                m.I[i] = p[i];
                m.Iinv[i] = 1.0 / p[i];
                m.v[i] = p[6 + i];
            }
            return rotode::erk_body<P>(m, run);
        }
        static int vehicle_dop853(const double* p, rotode::EngineRun* r) {
            return vehicle_run<rotode::Pair_dop853>(p, r);
        }
        static int vehicle_bs3(const double* p, rotode::EngineRun* r) {
            return vehicle_run<rotode::Pair_bs3>(p, r);
        }
        """
        int vehicle_never_stop(void*) noexcept nogil
        int vehicle_dop853(const double* p, EngineRun* run) noexcept nogil
        int vehicle_bs3(const double* p, EngineRun* run) noexcept nogil

    def solve(str pair, double[::1] params, double[::1] y0, double[::1] t, Py_ssize_t[::1] save,
              double rtol, double atol):
        cdef EngineRun run
        cdef int st
        cdef int countdown = 1 << 30
        cdef double atols[10]
        yo = np.empty((save.shape[0], 10))
        wo = np.empty((save.shape[0], 3))
        cdef double[:, ::1] yv = yo
        cdef double[:, ::1] wv = wo
        for i in range(10):
            atols[i] = atol
        run.t = &t[0]
        run.n = t.shape[0] - 1
        run.save = &save[0]
        run.m = save.shape[0]
        run.y0 = &y0[0]
        run.yo = &yv[0, 0]
        run.wo = &wv[0, 0]
        run.rtol = rtol
        run.atol = atols
        run.first_step = 0.0
        run.max_step = float("inf")
        run.max_steps = 10**7
        run.t_eval = True
        run.countdown = &countdown
        run.tick = vehicle_never_stop
        run.tick_ctx = NULL
        cdef int (*step)(const double*, EngineRun*) noexcept nogil
        step = vehicle_dop853 if pair == "dop853" else vehicle_bs3
        with nogil:
            st = step(&params[0], &run)
        return yo, wo, st, run.accepted, run.rejected, run.nfev
''')

SETUP = textwrap.dedent('''
    import sys
    from Cython.Build import cythonize
    from setuptools import Extension, setup
    inc = sys.argv.pop()
    ext = Extension("toy_engine_model", ["toy_engine_model.pyx"], language="c++",
                    include_dirs=[inc], extra_compile_args=["-std=c++17", "-O1",
                                                            "-ffp-contract=off"])
    setup(ext_modules=cythonize([ext], include_path=[inc + "/.."], quiet=True),
          script_args=["build_ext", "--inplace"])
''')

INERTIA = np.array([2.5, 1.4, 1.3])
VELOCITY = np.array([1.0, 0.2, -0.3])
Y0 = np.array([1.0, 0.0, 0.0, 0.0, 0.01, 5.0, 0.01, 0.0, 0.0, 0.0])


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    import rotode
    yield from build_and_import(tmp_path_factory.mktemp("toy_engine_model"),
                                {"toy_engine_model.pyx": TOY, "setup.py": SETUP},
                                [rotode.get_include()], "toy_engine_model")


def vehicle(t, y):
    """The same equations in NumPy (SciPy's reference)."""
    q, w = y[:4], y[4:7]
    qw, qx, qy, qz = q
    dq = 0.5 * np.array([-qx * w[0] - qy * w[1] - qz * w[2], qw * w[0] + qy * w[2] - qz * w[1],
                         qw * w[1] - qx * w[2] + qz * w[0], qw * w[2] + qx * w[1] - qy * w[0]])
    dw = -np.cross(w, INERTIA * w) / INERTIA
    u = q[1:] / np.sqrt(q @ q)
    c = np.sqrt(1.0 - u @ u) if q[0] >= 0 else -np.sqrt(1.0 - u @ u)
    v = VELOCITY
    dx = v + 2.0 * c * np.cross(u, v) + 2.0 * np.cross(u, np.cross(u, v))
    return np.concatenate([dq, dw, dx])


@pytest.mark.parametrize("pair, scipy_method", [("dop853", "DOP853"), ("bs3", "RK23")])
def test_a_third_model_runs_through_the_engine(toy, pair, scipy_method):
    t_eval = np.linspace(0.0, 4.0, 9)
    rtol, atol = 1e-8, 1e-10
    params = np.concatenate([INERTIA, 1.0 / INERTIA, VELOCITY])
    y, w, status, accepted, rejected, nfev = toy.solve(
        pair, params, Y0, t_eval, np.arange(t_eval.size, dtype=np.intp), rtol, atol)
    ref = solve_ivp(vehicle, (0.0, 4.0), Y0, method=scipy_method, t_eval=t_eval, rtol=rtol,
                    atol=atol)
    steps = solve_ivp(vehicle, (0.0, 4.0), Y0, method=scipy_method, rtol=rtol, atol=atol)
    assert status == 0 and ref.success
    assert (accepted, nfev) == (steps.t.size - 1, ref.nfev)      # SciPy's steps and count
    np.testing.assert_allclose(y, ref.y.T, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(w, y[:, 4:7])
    # the body moves by the integral of R(q) v: |x(T)| <= |v| T, and x leaves the origin
    assert 0.0 < np.linalg.norm(y[-1, 7:]) <= np.linalg.norm(VELOCITY) * 4.0 + 1e-9
    # invariants of the torque-free part: |q| = 1 and the kinetic energy, to the tolerance
    assert np.allclose(np.einsum("ij,ij->i", y[:, :4], y[:, :4]), 1.0, atol=1e-7)
    energy = np.einsum("ij,j,ij->i", y[:, 4:7], INERTIA, y[:, 4:7])
    assert np.allclose(energy, energy[0], rtol=1e-7)
