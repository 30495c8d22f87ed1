// The adaptive Magnus methods (magnus6, magnus8 under error control) on queues of quaternion
// kinematics runs, one body per SIMD lane, each lane with its own t, h, decision, counters and
// status, refilled from the queue when its body ends; and with one lane (V = double) the
// specialised engine's run of one body.  Both do what the driver's controlled loop does with
// rotode/kinematic.pyx's Magnus trial step (`_magnus_trial`, `_magnus_dense`, `_magnus_first`,
// `_accept_local`), in its order, so that a body's rows, counters and status are its single
// run's bits on every path (-ffp-contract=off).
//
// A step from the base qb: Omega of the method's Gauss nodes (rotode/_magnus.hpp, orders 6 and 8)
// and of its embedded Magnus method on its own nodes (orders 4 and 6); the error is the RMS of
// their difference scaled by atol + max(|Omega|, 1) rtol (an orientation error, as RKMK's); the
// trial's rotation |Omega| is bounded by `rkmk_max_step_angle`; the controller is the engine's
// (`engine::decide_step`); a row inside an accepted step is the method's own Omega over [t, tt]
// (not an interpolant); after the step qb <- qb exp(Omega/2) (body) or exp(Omega/2) qb (world),
// retracted.  In lane vectors: the rates at the nodes (a Sinusoid's sines lane by lane, libm's),
// both Omegas, the error's terms, the base's update.  Lane by lane, with the scalar functions:
// a body's start (its first row, the first step's pow), the error's and the angle's sqrt, the
// decision, the rows.
//
// References: Blanes, Casas & Ros, "Improved high order integrators based on the Magnus
// expansion", BIT 40 (2000) 434-450; Hairer, Norsett & Wanner, "Solving Ordinary Differential
// Equations I" (2nd ed., 1993), sec. II.4 (the controller).
#pragma once

#include <cmath>
#include <cstddef>

#include "_lanes_erk.hpp"
#include "_magnus.hpp"

