// The sums of an embedded Runge-Kutta pair's dense output (rotode/erk.pxd), with the state size
// n known at compile time for the states the drivers integrate (4: a quaternion, 7: a
// quaternion and a body angular velocity; 3 and 6: the rotation vector of a Runge-Kutta-
// Munthe-Kaas step, and the body angular velocity) and a generic loop for any other n.
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

// ys = y + h sum_c a[cols[c]] K[cols[c]] (K: rows of n)
template <int N>
inline void erk_stage_state_n(int ncols, const int* cols, const double* a, const double* K,
                              double h, const double* y, double* ys) {
    double acc[N];
    for (int k = 0; k < N; ++k) acc[k] = 0.0;
    for (int c = 0; c < ncols; ++c) {
        const int j = cols[c];
        const double w = a[j];
        const double* Kj = K + j * N;
        for (int k = 0; k < N; ++k) acc[k] = acc[k] + w * Kj[k];
    }
    for (int k = 0; k < N; ++k) ys[k] = y[k] + h * acc[k];
}

inline void erk_stage_state(int n, int ncols, const int* cols, const double* a,
                            const double* K, double h, const double* y, double* ys) {
    switch (n) {
        case 3: erk_stage_state_n<3>(ncols, cols, a, K, h, y, ys); return;
        case 4: erk_stage_state_n<4>(ncols, cols, a, K, h, y, ys); return;
        case 6: erk_stage_state_n<6>(ncols, cols, a, K, h, y, ys); return;
        case 7: erk_stage_state_n<7>(ncols, cols, a, K, h, y, ys); return;
        default: break;
    }
    for (int k = 0; k < n; ++k) {
        double acc = 0.0;
        for (int c = 0; c < ncols; ++c) acc = acc + a[cols[c]] * K[cols[c] * n + k];
        ys[k] = y[k] + h * acc;
    }
}

// out[m n + k] = h sum_c D[j sj + m sm] K[j][k], m = 0..3, j = cols[c]
template <int N>
inline void erk_dense_rows_n(int ncols, const int* cols, const double* D, int sj, int sm,
                             const double* K, double h, double* out) {
    double a0[N], a1[N], a2[N], a3[N];
    for (int k = 0; k < N; ++k) a0[k] = a1[k] = a2[k] = a3[k] = 0.0;
    for (int c = 0; c < ncols; ++c) {
        const int j = cols[c];
        const double d0 = D[j * sj], d1 = D[j * sj + sm], d2 = D[j * sj + 2 * sm],
                     d3 = D[j * sj + 3 * sm];
        const double* Kj = K + j * N;
        for (int k = 0; k < N; ++k) {
            a0[k] = a0[k] + d0 * Kj[k];
            a1[k] = a1[k] + d1 * Kj[k];
            a2[k] = a2[k] + d2 * Kj[k];
            a3[k] = a3[k] + d3 * Kj[k];
        }
    }
    for (int k = 0; k < N; ++k) {
        out[k] = h * a0[k];
        out[N + k] = h * a1[k];
        out[2 * N + k] = h * a2[k];
        out[3 * N + k] = h * a3[k];
    }
}

inline void erk_dense_rows(int n, int ncols, const int* cols, const double* D, int sj, int sm,
                           const double* K, double h, double* out) {
    switch (n) {
        case 3: erk_dense_rows_n<3>(ncols, cols, D, sj, sm, K, h, out); return;
        case 4: erk_dense_rows_n<4>(ncols, cols, D, sj, sm, K, h, out); return;
        case 6: erk_dense_rows_n<6>(ncols, cols, D, sj, sm, K, h, out); return;
        case 7: erk_dense_rows_n<7>(ncols, cols, D, sj, sm, K, h, out); return;
        default: break;
    }
    for (int k = 0; k < n; ++k) {
        double a[4] = {0.0, 0.0, 0.0, 0.0};
        for (int c = 0; c < ncols; ++c) {
            const int j = cols[c];
            for (int m = 0; m < 4; ++m) a[m] = a[m] + D[j * sj + m * sm] * K[j * n + k];
        }
        for (int m = 0; m < 4; ++m) out[m * n + k] = h * a[m];
    }
}

// DOP853's interpolant at x: y + F0 x + F1 x(1-x) + F2 x^2(1-x) + ... (rows F[r n + k]),
// nested from the highest row as SciPy's Dop853DenseOutput evaluates it
template <int N>
inline void erk_dop853_eval_n(double x, const double* y, const double* F, double* out) {
    const double u = 1.0 - x;
    double acc[N];
    for (int k = 0; k < N; ++k) acc[k] = 0.0;
    for (int r = 0; r < 7; ++r) {
        const double s = r % 2 == 0 ? x : u;
        const double* Fr = F + (6 - r) * N;
        for (int k = 0; k < N; ++k) acc[k] = (acc[k] + Fr[k]) * s;
    }
    for (int k = 0; k < N; ++k) out[k] = y[k] + acc[k];
}

inline void erk_dop853_eval(int n, double x, const double* y, const double* F, double* out) {
    switch (n) {
        case 3: erk_dop853_eval_n<3>(x, y, F, out); return;
        case 4: erk_dop853_eval_n<4>(x, y, F, out); return;
        case 6: erk_dop853_eval_n<6>(x, y, F, out); return;
        case 7: erk_dop853_eval_n<7>(x, y, F, out); return;
        default: break;
    }
    const double u = 1.0 - x;
    for (int k = 0; k < n; ++k) {
        double acc = 0.0;
        for (int r = 0; r < 7; ++r) acc = (acc + F[(6 - r) * n + k]) * (r % 2 == 0 ? x : u);
        out[k] = y[k] + acc;
    }
}

}  // namespace rotode
