// The state and its tangent in one error-controlled run of the specialised engine (issue 30,
// docs/sensitivity.md): `erk_tangent_body<P>(f, g, run, sens)` is `erk_body<P>(f, run)` of
// rotode/_engine.hpp with the state carried as dual numbers (rotode/_dual.hpp), whose d parts
// are the derivative of the state with respect to up to ROTODE_DUAL_N directions of the initial
// state.  Forward mode through the discrete map (internal differentiation: Bock 1981; Hairer,
// Norsett & Wanner I, 2nd ed., sec. II.6): every stage, the dense output and the store act on
// duals, so the d parts are the tangent Y carried by the same stages (Y' = J(t, y) Y).
//
// The steps are the primal run's: the value part of every dual operation is the double
// operation on the value parts, to the bit, so the stage values, the error estimate (computed
// on the value parts alone, with the engine's own `error_norm`) and hence the accepted steps
// and the stored rows are the plain run's bits (tests/test_sensitivity.py compares them).  The
// sensitivities do not enter the error norm.  A rejected trial step costs its dual stages too
// (few at the tolerances where sensitivities are asked for).
//
// The dual rigid body `DualRigidModel<T, Diag, Gain>` is RigidBodyModel of rotode/_models.hpp
// written on `dual` with the same products in the same order (its value part is that model's
// f, bit for bit): kept here, beside the double model, so that the engine's double path stays
// untouched; a value-type template of the model would make it one source.
#pragma once

#include <cmath>
#include <cstddef>
#include <utility>

#include "_dual.hpp"
#include "_engine.hpp"
#include "_models.hpp"