namespace rotode {

// An adaptive Magnus method (filled by rotode/kinematic.pyx from the registry): its Gauss nodes,
// those of its embedded method, and the controller's exponent -1 / (the estimate's order + 1).
struct MagnusMethod {
    int stages, estages;
    double c[4], ec[4];
    double exponent;
};

namespace lanes {

// Omega of the Magnus method of S Gauss nodes (2, 3, 4: orders 4, 6, 8) from the rates ws at its
// nodes over the step h (a double, or one per lane) (OUT: om[3])
template <int S, bool World, class V, class H>
ROTODE_INLINE void magnus_rotvec(V (*ws)[3], const H& h, V* om) {
    if constexpr (S == 2) magnus::order4(ws[0], ws[1], h, World, om);
    else if constexpr (S == 3) magnus::order6(ws[0], ws[1], ws[2], h, World, om);
    else magnus::order8(ws[0], ws[1], ws[2], ws[3], h, World, om);
}

// Omega over [t, t + h] of the method of S nodes c, w(t) of kind W on the parameters p (a
// KinParams, or KinLanes: one body per lane) (OUT: om[3])
template <int S, int W, bool World, class P, class V, class H>
ROTODE_INLINE void magnus_step(const P& p, const double* c, const H& t, const H& h, V* om) {
    V ws[S][3];
    for (int s = 0; s < S; ++s) kin_omega_lanes<W>(p, t + c[s] * h, ws[s]);
    magnus_rotvec<S, World>(ws, h, om);
}

// The runs of the queue runs[0 .. nb - 1] (parameters p[j], or p[0] for all when `shared`; one
// rate kind W and frame) by the adaptive Magnus method m of S nodes, L at a time (OUT: each run's
// rows, counters and status; evals[j]: body j's evaluations of w, as kinematic.pyx's `_omega`
// counts them).  run.nfev counts as the driver's loop does: the method's and the estimate's
// nodes for every trial step and every row inside a step.
template <int S, int W, bool World, int L>
ROTODE_INLINE void magnus_lanes(const MagnusMethod& m, const KinParams* p, bool shared,
                                bool resume, EngineRun* runs, std::ptrdiff_t nb,
                                std::ptrdiff_t* evals) {
    using V = Lanes<L>;
    typedef KinRkmkModel<W, World> One;      // q = qb exp(v/2): its begin, rows and base
    constexpr int E = S - 1;                 // the embedded method's nodes
    KinLanes<V> lp;
    V qb[4], atol[3], rtol, t, h, one, zero;
    LaneBody lb[L];
    EngineRun* cur[L];                       // each lane's run (evals' index)
    const KinParams* own[L];
    std::ptrdiff_t om[L];                    // each lane's body's evaluations of w
    bool stop = false;
    std::ptrdiff_t next = 0;
    models::splat(one, 1.0);
    models::splat(zero, 0.0);
    gather_params(p, true, 1, &lp);          // every lane valid before any body is in it
    for (int i = 0; i < 4; ++i) qb[i] = i == 0 ? one : zero;
    for (int c = 0; c < 3; ++c) atol[c] = one;
    rtol = zero;
    t = zero;
    h = zero;
    for (int l = 0; l < L; ++l) {
        lb[l].r = nullptr;
        cur[l] = nullptr;
        own[l] = p;
        om[l] = 0;
    }
    // lane l's body ended (its evaluations of w recorded)
    const auto ended = [&](int l) { evals[cur[l] - runs] = om[l]; };
    // body `run` of parameters q begins in lane l (the driver's `_adaptive_start` and
    // `_magnus_first`); false: it ended there
    const auto start = [&](int l, const KinParams& q, EngineRun* run) {
        EngineRun& r = *run;
        LaneBody& b = lb[l];
        const One o{q, resume, {}};
        double z[3];
        cur[l] = run;
        int st = begin_body(o, run, b, z);
        om[l] = b.stores;                   // (the row at t0 evaluates w)
        if (st == ENGINE_OK) {
            if (r.first_step > 0.0) {
                b.h_abs = r.first_step;
            } else {            // a rotation of 0.1 tol^(1/(p+1)) at the initial rate
                double w[3];
                kin_omega<W>(q, b.t, w);
                ++om[l];
                const double rate = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
                const double angle = 0.1 * std::pow(r.atol[0] + r.rtol,
                                                    1.0 / (S == 3 ? 5.0 : 7.0));
                b.h_abs = std::fmin(std::fabs(b.tf - b.t), r.max_step);
                if (rate * b.h_abs > angle) b.h_abs = angle / rate;
            }
        }
        if (st != ENGINE_OK) {
            end_body<4>(b, st);
            ended(l);
            return false;
        }
        for (int i = 0; i < 4; ++i) set(qb[i], l, o.qb[i]);
        for (int c = 0; c < 3; ++c) set(atol[c], l, r.atol[c]);
        set(rtol, l, r.rtol);
        set_params(lp, l, q);
        own[l] = &q;
        return true;
    };
    const auto fill = [&](int l) {
        while (lb[l].r == nullptr && next < nb) {
            const KinParams& q = p[shared ? 0 : next];
            EngineRun* run = runs + next++;
            if (stop) {
                cur[l] = run;
                om[l] = 0;
                interrupted_body<4>(run, lb[l]);
                ended(l);
                continue;
            }
            start(l, q, run);
        }
    };
    // lane l's rows inside its accepted step t -> t_new of state znew (the driver's
    // `_step_outputs`: Omega over [t, tt] of the method, or znew at t_new); false: it ended
    const auto rows = [&](int l, const double* znew) {
        LaneBody& b = lb[l];
        EngineRun& r = *b.r;
        One o{*own[l], false, {}};
        for (int i = 0; i < 4; ++i) o.qb[i] = get(qb[i], l);
        while (b.slot < r.m && b.direction * (r.t[r.save[b.slot]] - b.t_new) <= 0.0) {
            const double tt = r.t[r.save[b.slot]];
            double* yrow = r.yo + b.slot * 4;
            double* wrow = r.wo + b.slot * 3;
            if (tt == b.t_new) {
                o.store(tt, znew, yrow, wrow);
            } else {
                double zd[3];
                b.nfev += S + E;            // (the driver counts the trial's evaluations)
                om[l] += S;
                magnus_step<S, W, World>(*own[l], m.c, b.t, tt - b.t, zd);
                o.store(tt, zd, yrow, wrow);
            }
            ++b.stores;
            ++om[l];
            if (!row_stored<4>(b, yrow, wrow)) {
                ended(l);
                return false;
            }
        }
        step_taken(b);
        return true;
    };
    for (;;) {
        int live = 0;
        for (int l = 0; l < L; ++l) {
            for (;;) {
                fill(l);
                if (lb[l].r == nullptr) break;
                if (before_trial<4>(lb[l], &stop)) break;
                ended(l);
            }
            if (lb[l].r == nullptr) continue;
            ++live;
            lb[l].nfev += S + E;
            om[l] += S + E;
            set(t, l, lb[l].t);
            set(h, l, lb[l].h);
        }
        if (live == 0) break;
        // the trial steps: Omega, the embedded Omega, the error's sum, the rotation's square
        V znew[3], low[3], acc = zero;
        magnus_step<S, W, World>(lp, m.c, t, h, znew);
        magnus_step<E, W, World>(lp, m.ec, t, h, low);
        for (int c = 0; c < 3; ++c) {
            V scale;                                    // atol + fmax(|Omega|, 1) rtol
            error_scale<true>(atol[c], znew[c], znew[c], rtol, 1.0, scale);
            const V e = (znew[c] - low[c]) / scale;
            acc = acc + e * e;
        }
        const V x = znew[0] * znew[0] + znew[1] * znew[1] + znew[2] * znew[2];
        Mask<V> accepted = zero != zero;
        for (int l = 0; l < L; ++l) {
            if (lb[l].r == nullptr) continue;
            const double err = std::sqrt(get(acc, l) / 3.0), angle = std::sqrt(get(x, l));
            if (!engine::decide_step(err, m.exponent, angle, rkmk_max_step_angle(), lb[l].h_abs,
                                     lb[l].retried, lb[l].rejected))
                continue;
            double z[3];
            lane_of(znew, 3, l, z);
            if (!engine::finite(z, std::integral_constant<int, 3>{})) {
                end_body<4>(lb[l], ENGINE_NONFINITE);
                ended(l);
                continue;
            }
            if (rows(l, z)) set_mask<V>(accepted, l, true);
        }
        // the accepted lanes' base: qb <- qb exp(Omega/2) or exp(Omega/2) qb, retracted
        V e[4], q[4];
        exp_half_v(znew, 1.0, e);
        if constexpr (World) rkmk_quat_mul(e, qb, q);
        else rkmk_quat_mul(qb, e, q);
        rkmk_retract(q);
        for (int i = 0; i < 4; ++i) qb[i] = accepted ? q[i] : qb[i];
    }
}

// One function per instruction set and instantiation, compiled for that target (the AVX2
// instance, as the adaptive lanes of rotode/_lanes_erk.hpp, also serves AVX-512 machines).
#define ROTODE_MAGNUS_LANE_ENTRY(name, attrs, L)                                             \
    template <int S, int W, bool World>                                                      \
    attrs __attribute__((noinline)) void name(const MagnusMethod& m, const KinParams* p,     \
                                              bool shared, bool resume, EngineRun* runs,     \
                                              std::ptrdiff_t nb, std::ptrdiff_t* evals) {    \
        magnus_lanes<S, W, World, L>(m, p, shared, resume, runs, nb, evals);                 \
    }

ROTODE_MAGNUS_LANE_ENTRY(magnus_one, , 1)
#ifdef ROTODE_LANES_X86
ROTODE_MAGNUS_LANE_ENTRY(magnus_avx2, __attribute__((target("avx2"))), 4)
#endif
#undef ROTODE_MAGNUS_LANE_ENTRY

template <int S, int W, bool World>
inline void magnus_isa(int L, const MagnusMethod& m, const KinParams* p, bool shared,
                       bool resume, EngineRun* runs, std::ptrdiff_t nb, std::ptrdiff_t* evals) {
#ifdef ROTODE_LANES_X86
    if (L == 4) return magnus_avx2<S, W, World>(m, p, shared, resume, runs, nb, evals);
#endif
    magnus_one<S, W, World>(m, p, shared, resume, runs, nb, evals);   // body by body: one lane
}

template <int S>
inline void magnus_class(int L, const KinClass& c, const MagnusMethod& m, const KinParams* p,
                         bool shared, bool resume, EngineRun* runs, std::ptrdiff_t nb,
                         std::ptrdiff_t* evals) {
    if (c.omega == OMEGA_CONSTANT) {
        if (c.world) magnus_isa<S, OMEGA_CONSTANT, true>(L, m, p, shared, resume, runs, nb, evals);
        else magnus_isa<S, OMEGA_CONSTANT, false>(L, m, p, shared, resume, runs, nb, evals);
    } else {
        if (c.world) magnus_isa<S, OMEGA_SINUSOID, true>(L, m, p, shared, resume, runs, nb, evals);
        else magnus_isa<S, OMEGA_SINUSOID, false>(L, m, p, shared, resume, runs, nb, evals);
    }
}

}  // namespace lanes

// The error-controlled runs of the queue of nb bodies runs[0 .. nb - 1] (parameters p[0 .. nb -
// 1], or p[0] for every body when `shared`) by the adaptive Magnus method m (3 or 4 nodes; its
// embedded method 2 or 3), on the instruction set `isa` (checked by the caller with
// `lanes_supported`; ISA_SCALAR: body by body); resume: y0 the row stored at the end of an
// accepted step of an earlier call.  A queue of one class (rate kind, frame) of more than half
// the lanes' worth of bodies runs in the 4 lanes of the AVX2 kernel where `isa` is AVX2 or
// AVX-512, any other body by body by the one-lane instance (the same bits) (OUT: each run's rows,
// counters, status; evals[j], body j's evaluations of w).  Returns the lanes the queue ran in.
inline int lanes_magnus(int isa, const MagnusMethod& m, bool resume, const KinParams* p,
                        bool shared, EngineRun* runs, std::ptrdiff_t nb, std::ptrdiff_t* evals) {
    using namespace lanes;
    const auto c = lane_class(p, LANES_RK3);
    bool same = true;                    // (the norm gain does not enter a Magnus step)
    for (std::ptrdiff_t l = 1; l < nb && !shared; ++l) {
        const auto d = lane_class(p + l, LANES_RK3);
        same = same && d.omega == c.omega && d.world == c.world;
    }
    if (!same) {                         // (each body its own class: one lane, body by body)
        for (std::ptrdiff_t j = 0; j < nb; ++j) {
            const auto d = lane_class(p + j, LANES_RK3);
            if (m.stages == 3) magnus_class<3>(1, d, m, p + j, true, resume, runs + j, 1,
                                               evals + j);
            else magnus_class<4>(1, d, m, p + j, true, resume, runs + j, 1, evals + j);
        }
        return 1;
    }
    int L = erk_lanes_width(isa);
    if (!(L > 1 && 2 * nb > L)) L = 1;   // (one lane takes the queue's bodies one by one)
    if (m.stages == 3) magnus_class<3>(L, c, m, p, shared, resume, runs, nb, evals);
    else magnus_class<4>(L, c, m, p, shared, resume, runs, nb, evals);
    return L;
}

}  // namespace rotode
