// Batch loops of kernels over many rows (rotode/quaternion.pyx, rotode/so3.pyx): the Hamilton
// product, the rotation of vectors, the rotation matrix, so3.exp and so3.log, each compiled
// three times (portable, AVX2, AVX-512F) and chosen at run time by the CPU's instruction sets
// (issue 31).
//
// Every row is computed with the operations of the scalar kernels (quat_mul, quat_rotate,
// quat_to_matrix of rotode/quaternion.pxd, Rucker 2018 eq. 13 for the last two; so3_exp and
// so3_log of rotode/so3.pxd, Mizerski 2020 sec. 2 and Shepperd 1978) in the same order.  These
// are +, -, *, / and square roots, correctly rounded in every instruction set (the project
// compiles with -ffp-contract=off, so no FMA is formed), and the C library's sine and cosine
// (so3.exp, angles above 4 rad) and atan2 (so3.log), called per row as the scalar kernels call
// them: each row has the same bits on every path (tested,
// tests/test_rows.py).  The loops are branch-free: the checks of the input (each quaternion
// nonzero, |q|^2 > 1e-300 and finite as rotode._loops.TINY_NORM2; every other input finite;
// each matrix a rotation) are accumulated flags, so the caller needs no separate pass over the
// input to validate it.
//
// Included only by rotode/quaternion.pyx and rotode/so3.pyx (through rotode/_rows.pxd).
#ifndef ROTODE_ROWS_HPP
#define ROTODE_ROWS_HPP

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "_rodrigues.hpp"

#if defined(__GNUC__)
#define ROTODE_ROWS_INLINE inline __attribute__((always_inline))
// a lambda's body inlined where it is called (written after its parameter list)
#define ROTODE_ROWS_LAMBDA_INLINE __attribute__((always_inline))
// in a loop's body: the compiler does not vectorise the loop (an empty volatile asm statement)
#define ROTODE_ROWS_SCALAR_LOOP() __asm__ volatile("")
#else
#define ROTODE_ROWS_INLINE inline
#define ROTODE_ROWS_LAMBDA_INLINE
#define ROTODE_ROWS_SCALAR_LOOP()
#endif

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define ROTODE_ROWS_X86 1
#define ROTODE_ROWS_AVX2 __attribute__((target("avx2")))
#define ROTODE_ROWS_AVX512 __attribute__((target("avx512f")))
#endif