namespace rotode {

// seeded directions of the rigid body's y0: [dtheta0 (3), dw0 (3)]
constexpr int TANGENT_DIRS = 6;

namespace tangent {

// sum_j W(j) K[j][k] on duals over the nonzero weights, in order (engine::wsum's value part)
template <class W, int N, int... J>
ROTODE_INLINE dual wsum(const dual (*K)[N], int k, std::integer_sequence<int, J...>) {
    dual acc;
    bool first = true;
    ((W::at(J) != 0.0
          ? (first ? (void)(acc = W::at(J) * K[J][k], first = false)
                   : (void)(acc = acc + W::at(J) * K[J][k]))
          : (void)0),
     ...);
    return acc;
}

template <class P, int N, int R>
ROTODE_INLINE void stage_state(const dual (*K)[N], double h, const dual* y, dual* ys) {
    for (int k = 0; k < N; ++k)
        ys[k] = y[k] + h * wsum<engine::RowA<P, R>>(K, k, std::make_integer_sequence<int, R>{});
}

template <class P, class G, int C, int... R>
ROTODE_INLINE void step_stages(const G& g, double t, double h, const dual* y, dual (*K)[C],
                               std::integer_sequence<int, R...>) {
    dual ys[C];
    ((stage_state<P, C, R + 1>(K, h, y, ys),
      g(P::c[R + 1] == 1.0 ? t + h : t + P::c[R + 1] * h, ys, K[R + 1])),
     ...);
}

template <class P, class G, int C, int... R>
ROTODE_INLINE void dense_extra(const G& g, double t, double h, const dual* y, dual (*K)[C],
                        std::integer_sequence<int, R...>) {
    dual ys[C];
    ((stage_state<P, C, P::s + 1 + R>(K, h, y, ys),
      g(t + P::c[P::s + 1 + R] * h, ys, K[P::s + 1 + R])),
     ...);
}

template <class P, int C, int... R>
ROTODE_INLINE void dense_rows(const dual (*K)[C], double h, dual* F, std::integer_sequence<int, R...>) {
    constexpr int S = P::kind == 0 ? P::s + 1 : P::s_dense;
    constexpr auto cols = std::make_integer_sequence<int, S>{};
    constexpr int first = P::kind == 0 ? 0 : 3;
    for (int k = 0; k < C; ++k) {
        if constexpr (P::kind == 0)
            ((F[(first + R) * C + k] = h * wsum<engine::RowP<P, R>>(K, k, cols)), ...);
        else
            ((F[(first + R) * C + k] = h * wsum<engine::RowD<P, R>>(K, k, cols)), ...);
    }
}

// engine::dense_prepare on duals (OUT: F, DOP853's extra stages in K)
template <class P, class G, int C>
ROTODE_INLINE void dense_prepare(const G& g, double t, double h, const dual* y, const dual* ynew,
                          dual (*K)[C], dual* F) {
    if constexpr (P::kind == 0) {
        dense_rows<P>(K, h, F, std::make_integer_sequence<int, P::degree>{});
    } else {
        dense_extra<P>(g, t, h, y, K, std::make_integer_sequence<int, P::s_dense - P::s - 1>{});
        for (int k = 0; k < C; ++k) {
            const dual dy = ynew[k] - y[k];
            F[k] = dy;
            F[C + k] = h * K[0][k] - dy;
            F[2 * C + k] = 2.0 * dy - h * (K[P::s][k] + K[0][k]);
        }
        dense_rows<P>(K, h, F, std::make_integer_sequence<int, 4>{});
    }
}

// engine::dense_eval on duals (OUT: out)
template <class P, int C>
ROTODE_INLINE void dense_eval(double x, const dual* y, const dual* F, dual* out) {
    if constexpr (P::kind == 0) {
        for (int k = 0; k < C; ++k) {
            dual acc;
            double p = 1.0;
            for (int r = 0; r < P::degree; ++r) {
                p = p * x;
                acc = acc + F[r * C + k] * p;
            }
            out[k] = y[k] + acc;
        }
    } else {
        const double u = 1.0 - x;
        for (int k = 0; k < C; ++k) {
            dual acc;
            for (int r = 0; r < 7; ++r) acc = (acc + F[(6 - r) * C + k]) * (r % 2 == 0 ? x : u);
            out[k] = y[k] + acc;
        }
    }
}

// The rigid body's seeded state: q0 and w0 with d part j < 3 the right perturbation
// dq = q0 (0, e_j / 2) and j >= 3 dw = e_(j - 3) (OUT: z[7])
ROTODE_INLINE void seed_rigid(const double* y0, dual* z) {
    for (int k = 0; k < 7; ++k) z[k] = dual(y0[k]);
    for (int j = 0; j < 3; ++j) {
        double v[3] = {0.0, 0.0, 0.0};
        v[j] = 0.5;
        // q0 (0, v)
        z[0].d[j] = -y0[1] * v[0] - y0[2] * v[1] - y0[3] * v[2];
        z[1].d[j] = y0[0] * v[0] + y0[2] * v[2] - y0[3] * v[1];
        z[2].d[j] = y0[0] * v[1] - y0[1] * v[2] + y0[3] * v[0];
        z[3].d[j] = y0[0] * v[2] + y0[1] * v[1] - y0[2] * v[0];
        z[4 + j].d[3 + j] = 1.0;
    }
}

// The tangent coordinates of a rigid body's dual state: dtheta = 2 vec(q^-1 dq) (q of any
// nonzero length: q^-1 = conj(q) / |q|^2), dw (OUT: out[6 * 6], row-major (component, direction))
ROTODE_INLINE void store_rigid(const dual* z, double* out) {
    const double q0 = z[0].v, q1 = -z[1].v, q2 = -z[2].v, q3 = -z[3].v;
    const double n2 = q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3;
    for (int j = 0; j < TANGENT_DIRS; ++j) {
        const double a0 = z[0].d[j], a1 = z[1].d[j], a2 = z[2].d[j], a3 = z[3].d[j];
        // vec(conj(q) dq)
        const double u1 = q0 * a1 + q1 * a0 + q2 * a3 - q3 * a2;
        const double u2 = q0 * a2 - q1 * a3 + q2 * a0 + q3 * a1;
        const double u3 = q0 * a3 + q1 * a2 - q2 * a1 + q3 * a0;
        out[0 * TANGENT_DIRS + j] = 2.0 * u1 / n2;
        out[1 * TANGENT_DIRS + j] = 2.0 * u2 / n2;
        out[2 * TANGENT_DIRS + j] = 2.0 * u3 / n2;
        for (int k = 0; k < 3; ++k) out[(3 + k) * TANGENT_DIRS + j] = z[4 + k].d[j];
    }
}

inline void nan_rows(double* sens, std::ptrdiff_t from, std::ptrdiff_t to) {
    for (std::ptrdiff_t c = from * 36; c < to * 36; ++c) sens[c] = NAN;
}

}  // namespace tangent

// RigidBodyModel<T, Diag, Gain>::operator() of rotode/_models.hpp on duals (the same products
// in the same order: its value part is that f's bits).
template <int T, bool Diag, bool Gain>
struct DualRigidModel {
    RigidParams p;

