"""rotode/_trig.hpp `sin_cos`: the sine and cosine that `GravityGradient` evaluates, one source
for the one-body engine and the SIMD lanes (whose bits equal the one-body runs':
tests/test_engine_torque_call.py).

Measured against exact values (mpmath at 40 digits): the error in units of the last place of
the exact value, on random arguments in ranges up to the reduction's limit (2^20 pi/2), at the
points where the quadrant changes, and beyond the limit (the library's sin and cos).
"""
import math

import mpmath
import numpy as np
import pytest

from rotode import torque

LIMIT = 1647099.0           # rotode/_trig.hpp TRIG_LIMIT


def _ulp_errors(x, got, fn):
    out = np.empty(len(x))
    with mpmath.workdps(40):
        for i, (xi, gi) in enumerate(zip(x, got, strict=True)):
            exact = fn(mpmath.mpf(float(xi)))
            out[i] = float(abs(mpmath.mpf(float(gi)) - exact)) / math.ulp(float(exact))
    return out


@pytest.mark.parametrize("scale", [1e-8, 1.0, 4.0, 100.0, 1e4, LIMIT])
def test_within_0_8_ulp_of_the_exact_values(scale):
    x = np.random.default_rng(int(scale * 7) % 2**32).uniform(-scale, scale, 1500)
    s, c = torque._sin_cos(x)
    assert _ulp_errors(x, s, mpmath.sin).max() < 0.8
    assert _ulp_errors(x, c, mpmath.cos).max() < 0.8


def test_quadrant_boundaries_and_the_ranges_beyond():
    k = np.arange(-40, 41)
    x = np.concatenate([k * (np.pi / 4), np.nextafter(k * (np.pi / 4), np.inf),
                        np.nextafter(k * (np.pi / 4), -np.inf)])
    s, c = torque._sin_cos(x)
    # (the zeros of sin at k pi and of cos at k pi + pi/2 too: relative accuracy there)
    assert _ulp_errors(x, s, mpmath.sin).max() < 0.8
    assert _ulp_errors(x, c, mpmath.cos).max() < 0.8
    big = np.array([LIMIT + 0.5, -LIMIT - 0.5, 1e10, -3e300, np.inf, -np.inf, np.nan])
    s, c = torque._sin_cos(big)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(s, np.sin(big))
        np.testing.assert_array_equal(c, np.cos(big))
    s, c = torque._sin_cos(np.zeros((2, 3)))
    assert s.shape == (2, 3) and (s == 0).all() and (c == 1).all()