namespace rotode {

// |q|^2 at or below this is a zero quaternion (rotode._loops.TINY_NORM2)
const double ROWS_TINY_NORM2 = 1e-300;

// whether a squared norm is that of a usable quaternion (false for NaN)
ROTODE_ROWS_INLINE int rows_norm2_ok(double n2) {
    return (n2 > ROWS_TINY_NORM2) & (n2 <= DBL_MAX);
}

// whether x, y and z are finite (0 x is NaN for x infinite or NaN)
ROTODE_ROWS_INLINE int rows_finite3(double x, double y, double z) {
    return 0.0 * x + 0.0 * y + 0.0 * z == 0.0;
}

const std::ptrdiff_t ROWS_BLOCK = 64;

// The loops run over blocks of rows, each component in its own array (lane j of a vector is row
// j): the compiler vectorises them across rows.  Interleaved rows would be vectorised within a
// row (SLP), where GCC 12 fuses a multiply with an alternating add/subtract into vfmaddsub
// under -ffp-contract=off in AVX-512 code, which changes the bits.  Outputs of 9 components a
// row (to_matrix, so3.exp) are written by a scalar loop over the rows after the vectorised part
// (ROTODE_ROWS_SCALAR_LOOP; the vectorised transposition of 9 component arrays into rows,
// rows_store<9>, took as long as all the rest: 2x on 10^6 rows, AVX2 and AVX-512 alike); the
// bits of every instruction set are tested equal (tests/test_rows.py, tests/test_so3.py).

// X[k][j] = x[K j + k] for the m rows of a block (a transpose)
template <int K>
ROTODE_ROWS_INLINE void rows_load(const double* __restrict x, std::ptrdiff_t m,
                                  double (*__restrict X)[ROWS_BLOCK]) {
    for (std::ptrdiff_t j = 0; j < m; ++j) {
        for (int k = 0; k < K; ++k) X[k][j] = x[K * j + k];
    }
}

// x[K j + k] = X[k][j] for the m rows of a block
template <int K>
ROTODE_ROWS_INLINE void rows_store(const double (*__restrict X)[ROWS_BLOCK], std::ptrdiff_t m,
                                   double* __restrict x) {
    for (std::ptrdiff_t j = 0; j < m; ++j) {
        for (int k = 0; k < K; ++k) x[K * j + k] = X[k][j];
    }
}

// The blocked loop of a kernel of two inputs, rows of KA and KB components, and one output, rows
// of KO: row(a, b, o, j) computes row j of a block from the component arrays a[KA] and b[KB]
// into o[KO] and returns 0 if that row's input is not usable (OUT: out[KO n]; the result is
// false then)
template <int KA, int KB, int KO, class Row>
ROTODE_ROWS_INLINE bool rows_map2(const double* x, const double* y, double* out, std::ptrdiff_t n,
                                  Row row) {
    double a[KA][ROWS_BLOCK], b[KB][ROWS_BLOCK], o[KO][ROWS_BLOCK];
    int ok = 1;
    for (std::ptrdiff_t start = 0; start < n; start += ROWS_BLOCK) {
        std::ptrdiff_t m = n - start < ROWS_BLOCK ? n - start : ROWS_BLOCK;
        rows_load<KA>(x + KA * start, m, a);
        rows_load<KB>(y + KB * start, m, b);
        for (std::ptrdiff_t j = 0; j < m; ++j) ok &= row(a, b, o, j);
        rows_store<KO>(o, m, out + KO * start);
    }
    return ok != 0;
}

// the arrays of a block's components, as `rows_map2` hands them to its row
typedef double (*RowsIn)[ROWS_BLOCK];
typedef double (*RowsOut)[ROWS_BLOCK];

// out[i] = p[i] q[i] (Hamilton product; rows of 4); false if some component is not finite
ROTODE_ROWS_INLINE bool quat_mul_rows_body(const double* p, const double* q, double* out,
                                           std::ptrdiff_t n) {
    return rows_map2<4, 4, 4>(p, q, out, n, [](RowsIn a, RowsIn b, RowsOut o, std::ptrdiff_t j)
                                                ROTODE_ROWS_LAMBDA_INLINE {
        int ok = rows_finite3(a[0][j], a[1][j], a[2][j]) & rows_finite3(a[3][j], b[0][j], b[1][j])
                 & rows_finite3(b[2][j], b[3][j], 0.0);
        o[0][j] = a[0][j] * b[0][j] - a[1][j] * b[1][j] - a[2][j] * b[2][j] - a[3][j] * b[3][j];
        o[1][j] = a[0][j] * b[1][j] + a[1][j] * b[0][j] + a[2][j] * b[3][j] - a[3][j] * b[2][j];
        o[2][j] = a[0][j] * b[2][j] - a[1][j] * b[3][j] + a[2][j] * b[0][j] + a[3][j] * b[1][j];
        o[3][j] = a[0][j] * b[3][j] + a[1][j] * b[2][j] - a[2][j] * b[1][j] + a[3][j] * b[0][j];
        return ok;
    });
}

// out[i] = R(q[i]) v[i] (rows of 4 and 3); false if some |q[i]|^2 is not usable or some
// component of v is not finite
ROTODE_ROWS_INLINE bool quat_rotate_rows_body(const double* q, const double* v, double* out,
                                              std::ptrdiff_t n) {
    return rows_map2<4, 3, 3>(q, v, out, n, [](RowsIn a, RowsIn u, RowsOut o, std::ptrdiff_t j)
                                                ROTODE_ROWS_LAMBDA_INLINE {
        double n2 = a[0][j] * a[0][j] + a[1][j] * a[1][j] + a[2][j] * a[2][j] + a[3][j] * a[3][j];
        int ok = rows_norm2_ok(n2) & rows_finite3(u[0][j], u[1][j], u[2][j]);
        double s = 2.0 / n2;
        double c0 = a[2][j] * u[2][j] - a[3][j] * u[1][j];
        double c1 = a[3][j] * u[0][j] - a[1][j] * u[2][j];
        double c2 = a[1][j] * u[1][j] - a[2][j] * u[0][j];
        o[0][j] = u[0][j] + s * (a[0][j] * c0 + a[2][j] * c2 - a[3][j] * c1);
        o[1][j] = u[1][j] + s * (a[0][j] * c1 + a[3][j] * c0 - a[1][j] * c2);
        o[2][j] = u[2][j] + s * (a[0][j] * c2 + a[1][j] * c1 - a[2][j] * c0);
        return ok;
    });
}

// R[i] = R(q[i]) (rows of 4 and 9, row-major); false if some |q[i]|^2 is not usable.  The
// squared norms, their checks and s = 2/|q|^2 vectorised; the matrices row by row (as so3.exp's,
// so3_exp_rows_body below: a vectorised loop's transposition of 9 components into the rows
// cost twice the whole loop's time)
ROTODE_ROWS_INLINE bool quat_to_matrix_rows_body(const double* q, double* R, std::ptrdiff_t n) {
    double a[4][ROWS_BLOCK], scale[ROWS_BLOCK];
    int ok = 1;
    for (std::ptrdiff_t start = 0; start < n; start += ROWS_BLOCK) {
        std::ptrdiff_t m = n - start < ROWS_BLOCK ? n - start : ROWS_BLOCK;
        rows_load<4>(q + 4 * start, m, a);
        for (std::ptrdiff_t j = 0; j < m; ++j) {
            double n2 = a[0][j] * a[0][j] + a[1][j] * a[1][j] + a[2][j] * a[2][j]
                        + a[3][j] * a[3][j];
            ok &= rows_norm2_ok(n2);
            scale[j] = 2.0 / n2;
        }
        for (std::ptrdiff_t j = 0; j < m; ++j) {  // quat_to_matrix of rotode/quaternion.pxd
            ROTODE_ROWS_SCALAR_LOOP();
            const double* u = q + 4 * (start + j);
            double* M = R + 9 * (start + j);
            double s = scale[j];
            double wx = s * u[0] * u[1], wy = s * u[0] * u[2], wz = s * u[0] * u[3];
            double xx = s * u[1] * u[1], xy = s * u[1] * u[2], xz = s * u[1] * u[3];
            double yy = s * u[2] * u[2], yz = s * u[2] * u[3], zz = s * u[3] * u[3];
            M[0] = 1.0 - (yy + zz);
            M[1] = xy - wz;
            M[2] = xz + wy;
            M[3] = xy + wz;
            M[4] = 1.0 - (xx + zz);
            M[5] = yz - wx;
            M[6] = xz - wy;
            M[7] = yz + wx;
            M[8] = 1.0 - (xx + yy);
        }
    }
    return ok != 0;
}

// ---- so3.exp: rotation matrices of rotation vectors -----------------------------------------

// R[i] = R(v[i]) (Rodrigues' formula, rows of 3 and 9): the scalar kernel so3_exp of
// rotode/so3.pxd (x = |v|^2, so3_exp_coefficients, axis_matrix with alpha = 1 - S2 x) with its
// range selection made branch-free (rodrigues_select of rotode/_rodrigues.hpp; the rare rows
// with x > 16 by the library sine and cosine afterwards), then the matrices row by row by
// axis_matrix.
// False if some |v|^2 is not finite (a NaN or infinite component, or |v| > 1.34e154).
ROTODE_ROWS_INLINE bool so3_exp_rows_body(const double* v, double* R, std::ptrdiff_t n) {
    double a[3][ROWS_BLOCK], x[ROWS_BLOCK], s1[ROWS_BLOCK], s2[ROWS_BLOCK];
    int ok = 1;
    for (std::ptrdiff_t start = 0; start < n; start += ROWS_BLOCK) {
        std::ptrdiff_t m = n - start < ROWS_BLOCK ? n - start : ROWS_BLOCK;
        rows_load<3>(v + 3 * start, m, a);
        int large = 0;
        for (std::ptrdiff_t j = 0; j < m; ++j) {
            x[j] = a[0][j] * a[0][j] + a[1][j] * a[1][j] + a[2][j] * a[2][j];
            rodrigues_select(x[j], &s1[j], &s2[j]);
            large |= x[j] > 16.0;
            ok &= x[j] <= DBL_MAX;  // false for NaN and inf
        }
        if (large) {
            for (std::ptrdiff_t j = 0; j < m; ++j) {
                if (x[j] > 16.0) rodrigues_large(x[j], &s1[j], &s2[j]);
            }
        }
        for (std::ptrdiff_t j = 0; j < m; ++j) {
            ROTODE_ROWS_SCALAR_LOOP();
            axis_matrix(v + 3 * (start + j), 1.0 - s2[j] * x[j], s1[j], s2[j],
                        R + 9 * (start + j));
        }
    }
    return ok != 0;
}

// ---- so3.log: rotation vectors of rotation matrices -----------------------------------------

// how far from orthonormal a matrix given to so3.log may be (rotode._validation's
// check_rotation_matrices)
const double ROWS_LOG_ATOL = 1e-6;

// Whether every entry of R^T R - 1 is within ROWS_LOG_ATOL (false for NaN) and det R > 0 for
// the m rows of a block r (9 components).
ROTODE_ROWS_INLINE int rows_near_rotation(const double (*__restrict r)[ROWS_BLOCK],
                                          std::ptrdiff_t m) {
    int ok = 1;
    for (std::ptrdiff_t j = 0; j < m; ++j) {
        for (int a = 0; a < 3; ++a) {
            for (int b = 0; b < 3; ++b) {
                double g = r[a][j] * r[b][j] + r[3 + a][j] * r[3 + b][j]
                           + r[6 + a][j] * r[6 + b][j];
                if (a == b) g = g - 1.0;
                ok &= std::fabs(g) <= ROWS_LOG_ATOL;
            }
        }
        double det = r[0][j] * (r[4][j] * r[8][j] - r[5][j] * r[7][j])
                     - r[1][j] * (r[3][j] * r[8][j] - r[5][j] * r[6][j])
                     + r[2][j] * (r[3][j] * r[7][j] - r[4][j] * r[6][j]);
        ok &= det > 0.0;
    }
    return ok;
}

// Shepperd's unit quaternion with w >= 0 (quat_from_matrix of rotode/quaternion.pxd) of the m
// rows of a block r, without branches: the radicand of the chosen case is selected (the
// conditions of the scalar kernel's if/elif chain, applied in its order), then one square root,
// the six quotients and a selection (OUT: q, 4 components).
ROTODE_ROWS_INLINE void rows_shepperd(const double (*__restrict r)[ROWS_BLOCK],
                                      std::ptrdiff_t m, double (*__restrict q)[ROWS_BLOCK]) {
    for (std::ptrdiff_t j = 0; j < m; ++j) {
        double R0 = r[0][j], R1 = r[1][j], R2 = r[2][j], R3 = r[3][j], R4 = r[4][j];
        double R5 = r[5][j], R6 = r[6][j], R7 = r[7][j], R8 = r[8][j];
        double t = R0 + R4 + R8;
        // the cases by precedence: 3, overridden by 2, by 1, by 0
        bool k2 = R4 >= R8;
        bool k1 = (R0 >= R4) & (R0 >= R8);
        bool k0 = (t >= R0) & (t >= R4) & (t >= R8);
        double d = 1.0 + R8 - R0 - R4;
        d = k2 ? 1.0 + R4 - R0 - R8 : d;
        d = k1 ? 1.0 + R0 - R4 - R8 : d;
        d = k0 ? 1.0 + t : d;
        double s = 2.0 * std::sqrt(d);
        double h = 0.25 * s;
        double A = (R7 - R5) / s, B = (R2 - R6) / s, C = (R3 - R1) / s;
        double D = (R1 + R3) / s, E = (R2 + R6) / s, F = (R5 + R7) / s;
        // case 0: (h, A, B, C); 1: (A, h, D, E); 2: (B, D, h, F); 3: (C, E, F, h)
        double w = k0 ? h : (k1 ? A : (k2 ? B : C));
        double x = k0 ? A : (k1 ? h : (k2 ? D : E));
        double y = k0 ? B : (k1 ? D : (k2 ? h : F));
        double z = k0 ? C : (k1 ? E : (k2 ? F : h));
        double nrm = 1.0 / std::sqrt(w * w + x * x + y * y + z * z);
        nrm = w < 0.0 ? -nrm : nrm;
        q[0][j] = w * nrm;
        q[1][j] = x * nrm;
        q[2][j] = y * nrm;
        q[3][j] = z * nrm;
    }
}

// v[i] = log R[i] (so3_log of rotode/so3.pxd: v = 2 atan2(|u|, w) u/|u| of Shepperd's
// quaternion (w, u)) for rows of 9 and 3.  atan_ratio's series (small angles) runs for every
// row and is selected; the rows that need the library's atan2 get it in a second, scalar pass
// (the same function per row as the scalar kernel).  With `check`, false if some matrix is not
// a rotation (`rows_near_rotation`; v is still written).
ROTODE_ROWS_INLINE bool so3_log_rows_body(const double* R, double* v, std::ptrdiff_t n,
                                          int check) {
    double r[9][ROWS_BLOCK], q[4][ROWS_BLOCK], o[3][ROWS_BLOCK];
    double s2[ROWS_BLOCK], f[ROWS_BLOCK];
    int need[ROWS_BLOCK];
    int ok = 1;
    for (std::ptrdiff_t start = 0; start < n; start += ROWS_BLOCK) {
        std::ptrdiff_t m = n - start < ROWS_BLOCK ? n - start : ROWS_BLOCK;
        rows_load<9>(R + 9 * start, m, r);
        if (check) ok &= rows_near_rotation(r, m);
        rows_shepperd(r, m, q);
        int any = 0;
        for (std::ptrdiff_t j = 0; j < m; ++j) {
            double w = q[0][j];
            double s = q[1][j] * q[1][j] + q[2][j] * q[2][j] + q[3][j] * q[3][j];
            bool series = (w > 0.0) & (s <= 1e-2 * (w * w));
            double t2 = s / (w * w);
            double g = (1.0 - t2 * (1.0 / 3.0 - t2 * (0.2 - t2 * (1.0 / 7.0 - t2 * (
                1.0 / 9.0 - t2 * (1.0 / 11.0 - t2 * (1.0 / 13.0 - t2 * (
                    1.0 / 15.0 - t2 / 17.0)))))))) / w;
            s2[j] = s;
            f[j] = series ? g : s;      // s2 == 0: atan_ratio returns s2 (exactly 0)
            need[j] = !series & (s != 0.0);
            any |= need[j];
        }
        if (any) {
            for (std::ptrdiff_t j = 0; j < m; ++j) {
                if (need[j]) {
                    double s = std::sqrt(s2[j]);
                    f[j] = std::atan2(s, q[0][j]) / s;
                }
            }
        }
        for (std::ptrdiff_t j = 0; j < m; ++j) {
            double h = 2.0 * f[j];
            o[0][j] = h * q[1][j];
            o[1][j] = h * q[2][j];
            o[2][j] = h * q[3][j];
        }
        rows_store<3>(o, m, v + 3 * start);
    }
    return ok != 0;
}

// ---- the three builds of each loop and the run-time choice ----------------------------------

// 0: portable; 1: AVX2; 2: AVX-512F (the best the CPU has, capped by `rows_set_simd`)
inline int& rows_allowed_level() {
    static int level = 2;
    return level;
}

// cap the instruction set of the next calls (0 portable, 1 AVX2, 2 AVX-512F; for tests)
inline void rows_set_simd(int level) { rows_allowed_level() = level; }

inline int rows_cpu_level() {
#ifdef ROTODE_ROWS_X86
    static const int level = __builtin_cpu_supports("avx512f") ? 2
                             : (__builtin_cpu_supports("avx2") ? 1 : 0);
    return level;
#else
    return 0;
#endif
}

inline int rows_level() {
    int cap = rows_allowed_level();
    int cpu = rows_cpu_level();
    return cap < cpu ? cap : cpu;
}

// the instruction set the next calls use: "avx512", "avx2" or "portable"
inline const char* rows_isa() {
    int level = rows_level();
    return level == 2 ? "avx512" : (level == 1 ? "avx2" : "portable");
}

#ifdef ROTODE_ROWS_X86
#define ROTODE_ROWS_DISPATCH(body, ...)                                        \
    switch (rows_level()) {                                                    \
        case 2: return body##_avx512(__VA_ARGS__);                              \
        case 1: return body##_avx2(__VA_ARGS__);                                \
        default: return body##_portable(__VA_ARGS__);                           \
    }
#define ROTODE_ROWS_CLONES(ret, body, params, args)                            \
    static ret body##_portable params { return body##_body args; }              \
    ROTODE_ROWS_AVX2 static ret body##_avx2 params { return body##_body args; } \
    ROTODE_ROWS_AVX512 static ret body##_avx512 params { return body##_body args; }
#else
#define ROTODE_ROWS_DISPATCH(body, ...) return body##_portable(__VA_ARGS__);
#define ROTODE_ROWS_CLONES(ret, body, params, args) \
    static ret body##_portable params { return body##_body args; }
#endif

ROTODE_ROWS_CLONES(bool, quat_mul_rows,
                   (const double* p, const double* q, double* out, std::ptrdiff_t n),
                   (p, q, out, n))
ROTODE_ROWS_CLONES(bool, quat_rotate_rows,
                   (const double* q, const double* v, double* out, std::ptrdiff_t n),
                   (q, v, out, n))
ROTODE_ROWS_CLONES(bool, quat_to_matrix_rows, (const double* q, double* R, std::ptrdiff_t n),
                   (q, R, n))
ROTODE_ROWS_CLONES(bool, so3_exp_rows, (const double* v, double* R, std::ptrdiff_t n),
                   (v, R, n))
ROTODE_ROWS_CLONES(bool, so3_log_rows, (const double* R, double* v, std::ptrdiff_t n, int check),
                   (R, v, n, check))

// p[i] q[i] for n rows (p, q, out: n x 4, C order; out may not overlap p or q); false if some
// component of p or q is not finite
inline bool quat_mul_rows(const double* p, const double* q, double* out, std::ptrdiff_t n) {
    ROTODE_ROWS_DISPATCH(quat_mul_rows, p, q, out, n)
}

// R(q[i]) v[i] for n rows (q: n x 4, v, out: n x 3); false if some |q[i]|^2 <= 1e-300 or
// is not finite or some v[i] is not finite (out then holds unspecified values)
inline bool quat_rotate_rows(const double* q, const double* v, double* out, std::ptrdiff_t n) {
    ROTODE_ROWS_DISPATCH(quat_rotate_rows, q, v, out, n)
}

// R(q[i]) for n rows (q: n x 4, R: n x 9); false as for quat_rotate_rows
inline bool quat_to_matrix_rows(const double* q, double* R, std::ptrdiff_t n) {
    ROTODE_ROWS_DISPATCH(quat_to_matrix_rows, q, R, n)
}

// R[i] = R(v[i]) for n rows (v: n x 3, R: n x 9; R may not overlap v); false if some
// |v[i]|^2 is not finite
inline bool so3_exp_rows(const double* v, double* R, std::ptrdiff_t n) {
    ROTODE_ROWS_DISPATCH(so3_exp_rows, v, R, n)
}

// log R[i] for n rows (R: n x 9, v: n x 3); with `check`, false if some R[i] is not within
// 1e-6 of orthonormal with det > 0 (v is written all the same)
inline bool so3_log_rows(const double* R, double* v, std::ptrdiff_t n, int check) {
    ROTODE_ROWS_DISPATCH(so3_log_rows, R, v, n, check)
}

}  // namespace rotode

#endif  // ROTODE_ROWS_HPP