    template <bool D>
    static ROTODE_INLINE void mat3_vec(const double* M, const dual* x, dual* out) {
        if constexpr (D) {
            out[0] = M[0] * x[0];
            out[1] = M[4] * x[1];
            out[2] = M[8] * x[2];
        } else {
            out[0] = M[0] * x[0] + M[1] * x[1] + M[2] * x[2];
            out[1] = M[3] * x[0] + M[4] * x[1] + M[5] * x[2];
            out[2] = M[6] * x[0] + M[7] * x[1] + M[8] * x[2];
        }
    }

    // models::world_to_body on a dual q and a constant v
    static ROTODE_INLINE void world_to_body(const dual* q, const double* v, dual* out) {
        const dual q0 = q[0], q1 = -q[1], q2 = -q[2], q3 = -q[3];
        const dual s = 2.0 / (q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3);
        const dual c0 = q2 * v[2] - q3 * v[1];
        const dual c1 = q3 * v[0] - q1 * v[2];
        const dual c2 = q1 * v[1] - q2 * v[0];
        out[0] = v[0] + s * (q0 * c0 + q2 * c2 - q3 * c1);
        out[1] = v[1] + s * (q0 * c1 + q3 * c0 - q1 * c2);
        out[2] = v[2] + s * (q0 * c2 + q1 * c1 - q2 * c0);
    }

    ROTODE_INLINE void torque(const dual* q, dual* tau) const {
        if constexpr (T == TORQUE_NONE) {
            tau[0] = 0.0;
            tau[1] = 0.0;
            tau[2] = 0.0;
        } else if constexpr (T == TORQUE_GRAVITY) {
            const double down[3] = {0.0, 0.0, -p.mg};
            dual d[3];
            world_to_body(q, down, d);
            tau[0] = p.com[1] * d[2] - p.com[2] * d[1];
            tau[1] = p.com[2] * d[0] - p.com[0] * d[2];
            tau[2] = p.com[0] * d[1] - p.com[1] * d[0];
        } else if constexpr (T == TORQUE_GRAVITY_AXIS) {
            const dual q0 = q[0], q1 = -q[1], q2 = -q[2], q3 = -q[3];
            const double v2 = -p.mg;
            const dual s = 2.0 / (q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3);
            const dual c0 = q2 * v2, c1 = -(q1 * v2);
            const dual d0 = s * (q0 * c0 - q3 * c1), d1 = s * (q0 * c1 + q3 * c0);
            tau[0] = -(p.com[2] * d1);
            tau[1] = p.com[2] * d0;
            tau[2] = 0.0;
        } else if constexpr (T == TORQUE_BODY) {
            tau[0] = p.tau[0];
            tau[1] = p.tau[1];
            tau[2] = p.tau[2];
        } else {
            world_to_body(q, p.tau, tau);
        }
    }

