// The sums of an embedded Runge-Kutta pair's dense output (rotode/erk.pxd), with the state size
// n known at compile time for the states the drivers integrate (4: a quaternion, 7: a
// quaternion and a body angular velocity; 3 and 6: the rotation vector of a Runge-Kutta-
// Munthe-Kaas step, and the body angular velocity); N = 0 is the same loop for any other n
// given at run time, over blocks of at most 8 components (each component's sum is the same).
//
// Each sum adds the same products in the same order as the plain loops of erk.pxd would
// (stage by stage, starting from +0.0; the build has -ffp-contract=off), so every value is
// bit for bit what a loop over n gives; the fixed size lets the compiler keep the n
// accumulators of a stage in registers and add them side by side instead of one chain per
// component (the sums are latency-bound).  Hairer, Norsett & Wanner, "Solving Ordinary
// Differential Equations I" (2nd ed., 1993), sec. II.6 (continuous extensions) and II.10
// (DOP853's dense output: three extra stages and a degree-7 polynomial).
#pragma once

namespace rotode {

const int ERK_HPP_BLOCK = 8;   // components summed side by side when n is a run-time value

// the components of a block: N, or at most ERK_HPP_BLOCK of the n - off left when N == 0
template <int N> constexpr int erk_size(int n, int off) {
    return N > 0 ? N : (n - off < ERK_HPP_BLOCK ? n - off : ERK_HPP_BLOCK);
}
template <int N> constexpr int erk_room() { return N > 0 ? N : ERK_HPP_BLOCK; }

// ys = y + h sum_c a[cols[c]] K[cols[c]] (K: rows of n), components off.. of one block
template <int N>
inline void erk_stage_state_n(int n, int off, int ncols, const int* cols, const double* a,
                              const double* K, double h, const double* y, double* ys) {
    const int m = erk_size<N>(n, off);
    double acc[erk_room<N>()];
    for (int k = 0; k < m; ++k) acc[k] = 0.0;
    for (int c = 0; c < ncols; ++c) {
        const int j = cols[c];
        const double w = a[j];
        const double* Kj = K + j * n + off;
        for (int k = 0; k < m; ++k) acc[k] = acc[k] + w * Kj[k];
    }
    for (int k = 0; k < m; ++k) ys[off + k] = y[off + k] + h * acc[k];
}

inline void erk_stage_state(int n, int ncols, const int* cols, const double* a,
                            const double* K, double h, const double* y, double* ys) {
    switch (n) {
        case 3: erk_stage_state_n<3>(n, 0, ncols, cols, a, K, h, y, ys); return;
        case 4: erk_stage_state_n<4>(n, 0, ncols, cols, a, K, h, y, ys); return;
        case 6: erk_stage_state_n<6>(n, 0, ncols, cols, a, K, h, y, ys); return;
        case 7: erk_stage_state_n<7>(n, 0, ncols, cols, a, K, h, y, ys); return;
        default:
            for (int off = 0; off < n; off += ERK_HPP_BLOCK)
                erk_stage_state_n<0>(n, off, ncols, cols, a, K, h, y, ys);
            return;
    }
}

// out[m n + k] = h sum_c D[j sj + m sm] K[j][k], m = 0..3, j = cols[c] (four rows: erk.pxd's
// ERK_MAX_POWERS, the most powers of a standard pair's dense output, and DOP853's rows 3..6)
template <int N>
inline void erk_dense_rows_n(int n, int off, int ncols, const int* cols, const double* D,
                             int sj, int sm, const double* K, double h, double* out) {
    const int m = erk_size<N>(n, off);
    double a0[erk_room<N>()], a1[erk_room<N>()], a2[erk_room<N>()], a3[erk_room<N>()];
    for (int k = 0; k < m; ++k) a0[k] = a1[k] = a2[k] = a3[k] = 0.0;
    for (int c = 0; c < ncols; ++c) {
        const int j = cols[c];
        const double d0 = D[j * sj], d1 = D[j * sj + sm], d2 = D[j * sj + 2 * sm],
                     d3 = D[j * sj + 3 * sm];
        const double* Kj = K + j * n + off;
        for (int k = 0; k < m; ++k) {
            a0[k] = a0[k] + d0 * Kj[k];
            a1[k] = a1[k] + d1 * Kj[k];
            a2[k] = a2[k] + d2 * Kj[k];
            a3[k] = a3[k] + d3 * Kj[k];
        }
    }
    for (int k = 0; k < m; ++k) {
        out[off + k] = h * a0[k];
        out[n + off + k] = h * a1[k];
        out[2 * n + off + k] = h * a2[k];
        out[3 * n + off + k] = h * a3[k];
    }
}

inline void erk_dense_rows(int n, int ncols, const int* cols, const double* D, int sj, int sm,
                           const double* K, double h, double* out) {
    switch (n) {
        case 3: erk_dense_rows_n<3>(n, 0, ncols, cols, D, sj, sm, K, h, out); return;
        case 4: erk_dense_rows_n<4>(n, 0, ncols, cols, D, sj, sm, K, h, out); return;
        case 6: erk_dense_rows_n<6>(n, 0, ncols, cols, D, sj, sm, K, h, out); return;
        case 7: erk_dense_rows_n<7>(n, 0, ncols, cols, D, sj, sm, K, h, out); return;
        default:
            for (int off = 0; off < n; off += ERK_HPP_BLOCK)
                erk_dense_rows_n<0>(n, off, ncols, cols, D, sj, sm, K, h, out);
            return;
    }
}

// DOP853's interpolant at x: y + F0 x + F1 x(1-x) + F2 x^2(1-x) + ... (rows F[r n + k]),
// nested from the highest row as SciPy's Dop853DenseOutput evaluates it
template <int N>
inline void erk_dop853_eval_n(int n, int off, double x, const double* y, const double* F,
                              double* out) {
    const int m = erk_size<N>(n, off);
    const double u = 1.0 - x;
    double acc[erk_room<N>()];
    for (int k = 0; k < m; ++k) acc[k] = 0.0;
    for (int r = 0; r < 7; ++r) {
        const double s = r % 2 == 0 ? x : u;
        const double* Fr = F + (6 - r) * n + off;
        for (int k = 0; k < m; ++k) acc[k] = (acc[k] + Fr[k]) * s;
    }
    for (int k = 0; k < m; ++k) out[off + k] = y[off + k] + acc[k];
}

inline void erk_dop853_eval(int n, double x, const double* y, const double* F, double* out) {
    switch (n) {
        case 3: erk_dop853_eval_n<3>(n, 0, x, y, F, out); return;
        case 4: erk_dop853_eval_n<4>(n, 0, x, y, F, out); return;
        case 6: erk_dop853_eval_n<6>(n, 0, x, y, F, out); return;
        case 7: erk_dop853_eval_n<7>(n, 0, x, y, F, out); return;
        default:
            for (int off = 0; off < n; off += ERK_HPP_BLOCK)
                erk_dop853_eval_n<0>(n, off, x, y, F, out);
            return;
    }
}

}  // namespace rotode
