// A hand-written DOP853 for one model known at compile time: the limit that rotode's engine is
// measured against (benchmarks/bench_engine.py).
//
// The pair is Dormand and Prince's 8(5,3) with Hairer's error estimator (Hairer, Norsett &
// Wanner, "Solving Ordinary Differential Equations I", 2nd ed., 1993, sec. II.10, and the
// Fortran code DOP853); the step-size controller and the initial step are SciPy's
// (`scipy.integrate._ivp.rk`, HNW sec. II.4), which rotode's dop853 follows: safety 0.9, step
// factors limited to 0.2..10, exponent -1/8, no increase right after a rejection.  No dense
// output, no events, no output but the final state.
//
// The coefficients are static constexpr, so every stage sum below is unrolled over its nonzero
// coefficients at compile time and the model's equations are inlined into the stages.  The sums
// add the same products in the same order as rotode's loops (rotode/erk.pxd: stage by stage,
// from j = 0), and with -ffp-contract=off (rotode's flag) nothing is fused, so the loop takes
// rotode's steps and ends on rotode's state, normally to the last bit.
#pragma once

#include <cmath>
#include <utility>

namespace engine {

// The doubles of the registry's coefficients (rotode/_pairs.py's 30-digit decimals, and e3 = b -
// bhat3 formed exactly before rounding, as rotode.methods does), printed with repr(): 17
// significant digits, which read back to the same doubles.  bench_engine.py checks them against
// rotode.methods.get("dop853") through engine_table().  Stage 12 is the FSAL stage f(t+h, y_new),
// whose weight is 0 in b, e5 and e3.
struct DOP853 {
    static constexpr int stages = 12;
    static constexpr int error_order = 7;      // the controller's exponent is -1 / (7 + 1)
    static constexpr double a[12][12] = {
        {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0.05260015195876773, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0.0197250569845379, 0.0591751709536137, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0.02958758547680685, 0, 0.08876275643042054, 0, 0, 0, 0, 0, 0, 0, 0, 0},
        {0.2413651341592667, 0, -0.8845494793282861, 0.924834003261792, 0, 0, 0, 0, 0, 0, 0, 0},
        {0.037037037037037035, 0, 0, 0.17082860872947386, 0.12546768756682242, 0, 0, 0, 0, 0, 0,
         0},
        {0.037109375, 0, 0, 0.17025221101954405, 0.06021653898045596, -0.017578125, 0, 0, 0, 0, 0,
         0},
        {0.03709200011850479, 0, 0, 0.17038392571223998, 0.10726203044637328,
         -0.015319437748624402, 0.008273789163814023, 0, 0, 0, 0, 0},
        {0.6241109587160757, 0, 0, -3.3608926294469414, -0.868219346841726, 27.59209969944671,
         20.154067550477894, -43.48988418106996, 0, 0, 0, 0},
        {0.47766253643826434, 0, 0, -2.4881146199716677, -0.590290826836843, 21.230051448181193,
         15.279233632882423, -33.28821096898486, -0.020331201708508627, 0, 0, 0},
        {-0.9371424300859873, 0, 0, 5.186372428844064, 1.0914373489967295, -8.149787010746927,
         -18.52006565999696, 22.739487099350505, 2.4936055526796523, -3.0467644718982196, 0, 0},
        {2.273310147516538, 0, 0, -10.53449546673725, -2.0008720582248625, -17.9589318631188,
         27.94888452941996, -2.8589982771350235, -8.87285693353063, 12.360567175794303,
         0.6433927460157636, 0},
    };
    static constexpr double b[12] = {
        0.054293734116568765, 0, 0, 0, 0, 4.450312892752409, 1.8915178993145003,
        -5.801203960010585, 0.3111643669578199, -0.1521609496625161, 0.20136540080403034,
        0.04471061572777259};
    static constexpr double c[12] = {
        0, 0.05260015195876773, 0.0789002279381516, 0.1183503419072274, 0.2816496580927726,
        0.3333333333333333, 0.25, 0.3076923076923077, 0.6512820512820513, 0.6,
        0.8571428571428571, 1.0};
    static constexpr double e5[12] = {
        0.01312004499419488, 0, 0, 0, 0, -1.2251564463762044, -0.4957589496572502,
        1.6643771824549864, -0.35032884874997366, 0.3341791187130175, 0.08192320648511571,
        -0.022355307863886294};
    static constexpr double e3[12] = {
        -0.18980075407240762, 0, 0, 0, 0, 4.450312892752409, 1.8915178993145003,
        -5.801203960010585, -0.42268232132379197, -0.1521609496625161, 0.20136540080403034,
        0.022651792198360825};
};

// rows of weights, each a compile-time function of the stage index
template <int R> struct RowA { static constexpr double at(int j) { return DOP853::a[R][j]; } };
struct RowB { static constexpr double at(int j) { return DOP853::b[j]; } };
struct RowE5 { static constexpr double at(int j) { return DOP853::e5[j]; } };
struct RowE3 { static constexpr double at(int j) { return DOP853::e3[j]; } };

// sum_j W(j) K[j][k] over j = J0, J..., skipping the zero weights (a product that rotode's loop
// adds as +-0 and that changes no finite sum); the first weight of every row is nonzero
template <class W, int N, int J0, int... J>
inline double wsum(const double (&K)[13][N], int k, std::integer_sequence<int, J0, J...>) {
    double acc = W::at(J0) * K[J0][k];
    ((acc = (W::at(J) != 0.0) ? acc + W::at(J) * K[J][k] : acc), ...);
    return acc;
}

// stage R: K[R] = f(t + c_R h, y + h sum_{j<R} a_Rj K[j])
template <int R, class M>
inline void stage(const M& f, double t, double h, const double* y, double (&K)[13][M::n]) {
    double ys[M::n];
    for (int k = 0; k < M::n; ++k)
        ys[k] = y[k] + h * wsum<RowA<R>>(K, k, std::make_integer_sequence<int, R>{});
    f(t + DOP853::c[R] * h, ys, K[R]);
}

template <class M, int... R>
inline void stages(const M& f, double t, double h, const double* y, double (&K)[13][M::n],
                   std::integer_sequence<int, R...>) {
    (stage<R + 1>(f, t, h, y, K), ...);        // stages 1..11, in order
}

// the scaled RMS norm of DOP853's error estimate (HNW sec. II.10, eq. 10.17; SciPy's
// DOP853._estimate_error_norm): |h| |err5|^2 / sqrt(n (|err5|^2 + 0.01 |err3|^2)); atol > 0
template <int N>
inline double error_norm(const double (&K)[13][N], const double* y, const double* ynew,
                         double h, double rtol, double atol) {
    constexpr auto all = std::make_integer_sequence<int, 12>{};
    double n5 = 0.0, n3 = 0.0;
    for (int k = 0; k < N; ++k) {
        const double scale = atol + std::fmax(std::fabs(y[k]), std::fabs(ynew[k])) * rtol;
        const double e5 = wsum<RowE5>(K, k, all) / scale;
        const double e3 = wsum<RowE3>(K, k, all) / scale;
        n5 = n5 + e5 * e5;
        n3 = n3 + e3 * e3;
    }
    if (n5 == 0.0 && n3 == 0.0) return 0.0;
    return std::fabs(h) * n5 / std::sqrt((n5 + 0.01 * n3) * N);
}

template <int N>
inline double rms(const double* x, const double* scale) {
    double acc = 0.0;
    for (int k = 0; k < N; ++k) acc = acc + (x[k] / scale[k]) * (x[k] / scale[k]);
    return std::sqrt(acc / N);
}

// HNW sec. II.4's starting step, as SciPy's select_initial_step (one evaluation of f)
template <class M>
inline double initial_step(const M& f, double t0, const double* y0, const double* f0,
                           double direction, double length, double rtol, double atol) {
    constexpr int n = M::n;
    double scale[n], y1[n], f1[n], diff[n];
    for (int k = 0; k < n; ++k) scale[k] = atol + std::fabs(y0[k]) * rtol;
    const double d0 = rms<n>(y0, scale), d1 = rms<n>(f0, scale);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    h0 = std::fmin(h0, length);
    for (int k = 0; k < n; ++k) y1[k] = y0[k] + h0 * direction * f0[k];
    f(t0 + h0 * direction, y1, f1);
    for (int k = 0; k < n; ++k) diff[k] = f1[k] - f0[k];
    const double d2 = rms<n>(diff, scale) / h0;
    const double h1 = (d1 <= 1e-15 && d2 <= 1e-15)
        ? std::fmax(1e-6, h0 * 1e-3)
        : std::pow(0.01 / std::fmax(d1, d2), 1.0 / (DOP853::error_order + 1));
    return std::fmin(std::fmin(100.0 * h0, h1), length);
}

struct Counts {
    long long accepted, rejected, nfev;
    int status;             // 0 ok, 1 step below the spacing of floats, 2 non-finite state
};

// integrate y' = f(t, y) from t to tf in place (IN/OUT: y)
template <class M>
inline Counts integrate(const M& f, double t, double tf, double* y, double rtol, double atol) {
    constexpr int n = M::n;
    constexpr double SAFETY = 0.9, MIN_FACTOR = 0.2, MAX_FACTOR = 10.0;
    constexpr double exponent = -1.0 / (DOP853::error_order + 1);
    constexpr auto steps = std::make_integer_sequence<int, 11>{};
    constexpr auto weights = std::make_integer_sequence<int, 12>{};
    double K[13][n], ynew[n];
    Counts out{0, 0, 2, 0};
    const double direction = tf > t ? 1.0 : -1.0;
    f(t, y, K[0]);
    double h_abs = initial_step(f, t, y, K[0], direction, std::fabs(tf - t), rtol, atol);
    while (direction * (tf - t) > 0.0) {
        const double min_step = 10.0 * std::fabs(std::nextafter(t, direction * INFINITY) - t);
        if (h_abs < min_step) h_abs = min_step;
        bool rejected = false;
        double t_new;
        for (;;) {
            if (h_abs < min_step) {
                out.status = 1;
                return out;
            }
            t_new = t + h_abs * direction;
            if (direction * (t_new - tf) > 0.0) t_new = tf;
            const double h = t_new - t;
            h_abs = std::fabs(h);
            stages(f, t, h, y, K, steps);
            for (int k = 0; k < n; ++k) ynew[k] = y[k] + h * wsum<RowB>(K, k, weights);
            f(t_new, ynew, K[12]);                 // FSAL: the next step's K[0]
            out.nfev += 12;
            const double err = error_norm<n>(K, y, ynew, h, rtol, atol);
            if (err < 1.0) {
                double factor = err == 0.0
                    ? MAX_FACTOR : std::fmin(MAX_FACTOR, SAFETY * std::pow(err, exponent));
                if (rejected) factor = std::fmin(1.0, factor);
                h_abs = h_abs * factor;
                break;
            }
            h_abs = h_abs * std::fmax(MIN_FACTOR, SAFETY * std::pow(err, exponent));
            rejected = true;
            ++out.rejected;
        }
        for (int k = 0; k < n; ++k) {
            if (!(ynew[k] - ynew[k] == 0.0)) {
                out.status = 2;
                return out;
            }
        }
        for (int k = 0; k < n; ++k) {
            y[k] = ynew[k];
            K[0][k] = K[12][k];
        }
        t = t_new;
        ++out.accepted;
    }
    return out;
}

}  // namespace engine
