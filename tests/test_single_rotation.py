"""One rotation at a time: the facades' single-input path (shapes (4,), (3,), (3, 3)) skips the
batch set-up; it must give the batch path's bits and raise the batch path's errors."""
import numpy as np
import pytest

from rotode import quaternion as Q
from rotode import so3


def quaternion_cases(rng):
    cases = [np.array([1.0, 0, 0, 0]), np.array([0.0, 0, 0, 1.0]),        # identity, half turn
             np.array([1.0, 1e-8, -1e-8, 2e-8]), np.array([1e-8, 1.0, 0, 0]),
             np.array([3.0, -4.0, 12.0, 0.5]), np.array([1e-140, 0, 0, 0])]   # non-unit
    return cases + list(rng.normal(size=(20, 4)))


def vector_cases(rng):
    cases = [np.zeros(3), np.array([1e-8, 0, 0]), np.array([0, 0, np.pi]),
             np.array([0, np.pi - 1e-9, 0]), np.array([3.0, 4.0, 12.0])]
    return cases + list(rng.normal(size=(20, 3)) * 2.0)


def layouts(x):
    """x as the same values in other memory layouts: a strided view, read-only, Fortran."""
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],))
    wide[..., ::2] = x
    ro = x.copy()
    ro.flags.writeable = False
    yield wide[..., ::2]
    yield ro
    yield np.asfortranarray(x)
    yield x.astype(">f8")                       # non-native byte order: general path
    yield x.tolist()


UNARY = [(Q.conjugate, "q"), (Q.inverse, "q"), (Q.to_matrix, "q"), (so3.exp, "v")]


@pytest.mark.parametrize("f, kind", UNARY, ids=lambda x: getattr(x, "__name__", x))
def test_unary_single_equals_batch(f, kind, rng):
    cases = quaternion_cases(rng) if kind == "q" else vector_cases(rng)
    for x in cases:
        expected = f(x[None])[0]
        for y in [x, *layouts(x)]:
            np.testing.assert_array_equal(f(y), expected)


def test_multiply_and_rotate_single_equal_batch(rng):
    qs, vs = quaternion_cases(rng), vector_cases(rng)
    for p, q, v in zip(qs, qs[::-1], vs, strict=False):
        np.testing.assert_array_equal(Q.multiply(p, q), Q.multiply(p[None], q[None])[0])
        np.testing.assert_array_equal(Q.rotate(q, v), Q.rotate(q[None], v[None])[0])
        for p2, q2, v2 in zip(layouts(p), layouts(q), layouts(v), strict=True):
            np.testing.assert_array_equal(Q.multiply(p2, q2), Q.multiply(p, q))
            np.testing.assert_array_equal(Q.rotate(q2, v2), Q.rotate(q, v))


def test_log_single_equals_batch(rng):
    for v in vector_cases(rng):
        R = so3.exp(v)
        for M in [R, *layouts(R)]:
            np.testing.assert_array_equal(so3.log(M), so3.log(R[None])[0])


def test_log_near_the_orthonormality_bound():
    # 8e-7 off orthonormal: accepted (general path decides), same result as the batch path
    R = so3.exp([0.3, -0.2, 0.5]) * (1 + 4e-7)
    np.testing.assert_array_equal(so3.log(R), so3.log(R[None])[0])
    with pytest.raises(ValueError, match="`R` must hold rotation matrices"):
        so3.log(so3.exp([0.3, -0.2, 0.5]) * (1 + 2e-6))
    with pytest.raises(ValueError, match="`R` must hold rotation matrices"):
        so3.log(-np.eye(3))                                   # det -1


def test_results_are_new_arrays():
    q, v = np.array([1.0, 2.0, 3.0, 4.0]), np.array([0.1, 0.2, 0.3])
    for out, arg in [(Q.conjugate(q), q), (Q.multiply(q, q), q), (Q.rotate(q, v), v),
                     (so3.exp(v), v)]:
        before = arg.copy()
        out[...] = 7.0
        np.testing.assert_array_equal(arg, before)


@pytest.mark.parametrize("bad, match", [
    (np.array([np.nan, 0, 0, 1.0]), "finite"),
    (np.array([np.inf, 0, 0, 1.0]), "finite"),
    (np.zeros(4), "nonzero"),
    (np.array([1e-160, 0, 0, 0]), "nonzero"),
    (np.array([1e200, 0, 0, 0]), "nonzero"),                  # |q|^2 overflows
    (np.ones(3), r"shape \(\.\.\., 4\)"),
    (np.ones(4, dtype=complex), "real numeric"),
])
def test_single_quaternion_errors(bad, match):
    for f in [Q.inverse, Q.to_matrix, lambda q: Q.rotate(q, np.ones(3))]:
        with pytest.raises((ValueError, TypeError), match=match):
            f(bad)


def test_single_vector_errors():
    with pytest.raises(ValueError, match="finite"):
        so3.exp(np.array([np.nan, 0.0, 0.0]))
    with pytest.raises(ValueError, match="1.34e154"):
        so3.exp(np.array([1e160, 0.0, 0.0]))
    with pytest.raises(ValueError, match="finite"):
        Q.multiply(np.array([1.0, 0, 0, np.nan]), np.ones(4))
    with pytest.raises(ValueError, match="finite"):
        Q.rotate(np.ones(4), np.array([0.0, np.inf, 0.0]))
