// A hand-written struct-of-arrays loop: rk4 on N Lagrange tops (rigid bodies with principal
// inertia I, gravity m g along world -z, the centre of mass at height h on body z), blocks of
// B = 64 bodies, each operation a loop over the block's lanes that the compiler vectorises
// (built by benchmarks/engine/build.py `batch_loop` with rotode's flags plus -mavx2: no FMA
// contraction).  The limit rotode's lane kernels (rotode/_lanes.hpp) are measured against in
// benchmarks/bench_batch.py.
//
// The operations are those of rotode's model (rotode/_models.hpp `rigid_rhs` with the torque
// kind TORQUE_GRAVITY_AXIS and a principal inertia) and of its rk4 step, in the same order, so
// its results are rotode's to the bit (the benchmark checks it).  Quaternions scalar first,
// Hamilton product, body to world; w in the body frame.
#include <cstddef>

namespace {

constexpr int B = 64;

struct Top {
    double I[3], Iinv[3], mg, h;
};

// [q, w]' of every lane (OUT: dy, 7 rows of B)
inline void rhs(const Top& p, const double (*y)[B], double (*dy)[B]) {
    for (int l = 0; l < B; ++l) {
        const double q0 = y[0][l], q1 = -y[1][l], q2 = -y[2][l], q3 = -y[3][l];
        const double v2 = -p.mg;
        const double s = 2.0 / (q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3);
        const double c0 = q2 * v2, c1 = -(q1 * v2);
        const double d0 = s * (q0 * c0 - q3 * c1), d1 = s * (q0 * c1 + q3 * c0);
        const double t0 = -(p.h * d1), t1 = p.h * d0, t2 = 0.0;
        const double w0 = y[4][l], w1 = y[5][l], w2 = y[6][l];
        dy[0][l] = 0.5 * (-y[1][l] * w0 - y[2][l] * w1 - y[3][l] * w2);
        dy[1][l] = 0.5 * (y[0][l] * w0 + y[2][l] * w2 - y[3][l] * w1);
        dy[2][l] = 0.5 * (y[0][l] * w1 - y[1][l] * w2 + y[3][l] * w0);
        dy[3][l] = 0.5 * (y[0][l] * w2 + y[1][l] * w1 - y[2][l] * w0);
        const double i0 = p.I[0] * w0, i1 = p.I[1] * w1, i2 = p.I[2] * w2;
        dy[4][l] = p.Iinv[0] * (t0 - (w1 * i2 - w2 * i1));
        dy[5][l] = p.Iinv[1] * (t1 - (w2 * i0 - w0 * i2));
        dy[6][l] = p.Iinv[2] * (t2 - (w0 * i1 - w1 * i0));
    }
}

inline void rk4(const Top& p, double h, double (*z)[B]) {
    double k1[7][B], k2[7][B], k3[7][B], k4[7][B], zt[7][B];
    rhs(p, z, k1);
    for (int c = 0; c < 7; ++c)
        for (int l = 0; l < B; ++l) zt[c][l] = z[c][l] + 0.5 * h * k1[c][l];
    rhs(p, zt, k2);
    for (int c = 0; c < 7; ++c)
        for (int l = 0; l < B; ++l) zt[c][l] = z[c][l] + 0.5 * h * k2[c][l];
    rhs(p, zt, k3);
    for (int c = 0; c < 7; ++c)
        for (int l = 0; l < B; ++l) zt[c][l] = z[c][l] + h * k3[c][l];
    rhs(p, zt, k4);
    for (int c = 0; c < 7; ++c)
        for (int l = 0; l < B; ++l)
            z[c][l] = z[c][l] + h * (k1[c][l] + 2.0 * (k2[c][l] + k3[c][l]) + k4[c][l]) / 6.0;
}

}  // namespace

// N tops from the rows y0 (N, 7) over the grid t (steps + 1 times: rotode's grid of dt,
// whose steps t[j + 1] - t[j] differ from dt by round-off); the final rows (OUT: y (N, 7)).
// params: I (3), m g, h.
extern "C" void batch_rk4_top(long n_bodies, const double* y0, const double* params,
                              const double* t, long steps, double* y) {
    Top p;
    for (int i = 0; i < 3; ++i) {
        p.I[i] = params[i];
        p.Iinv[i] = 1.0 / params[i];
    }
    p.mg = params[3];
    p.h = params[4];
    alignas(64) double z[7][B];
    for (long b0 = 0; b0 < n_bodies; b0 += B) {
        const long nb = n_bodies - b0 < B ? n_bodies - b0 : B;
        for (int l = 0; l < B; ++l)
            for (int c = 0; c < 7; ++c) z[c][l] = y0[7 * (b0 + (l < nb ? l : 0)) + c];
        for (long j = 0; j < steps; ++j) rk4(p, t[j + 1] - t[j], z);
        for (int l = 0; l < nb; ++l)
            for (int c = 0; c < 7; ++c) y[7 * (b0 + l) + c] = z[c][l];
    }
}