    ROTODE_INLINE void operator()(double, const dual* y, dual* dy) const {
        const dual* w = y + 4;
        dual tau[3];
        torque(y, tau);
        dual dq[4];
        dq[0] = -y[1] * w[0] - y[2] * w[1] - y[3] * w[2];
        dq[1] = y[0] * w[0] + y[2] * w[2] - y[3] * w[1];
        dq[2] = y[0] * w[1] - y[1] * w[2] + y[3] * w[0];
        dq[3] = y[0] * w[2] + y[1] * w[1] - y[2] * w[0];
        if constexpr (Gain) {
            const dual c =
                p.gain * (1.0 - (y[0] * y[0] + y[1] * y[1] + y[2] * y[2] + y[3] * y[3]));
            for (int i = 0; i < 4; ++i) dy[i] = 0.5 * dq[i] + c * y[i];
        } else {
            for (int i = 0; i < 4; ++i) dy[i] = 0.5 * dq[i];
        }
        if (p.gyroscopic) {
            dual Iw[3], r[3];
            mat3_vec<Diag>(p.I, w, Iw);
            r[0] = tau[0] - (w[1] * Iw[2] - w[2] * Iw[1]);
            r[1] = tau[1] - (w[2] * Iw[0] - w[0] * Iw[2]);
            r[2] = tau[2] - (w[0] * Iw[1] - w[1] * Iw[0]);
            mat3_vec<Diag>(p.Iinv, r, dy + 4);
        } else {
            mat3_vec<Diag>(p.Iinv, tau, dy + 4);
        }
    }
};

// One body of an error-controlled run of the pair P on the rigid body (f its double model, g
// the same on duals), with its 6x6 y0 sensitivity at every saved slot (OUT: sens[m * 36],
// row-major (slot, component, direction), NaN where the run did not reach; the rest as
// `erk_body`, whose loop this is, step for step).
template <class P, class M, class G>
ROTODE_INLINE int erk_tangent_body(const M& model, const G& dmodel, EngineRun* run, double* sens) {
    using namespace engine;
    constexpr int C = 7;
    constexpr int S = P::s_dense;
    EngineRun& r = *run;
    const M f = model;
    const G g = dmodel;
    double atol[C];
    for (int k = 0; k < C; ++k) atol[k] = r.atol[k];
    const double rtol = r.rtol, max_step = r.max_step;
    dual z[C], znew[C], zd[C];
    dual K[S][C];
    dual F[7 * C];
    double Kv[P::s + 1][C], zv[C], znewv[C], yd[C];
    double t = r.t[0];
    const double tf = r.t[r.n];
    const double direction = tf > t ? 1.0 : -1.0;
    constexpr double exponent = -1.0 / (P::error_order + 1);
    constexpr std::integral_constant<int, 3> THREE{};
    constexpr std::integral_constant<int, C> NC{};
    std::ptrdiff_t slot = 0;
    long long accepted = 0, rejected = 0, nfev = 0;
    int st = ENGINE_OK;
    bool t0_requested = r.t_eval && r.m > 0 && r.save[0] == 0;
    double h_abs = 0.0;
    tangent::seed_rigid(r.y0, z);
    for (int k = 0; k < C; ++k) zv[k] = z[k].v;
    if (r.m > 0 && r.save[0] == 0) {
        f.first_row(t, r.y0, zv, r.yo, r.wo);
        tangent::store_rigid(z, sens);
        if (!finite(r.yo, NC) || !finite(r.wo, THREE)) st = ENGINE_NONFINITE;
        else slot = 1;
    }
    if (st == ENGINE_OK) {
        g(t, z, K[0]);
        for (int k = 0; k < C; ++k) Kv[0][k] = K[0][k].v;
        nfev += 1;
        if (r.first_step > 0.0) {
            h_abs = r.first_step;
        } else {
            nfev += 1;
            st = initial_step<P>(f, t, zv, Kv[0], direction, std::fabs(tf - t), r, &h_abs);
        }
    }
    while (st == ENGINE_OK && direction * (tf - t) > 0.0) {
        if (--*r.countdown <= 0 && r.tick(r.tick_ctx)) {
            st = ENGINE_INTERRUPTED;
            break;
        }
        if (accepted >= r.max_steps) {
            st = ENGINE_MAX_STEPS;
            break;
        }
        const double min_step = 10.0 * std::fabs(std::nextafter(t, direction * INFINITY) - t);
        if (h_abs > max_step) h_abs = max_step;
        else if (h_abs < min_step) h_abs = min_step;
        bool retried = false;
        double t_new, h;
        for (;;) {
            if (h_abs < min_step) {
                st = ENGINE_STEP_TOO_SMALL;
                break;
            }
            t_new = t + h_abs * direction;
            if (direction * (t_new - tf) > 0.0) t_new = tf;
            h = t_new - t;
            h_abs = std::fabs(h);
            nfev += P::s;
            tangent::step_stages<P>(g, t, h, z, K, std::make_integer_sequence<int, P::s - 1>{});
            for (int k = 0; k < C; ++k)
                znew[k] = z[k] + h * tangent::wsum<RowB<P>>(
                    K, k, std::make_integer_sequence<int, P::s>{});
            g(t_new, znew, K[P::s]);
            for (int j = 1; j <= P::s; ++j)
                for (int k = 0; k < C; ++k) Kv[j][k] = K[j][k].v;
            for (int k = 0; k < C; ++k) znewv[k] = znew[k].v;
            const double err = error_norm<P>(Kv, NC, zv, znewv, h, rtol, atol);
            if (err < 1.0) {
                double factor = err == 0.0
                    ? MAX_FACTOR : std::fmin(MAX_FACTOR, SAFETY * std::pow(err, exponent));
                if (retried) factor = std::fmin(1.0, factor);
                h_abs = h_abs * factor;
                break;
            }
            h_abs = h_abs * std::fmax(MIN_FACTOR, SAFETY * std::pow(err, exponent));
            retried = true;
            ++rejected;
        }
        if (st != ENGINE_OK) break;
        if (!finite(znewv, NC)) {
            st = ENGINE_NONFINITE;
            break;
        }
        bool prepared = false;
        if (r.t_eval && (t0_requested
                         || (slot < r.m && direction * (r.t[r.save[slot]] - t_new) <= 0.0))) {
            nfev += P::s_dense - P::s - 1;
            tangent::dense_prepare<P>(g, t, h, z, znew, K, F);
            prepared = true;
        }
        t0_requested = false;
        while (slot < r.m && direction * (r.t[r.save[slot]] - t_new) <= 0.0) {
            const double tt = r.t[r.save[slot]];
            double* yrow = r.yo + slot * C;
            double* wrow = r.wo + slot * 3;
            const dual* zs = znew;
            if (tt != t_new) {
                if (!prepared) {
                    nfev += P::s_dense - P::s - 1;
                    tangent::dense_prepare<P>(g, t, h, z, znew, K, F);
                    prepared = true;
                }
                tangent::dense_eval<P, C>((tt - t) / h, z, F, zd);
                zs = zd;
            }
            for (int k = 0; k < C; ++k) yd[k] = zs[k].v;
            f.store(tt, yd, yrow, wrow);
            tangent::store_rigid(zs, sens + slot * 36);
            if (!finite(yrow, NC) || !finite(wrow, THREE)) {
                st = ENGINE_NONFINITE;
                break;
            }
            ++slot;
        }
        if (st != ENGINE_OK) break;
        for (int k = 0; k < C; ++k) {
            z[k] = znew[k];
            zv[k] = znewv[k];
            K[0][k] = K[P::s][k];
            Kv[0][k] = Kv[P::s][k];
        }
        t = t_new;
        ++accepted;
    }
    for (std::ptrdiff_t s = slot; s < r.m; ++s) {
        for (int k = 0; k < C; ++k) r.yo[s * C + k] = NAN;
        for (int k = 0; k < 3; ++k) r.wo[s * 3 + k] = NAN;
    }
    tangent::nan_rows(sens, slot, r.m);
    r.accepted = accepted;
    r.rejected = rejected;
    r.nfev = nfev;
    r.stores = 0;
    r.t_end = t;
    r.status = st;
    return st;
}

// The loop is compiled once per (pair, torque kind, inertia shape), for the baseline
// instruction set, without the norm gain (`tangent_ready` in rotode/dynamic.pyx sends a body
// with a gain to the replay of rotode/_tangent.pyx): these dual-number loops are the largest
// object code of rotode, and each instantiation costs build time (rotode/_tangent_engine.pyx
// compiles them apart).  An AVX2 clone measured about 1.4x faster per step (the dual parts'
// seven lanes vectorise) at twice the build time.
template <class P, int T, bool Diag>
inline int rigid_tangent_t(const RigidParams* p, EngineRun* run, double* sens) {
    return erk_tangent_body<P>(RigidBodyModel<T, Diag, false>{*p},
                               DualRigidModel<T, Diag, false>{*p}, run, sens);
}

template <class P, bool Diag>
inline int rigid_tangent_torque(const RigidParams* p, EngineRun* run, double* sens) {
    switch (p->torque) {
        case TORQUE_NONE: return rigid_tangent_t<P, TORQUE_NONE, Diag>(p, run, sens);
        case TORQUE_GRAVITY: return rigid_tangent_t<P, TORQUE_GRAVITY, Diag>(p, run, sens);
        case TORQUE_GRAVITY_AXIS:
            return rigid_tangent_t<P, TORQUE_GRAVITY_AXIS, Diag>(p, run, sens);
        case TORQUE_BODY: return rigid_tangent_t<P, TORQUE_BODY, Diag>(p, run, sens);
        default: return rigid_tangent_t<P, TORQUE_WORLD, Diag>(p, run, sens);
    }
}

// One body of an error-controlled rigid-body run with the pair `pair` (a PairId) and its 6x6
// y0 sensitivity at the saved slots (OUT: sens[m * 36]); -1 for an unknown pair.  The body's
// norm gain must be 0.
inline int rigid_tangent_body(int pair, const RigidParams* p, EngineRun* run, double* sens) {
    switch (pair) {
#define ROTODE_TANGENT_CASE(id, P)                                              \
        case id:                                                                 \
            return rigid_diagonal(p) ? rigid_tangent_torque<P, true>(p, run, sens) \
                                     : rigid_tangent_torque<P, false>(p, run, sens);
        ROTODE_PAIRS(ROTODE_TANGENT_CASE)
#undef ROTODE_TANGENT_CASE
        default: return -1;
    }
}

}  // namespace rotode
