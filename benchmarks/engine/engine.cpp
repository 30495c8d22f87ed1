// C entry points of the hand-written DOP853 loop, for ctypes (benchmarks/engine/build.py compiles
// this file with rotode's own flags into a shared library; no Python header, no extra build
// dependency).
//
// model: 0 the Lagrange top, params = I (3), I^-1 (3), m g h;
//        1 a torque-free body, params = I (3), I^-1 (3);
//        2 kinematics, params = amplitude (3), rate, phase (3).
#include <cstring>

#include "dop853.hpp"
#include "models.hpp"

namespace {

template <class M>
int run(const M& m, double t0, double t1, const double* y0, double rtol, double atol,
        long long repeat, double* y_out, long long* counts) {
    engine::Counts c{0, 0, 0, 0};
    for (long long r = 0; r < repeat; ++r) {        // repeat: the same run, timed as a batch
        double y[M::n];
        std::memcpy(y, y0, sizeof y);
        c = engine::integrate(m, t0, t1, y, rtol, atol);
        std::memcpy(y_out, y, sizeof y);
        __asm__ __volatile__("" : : "r"(y_out) : "memory");   // keep every run
    }
    counts[0] = c.accepted;
    counts[1] = c.rejected;
    counts[2] = c.nfev;
    return c.status;
}

engine::LagrangeTop top(const double* p) {
    return {{p[0], p[1], p[2]}, {p[3], p[4], p[5]}, p[6]};
}

engine::FreeBody free_body(const double* p) { return {{p[0], p[1], p[2]}, {p[3], p[4], p[5]}}; }

engine::Kinematics kinematics(const double* p) {
    return {{p[0], p[1], p[2]}, p[3], {p[4], p[5], p[6]}};
}

}  // namespace

extern "C" {

// Integrate from t0 to t1 `repeat` times (OUT: y_out, counts = accepted, rejected, nfev);
// returns 0, or a failure status of engine::Counts, or -1 for an unknown model.
int engine_dop853(int model, const double* params, double t0, double t1, const double* y0,
                  double rtol, double atol, long long repeat, double* y_out, long long* counts) {
    switch (model) {
        case 0: return run(top(params), t0, t1, y0, rtol, atol, repeat, y_out, counts);
        case 1: return run(free_body(params), t0, t1, y0, rtol, atol, repeat, y_out, counts);
        case 2: return run(kinematics(params), t0, t1, y0, rtol, atol, repeat, y_out, counts);
        default: return -1;
    }
}

// One evaluation of a model's right-hand side (OUT: dy)
int engine_rhs(int model, const double* params, double t, const double* y, double* dy) {
    switch (model) {
        case 0: top(params)(t, y, dy); return 0;
        case 1: free_body(params)(t, y, dy); return 0;
        case 2: kinematics(params)(t, y, dy); return 0;
        default: return -1;
    }
}

// The coefficients as compiled (OUT: a (12 x 12), b, c, e5, e3 (12 each): 192 doubles)
void engine_table(double* out) {
    using engine::DOP853;
    std::memcpy(out, DOP853::a, sizeof DOP853::a);
    std::memcpy(out + 144, DOP853::b, sizeof DOP853::b);
    std::memcpy(out + 156, DOP853::c, sizeof DOP853::c);
    std::memcpy(out + 168, DOP853::e5, sizeof DOP853::e5);
    std::memcpy(out + 180, DOP853::e3, sizeof DOP853::e3);
}

}  // extern "C"
