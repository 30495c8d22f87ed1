// A user's equations y' = f(t, y) (rotode.ODE, rotode/ode.pyx) as a model of the specialised
// engine (rotode/_engine.hpp): its state size is known at run time only, its arrays are sized
// by the compile-time cap ODE_CAP (larger states keep the driver's loop).
//
// It does what the runner's callbacks do for the driver, with the same arithmetic: f calls the
// compiled function through its pointer with the body's row of parameters, or a Python one
// through the runner's GIL-taking evaluation (`_py_eval`), and reports a nonzero return
// (STATUS_UNAVAILABLE) and a NaN or inf in dydt (STATUS_NONFINITE_ITERATE) as `_f` does;
// with `normalize`, each quaternion block is put back on the unit sphere (q / |q|,
// rkmk.pxd's `rkmk_unit`) at the start, after every accepted step (the FSAL stage kept, as
// `_accept_unit`) and in every output row (as `_store`).
//
// The Runge-Kutta-Munthe-Kaas methods (rkmk3, rkmk5, rkmk8: Munthe-Kaas 1999) run the pair of
// their tableau on the local coordinates of each step (`OdeRkmkModel`): each quaternion block
// b as the rotation vector v_b of q_b = qb_b exp(v_b / 2) from the block's base qb_b at the
// step's start, the other components as they are; the operations of ode.pyx's `_begin`,
// `_deriv_rkmk`, `_accept_rkmk` and `_store` in their order (the driver's steps and bits).
#pragma once

#include <cmath>
#include <cstddef>

#include "_engine.hpp"
#include "_rkmk.hpp"
#include "_tableaux.hpp"

namespace rotode {

enum {
    ODE_CAP = 64,                   // the largest state the engine runs
};

// the driver's statuses that a user's fun causes (rotode/_driver.pxd)
enum OdeStatus {
    ODE_SOURCE_ERROR = -1,          // a Python fun raised (stored on the model)
    ODE_UNAVAILABLE = -2,           // a compiled fun returned nonzero
    ODE_NONFINITE_ITERATE = -5,     // dydt holds NaN or inf
};

// one body of a run (filled by rotode/ode.pyx)
struct OdeBody {
    // the compiled fun (rotode/ode.pxd's ode_fn), or NULL: `py`
    int (*fn)(double t, const double* y, double* dydt, const double* p);
    // a Python fun's evaluation (takes the GIL; a status), with its context and the body
    int (*py)(const void* ctx, std::ptrdiff_t i, double t, const double* y, double* dy);
    const void* ctx;
    std::ptrdiff_t i;
    const double* p;                // the body's parameters, or NULL
    int n;                          // state size, <= ODE_CAP
    int nq;                         // quaternion blocks
    const int* qoff;                // (nq,) where each starts
    int normalize;                  // unit blocks after every step and in the rows
    long long* nfev;                // OUT: evaluations of fun
    // rkmk (`OdeRkmkModel`) only: the other components' indices in y, and whether y0 is the
    // row stored at the end of an accepted step of an earlier call (its blocks retracted)
    const int* rest;
    int nrest;
    int resume;
};

// fun(t, y) of body b into dy: its status (a nonzero return of a compiled fun
// ODE_UNAVAILABLE, a Python fun's own status, a NaN or inf in dy ODE_NONFINITE_ITERATE):
// ode.pyx's `_f`
ROTODE_INLINE int ode_fun(const OdeBody& b, double t, const double* y, double* dy) {
    ++*b.nfev;
    if (b.fn != nullptr) {
        if (b.fn(t, y, dy, b.p) != 0) return ODE_UNAVAILABLE;
    } else {
        const int st = b.py(b.ctx, b.i, t, y, dy);
        if (st != 0) return st;
    }
    for (int k = 0; k < b.n; ++k)
        if (!(dy[k] - dy[k] == 0.0)) return ODE_NONFINITE_ITERATE;
    return 0;
}

template <int Cap>
struct OdeModel {
    static constexpr int cap = Cap;
    OdeBody b;

    int size() const { return b.n; }
    int width() const { return b.n; }

    ROTODE_INLINE int operator()(double t, const double* y, double* dy) const {
        return ode_fun(b, t, y, dy);
    }

