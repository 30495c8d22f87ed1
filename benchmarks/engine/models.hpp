// The three benchmark problems of benchmarks/bench_adaptive.py as inline right-hand sides
// f(t, y, dy) for benchmarks/engine/dop853.hpp and the CyRK module beside it (cyrk_rhs.pyx
// writes the same formulas in Cython).
//
// Each formula is rotode's (rotode/equations.pxd, torque.pyx, omega.pyx) with the products by
// exact zeros left out, in the same order, so that one evaluation gives rotode's bits:
// quaternions scalar-first, Hamilton product, q maps body to world, w in the body frame, q not
// normalised (q' = 1/2 q (x) (0, w), Rucker 2018 eq. 22 without the norm controller), and
// Euler's equations w' = I^-1 (tau - w x I w) for a principal-axes inertia with I^-1 given (the
// inverse rotode computes, so that the products agree).
#pragma once

#include <cmath>

namespace engine {

// q' = 1/2 q (x) (0, w) (OUT: dq[4])
inline void quaternion_rate(const double* q, double w0, double w1, double w2, double* dq) {
    dq[0] = 0.5 * (-q[1] * w0 - q[2] * w1 - q[3] * w2);
    dq[1] = 0.5 * (q[0] * w0 + q[2] * w2 - q[3] * w1);
    dq[2] = 0.5 * (q[0] * w1 - q[1] * w2 + q[3] * w0);
    dq[3] = 0.5 * (q[0] * w2 + q[1] * w1 - q[2] * w0);
}

// w' = I^-1 (tau - w x I w), principal axes (OUT: dw[3])
inline void euler_rate(const double* I, const double* Iinv, const double* w, double t0,
                       double t1, double t2, double* dw) {
    const double L0 = I[0] * w[0], L1 = I[1] * w[1], L2 = I[2] * w[2];
    dw[0] = Iinv[0] * (t0 - (w[1] * L2 - w[2] * L1));
    dw[1] = Iinv[1] * (t1 - (w[2] * L0 - w[0] * L2));
    dw[2] = Iinv[2] * (t2 - (w[0] * L1 - w[1] * L0));
}

// The upright Lagrange top (Rucker 2018 sec. IV): gravity along world -z, the centre of mass at
// body +e3 (m g h = mgh), tau = m g h e3 x R(q)^T (-e_z); state [q (4), w_body (3)].
struct LagrangeTop {
    static constexpr int n = 7;
    double I[3], Iinv[3], mgh;

    inline void operator()(double, const double* y, double* dy) const {
        const double q0 = y[0], q1 = y[1], q2 = y[2], q3 = y[3];
        const double s = 2.0 / (q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3);
        // d = R(q)^T (-e_z): its x and y components (z is not needed with the com on e3)
        const double d0 = s * (q0 * q2 - q3 * q1);
        const double d1 = s * (-(q0 * q1) - q3 * q2);
        quaternion_rate(y, y[4], y[5], y[6], dy);
        euler_rate(I, Iinv, &y[4], -(mgh * d1), mgh * d0, 0.0, &dy[4]);
    }
};

// A torque-free rigid body (the T-handle of Mizerski 2020 sec. 11); state [q (4), w_body (3)].
struct FreeBody {
    static constexpr int n = 7;
    double I[3], Iinv[3];

    inline void operator()(double, const double* y, double* dy) const {
        quaternion_rate(y, y[4], y[5], y[6], dy);
        const double L0 = I[0] * y[4], L1 = I[1] * y[5], L2 = I[2] * y[6];
        dy[4] = Iinv[0] * -(y[5] * L2 - y[6] * L1);
        dy[5] = Iinv[1] * -(y[6] * L0 - y[4] * L2);
        dy[6] = Iinv[2] * -(y[4] * L1 - y[5] * L0);
    }
};

// Kinematics with a known body rate w_i(t) = amp_i sin(rate t + phase_i) (Rucker 2018 eq. 29);
// state q (4).
struct Kinematics {
    static constexpr int n = 4;
    double amp[3], rate, phase[3];

    inline void operator()(double t, const double* q, double* dq) const {
        const double w0 = amp[0] * std::sin(rate * t + phase[0]);
        const double w1 = amp[1] * std::sin(rate * t + phase[1]);
        const double w2 = amp[2] * std::sin(rate * t + phase[2]);
        quaternion_rate(q, w0, w1, w2, dq);
    }
};

}  // namespace engine
