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
#pragma once

#include <cmath>
#include <cstddef>

#include "_engine.hpp"
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
};

template <int Cap>
struct OdeModel {
    static constexpr int cap = Cap;
    OdeBody b;

    int size() const { return b.n; }
    int width() const { return b.n; }

    ROTODE_INLINE int operator()(double t, const double* y, double* dy) const {
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

// One body of an error-controlled run of a user's equations with the pair `pair` (a PairId of
// rotode/_tableaux.hpp; -1 for an unknown pair, which the caller checks before).
inline int ode_erk_body(int pair, const OdeBody* b, EngineRun* run) {
    switch (pair) {
#define ROTODE_ODE_CASE(id, P) \
        case id: return erk_body<P>(OdeModel<ODE_CAP>{*b}, run);
        ROTODE_PAIRS(ROTODE_ODE_CASE)
#undef ROTODE_ODE_CASE
        default: return -1;
    }
}

}  // namespace rotode