    // each block q <- q / |q| when normalising (rkmk_unit's operations)
    inline void project(double* y) const {
        if (!b.normalize) return;
        for (int j = 0; j < b.nq; ++j) {
            double* q = y + b.qoff[j];
            const double s = 1.0 / std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
            q[0] = q[0] * s;
            q[1] = q[1] * s;
            q[2] = q[2] * s;
            q[3] = q[3] * s;
        }
    }
    inline void begin(const double* y0, double* z) const {
        for (int k = 0; k < b.n; ++k) z[k] = y0[k];
        project(z);
    }
    // the row of z (w: 0, a user's state carries its own rates)
    inline void store(double, const double* z, double* y, double* w) const {
        w[0] = w[1] = w[2] = 0.0;
        for (int k = 0; k < b.n; ++k) y[k] = z[k];
        project(y);
    }
    inline void first_row(double t, const double*, const double* z, double* y, double* w) const {
        store(t, z, y, w);
    }
    inline void accept(double* z, double*) const { project(z); }
};

// w = 2 vec(q^* q') of a unit q: the body angular velocity of q' = 1/2 q (0, w) (the component
// of q' along q, the scalar part, dropped): ode.pyx's `_body_rate` (OUT: w[3])
ROTODE_INLINE void ode_body_rate(const double* q, const double* dq, double* w) {
    w[0] = 2.0 * (q[0] * dq[1] - q[1] * dq[0] - q[2] * dq[3] + q[3] * dq[2]);
    w[1] = 2.0 * (q[0] * dq[2] - q[2] * dq[0] - q[3] * dq[1] + q[1] * dq[3]);
    w[2] = 2.0 * (q[0] * dq[3] - q[3] * dq[0] - q[1] * dq[2] + q[2] * dq[1]);
}

// A user's equations under a Runge-Kutta-Munthe-Kaas method: state z = [v_1 .. v_nq (3 each),
// y[rest]] (3 nq + nrest = n - nq values), output rows y (n values) with each block
// q_b = qb_b exp(v_b / 2).
//   f: y from z, fun(t, y), each block's v_b' = T(-v_b)^-1 w_b with w_b the body rate of its q'
//     (`ode_body_rate`), the rest's own derivative
//   accept: the FSAL stage's v_b' becomes w_b (T(-v_b) v_b'), qb_b <- qb_b exp(v_b / 2)
//     retracted, v_b <- 0
//   error scale: v's components scaled with the reference magnitude 1 (`ref`), a step turning
//     any block by more than `rkmk_max_step_angle` rejected (`max_angle`, `step_angle`: the
//     driver's `Stepper.max_angle` over its `angle_blocks`)
// nq >= 1 (without blocks the method is its pair on the state: `OdeModel`).
template <int Cap>
struct OdeRkmkModel {
    static constexpr int cap = Cap;
    OdeBody b;
    double refs[Cap];               // 1 for the rotation vectors, 0 for the rest
    mutable double qb[Cap];         // the blocks' bases (4 nq <= n <= Cap)

    int size() const { return 3 * b.nq + b.nrest; }
    int width() const { return b.n; }
    ROTODE_INLINE const double* ref() const { return refs; }
    ROTODE_INLINE double max_angle() const { return rkmk_max_step_angle(); }
    ROTODE_INLINE double step_angle(const double* z) const { return rkmk_step_angle(z, b.nq); }

    // the state y of z (ode.pyx's `_row`) (OUT: y[n])
    ROTODE_INLINE void row(const double* z, double* y) const {
        for (int j = 0; j < b.nq; ++j) quat_times_exp(qb + 4 * j, z + 3 * j, 1.0, y + b.qoff[j]);
        for (int k = 0; k < b.nrest; ++k) y[b.rest[k]] = z[3 * b.nq + k];
    }
    ROTODE_INLINE int operator()(double t, const double* z, double* dz) const {
        double y[Cap], dy[Cap], w[3];
        row(z, y);
        const int st = ode_fun(b, t, y, dy);
        if (st != 0) return st;
        for (int j = 0; j < b.nq; ++j) {
            ode_body_rate(y + b.qoff[j], dy + b.qoff[j], w);
            rkmk_rate(z + 3 * j, w, RKMK_FRAME_BODY, dz + 3 * j);
        }
        for (int k = 0; k < b.nrest; ++k) dz[3 * b.nq + k] = dy[b.rest[k]];
        return 0;
    }
    inline void begin(const double* y0, double* z) const {
        for (int j = 0; j < b.nq; ++j) {
            for (int k = 0; k < 4; ++k) qb[4 * j + k] = y0[b.qoff[j] + k];
            rkmk_base(qb + 4 * j, b.resume != 0);
            z[3 * j] = z[3 * j + 1] = z[3 * j + 2] = 0.0;
        }
        for (int k = 0; k < b.nrest; ++k) z[3 * b.nq + k] = y0[b.rest[k]];
    }
    // the row of z (w: 0, a user's state carries its own rates)
    inline void store(double, const double* z, double* y, double* w) const {
        w[0] = w[1] = w[2] = 0.0;
        row(z, y);
    }
    inline void first_row(double t, const double*, const double* z, double* y, double* w) const {
        store(t, z, y, w);
    }
    inline void accept(double* z, double* K0) const {
        for (int j = 0; j < b.nq; ++j) {
            rkmk_angular_velocity(z + 3 * j, K0 + 3 * j, RKMK_FRAME_BODY, K0 + 3 * j);
            rkmk_rebase(qb + 4 * j, z + 3 * j);
            z[3 * j] = z[3 * j + 1] = z[3 * j + 2] = 0.0;
        }
    }
};

template <class P>
inline int ode_rkmk_run(const OdeBody* b, EngineRun* run) {
    OdeRkmkModel<ODE_CAP> f{*b, {}, {}};
    for (int k = 0; k < ODE_CAP; ++k) f.refs[k] = k < 3 * b->nq ? 1.0 : 0.0;
    return erk_body<P>(f, run);
}

// One body of an error-controlled Runge-Kutta-Munthe-Kaas run of a user's equations with the
// pair `pair` of the method's tableau (a PairId; -1 for an unknown pair); b.nq >= 1.
inline int ode_rkmk_body(int pair, const OdeBody* b, EngineRun* run) {
    return with_pair(pair, [&](auto pair_tag) {
        using P = decltype(pair_tag);
        return ode_rkmk_run<P>(b, run);
    });
}

// One body of an error-controlled run of a user's equations with the pair `pair` (a PairId of
// rotode/_tableaux.hpp; -1 for an unknown pair, which the caller checks before).
inline int ode_erk_body(int pair, const OdeBody* b, EngineRun* run) {
    return with_pair(pair, [&](auto pair_tag) {
        using P = decltype(pair_tag);
        return erk_body<P>(OdeModel<ODE_CAP>{*b}, run);
    });
}

}  // namespace rotode
