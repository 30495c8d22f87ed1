// sin(x) and cos(x) of one argument, one source for double and for the SIMD lanes' vectors
// (GCC vector types of rotode/_lanes.hpp), so that every lane of a vector computes the bits of
// the double instance on its own argument (the lanes' promise, docs/architecture.md "The lane
// kernels").  The library's sin and cos would be called lane by lane in vector code (no vector
// libm gives glibc's bits); this pair runs in vectors.
//
// Cody and Waite's argument reduction (W. J. Cody and W. Waite, "Software Manual for the
// Elementary Functions", Prentice-Hall, 1980, ch. 8): j = nearest integer to x 2/pi, by adding
// and subtracting 1.5 * 2^52; z = x - j pi/2 with pi/2 split into three 33-bit parts
// (`PIO2_1`, `PIO2_2`, `PIO2_3`, fdlibm's, and the rest `PIO2_3T`), each product j PIO2_k exact
// for |j| <= 2^20, the first difference exact (Sterbenz) and the second's error kept; then the minimax polynomials of fdlibm's __kernel_sin and
// __kernel_cos on |z| <= pi/4 (Sun Microsystems, fdlibm 5.3, k_sin.c and k_cos.c, 1993; cos in
// their compensated form w + (((1 - w) - z^2/2) + z^2 r)), swapped and signed by j mod 4.
// Measured against the exact values (tests/test_trig.py): within 0.8 ulp for |x| <= `TRIG_LIMIT`
// (glibc: 0.52); the sign of a zero is not kept (sin(-0) = +0);
// beyond it (and for NaN or infinity) std::sin and std::cos, lane by lane, so that the two
// instances still agree.
//
// Needs IEEE double arithmetic without contraction or reassociation (setup.py:
// -ffp-contract=off, no -ffast-math).
#pragma once

#include <cmath>
#include <type_traits>

#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"      // lane vectors passed only to inline functions
#endif

namespace rotode {

namespace trig {

constexpr double TWO_OVER_PI = 6.36619772367581382433e-01;
constexpr double PIO2_1 = 1.57079632673412561417e+00;      // 0x3FF921FB 54400000
constexpr double PIO2_2 = 6.07710050630396597660e-11;      // 0x3DD0B461 1A600000
constexpr double PIO2_3 = 2.02226624871116645580e-21;      // 0x3BA3198A 2E000000
constexpr double PIO2_3T = 8.47842766036889956997e-32;     // pi/2 - PIO2_1 - PIO2_2 - PIO2_3
constexpr double ROUND = 6755399441055744.0;               // 1.5 * 2^52
// sin on |z| <= pi/4: z + z^3 (S1 + z^2 (S2 + ... + z^8 S6)) (k_sin.c)
constexpr double S1 = -1.66666666666666324348e-01, S2 = 8.33333333332248946124e-03,
                 S3 = -1.98412698298579493134e-04, S4 = 2.75573137070700676789e-06,
                 S5 = -2.50507602534068634195e-08, S6 = 1.58969099521155010221e-10;
// cos on |z| <= pi/4: 1 - z^2/2 + z^4 (C1 + z^2 (C2 + ... + z^10 C6)) (k_cos.c)
constexpr double C1 = 4.16666666666666019037e-02, C2 = -1.38888888888741095749e-03,
                 C3 = 2.48015872894767294178e-05, C4 = -2.75573143513906633035e-07,
                 C5 = 2.08757232129817482790e-09, C6 = -1.13596475577881948265e-11;

template <class V> constexpr int lanes_of = int(sizeof(V) / sizeof(double));

}  // namespace trig

// the largest |x| reduced by Cody and Waite's three parts: 2^20 pi/2 (beyond: std::sin/cos)
constexpr double TRIG_LIMIT = 1647099.0;

// s = sin(x), c = cos(x) in every lane of V (double or a GCC vector of doubles): the same
// operations in every lane and in the double instance (OUT: s, c)
template <class V>
inline __attribute__((always_inline)) void sin_cos(const V& x, V& s, V& c) {
    using namespace trig;
    const V j = (x * TWO_OVER_PI + ROUND) - ROUND;              // nearest integer (ties even)
    // z + zl = x - j pi/2: the first difference exact, the second's error kept (Fast2Sum),
    // the third part's product subtracted from that tail
    const V t1 = x - j * PIO2_1, p2 = j * PIO2_2;
    const V zh = t1 - p2;
    const V tail = (((t1 - zh) - p2) - j * PIO2_3) - j * PIO2_3T;
    const V z = zh + tail;
    const V zl = tail - (z - zh);
    const V zz = z * z;
    // k_sin.c: z - ((z^2 (zl/2 - v r) - zl) - v S1), v = z^3
    const V v = zz * z;
    const V rs = S2 + zz * (S3 + zz * (S4 + zz * (S5 + zz * S6)));
    const V sz = z - ((zz * (0.5 * zl - v * rs) - zl) - v * S1);
    // k_cos.c: w + (((1 - w) - z^2/2) + (z^2 r - z zl)), w = 1 - z^2/2
    const V rc = zz * (C1 + zz * (C2 + zz * (C3 + zz * (C4 + zz * (C5 + zz * C6)))));
    const V hz = 0.5 * zz;
    const V w = 1.0 - hz;
    const V cz = w + (((1.0 - w) - hz) + (zz * rc - z * zl));
    const V m = j - 4.0 * ((j * 0.25 + ROUND) - ROUND);         // j mod 4 in -2 .. 2
    const auto odd = (m == 1.0) | (m == -1.0);
    const auto half = (m == 2.0) | (m == -2.0);                 // j = 2 mod 4
    const V sq = odd ? cz : sz;                                 // the quadrant's value
    const V cq = odd ? sz : cz;
    s = (half | (m == -1.0)) ? -sq : sq;                        // j = 2, 3 mod 4
    c = (half | (m == 1.0)) ? -cq : cq;                         // j = 1, 2 mod 4
    const auto in = (x <= TRIG_LIMIT) & (x >= -TRIG_LIMIT);     // (false for NaN)
    if constexpr (std::is_same_v<V, double>) {
        if (!in) {
            s = std::sin(x);
            c = std::cos(x);
        }
    } else {
        for (int l = 0; l < lanes_of<V>; ++l) {
            if (in[l]) continue;
            s[l] = std::sin(x[l]);
            c[l] = std::cos(x[l]);
        }
    }
}

// the double instance, for Cython (rotode/torque.pyx) (OUT: s, c)
inline void sin_cos_d(double x, double* s, double* c) { sin_cos(x, *s, *c); }

}  // namespace rotode

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
