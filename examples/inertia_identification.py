"""Identify the inertia ratios and the gyro bias of a tumbling body from its gyroscope.

A free rigid body tumbles (no torque); a body-mounted gyroscope samples its body rate at 200 Hz
for 60 s, with a constant bias and white noise.  Unknowns: the moments of inertia (up to scale:
a torque-free motion only sees their ratios, so I3 = 1), the initial body rate and the bias, 8
parameters.  The residual of `scipy.optimize.least_squares` is the predicted rate plus the bias
minus the measurement at every sample; its Jacobian comes from one run of `rotode.integrate`
with ``sensitivity=["w0", "inertia"]`` (the derivative of the computed solution, exact for the
discrete map: the body rate's three directions and the three moments, one pass of six; the
orientation's directions, which the rate does not depend on, are not asked for), or from
SciPy's finite differences of the residual (9 runs per Jacobian).  Both
fits start from the same guess and reach the same answer; the script prints both, their times
and their ratio, and with ``--plot FILE`` draws the fit.

    python examples/inertia_identification.py [--plot fit.png] [--seed N] [--breakdown]

With ``--breakdown`` it also prints, for each fit, the time spent in `rotode.integrate` and in
the rest (SciPy's least_squares: an SVD of the Jacobian per iteration, its scaling, and the
residual's arithmetic), which bounds the speed-up any Jacobian can give.

The integrator is RK4 on the samples' grid (dt = 5 ms), whose error (about 1e-10 rad/s here)
is far below the noise, and whose finite differences are smooth (fixed steps: no step control
to perturb).
"""
import argparse
import os
import time

# the fit's linear algebra (an SVD of the 36000 x 8 Jacobian per iteration) on one thread: two
# BLAS threads that wait on each other take 5-15x longer on a busy 2-core machine
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from scipy.optimize import least_squares  # noqa: E402

import rotode  # noqa: E402

RATE_HZ, T_END = 200.0, 60.0
TRUE_INERTIA = np.array([0.45, 0.8, 1.0])          # I1, I2 (to fit) and I3 = 1 (the scale)
TRUE_W0 = np.array([0.6, 1.2, -0.35])              # rad/s
TRUE_BIAS = np.array([0.02, -0.015, 0.01])         # rad/s
NOISE = 2e-3                                       # rad/s, per axis and sample
HORIZONS = (5.0, 15.0, T_END)                      # s: the spans fitted in turn
Q0 = np.array([1.0, 0.0, 0.0, 0.0])                # (the rate does not depend on it)


def body_rates(inertia, w0, t, sensitivity=None):
    """The body rate at the sample times t (n_t, 3), and the sensitivities when asked."""
    body = rotode.RigidBody(inertia)
    res = rotode.integrate(body, (t[0], t[-1]), np.r_[Q0, w0], method="rk4",
                           dt=1.0 / RATE_HZ, t_eval=t, sensitivity=sensitivity)
    return res.w, res.sensitivity


def measurements(seed):
    """(t, w_meas): the gyro's samples of the true motion."""
    t = np.arange(int(round(T_END * RATE_HZ)) + 1) / RATE_HZ
    w, _ = body_rates(TRUE_INERTIA, TRUE_W0, t)
    rng = np.random.default_rng(seed)
    return t, w + TRUE_BIAS + NOISE * rng.normal(size=w.shape)


def unpack(p):
    """p = [I1, I2, w0 (3), bias (3)] -> (inertia, w0, bias)."""
    return np.r_[p[:2], 1.0], p[2:5], p[5:8]


class Problem:
    """The residual and its exact Jacobian from one run with sensitivities per parameter
    vector: `least_squares` asks for the Jacobian at the point whose residual it has just
    evaluated, so the residual's run computes both (`exact`), and the Jacobian reuses it.
    For finite differences (`exact` False) the residual is a plain run."""

    def __init__(self, t, w_meas, exact):
        self.t, self.w_meas, self.exact = t, w_meas, exact
        self._p = None
        self.runs = 0

    def _run(self, p):
        if self._p is None or not np.array_equal(p, self._p):
            inertia, w0, _ = unpack(p)
            self._w, self._sens = body_rates(inertia, w0, self.t,
                                             ["w0", "inertia"] if self.exact else None)
            self._p = p.copy()
            self.runs += 1

    def residual(self, p):
        self._run(p)
        return (self._w + unpack(p)[2] - self.w_meas).ravel()

    def jacobian(self, p):
        self._run(p)
        n = len(self.t)
        J = np.empty((n, 3, 8))
        J[:, :, 0:2] = self._sens["inertia"][:, 3:, 0:2]    # dw / d(I1, I2)
        J[:, :, 2:5] = self._sens["w0"][:, 3:, :]           # dw / dw0
        J[:, :, 5:8] = np.eye(3)                            # d(bias) / d(bias)
        return J.reshape(3 * n, 8)


def fit(t, w_meas, p0, exact):
    """least_squares on growing spans of the record (5, 15, then 60 s: over a long span a
    10 % error in the moments puts the predicted tumbling out of phase, and the problem's
    valleys are narrow), each started at the last one's answer."""
    start = time.perf_counter()
    p, nfev, njev = p0, 0, 0
    for span in HORIZONS:
        n = int(round(span * RATE_HZ)) + 1
        problem = Problem(t[:n], w_meas[:n], exact)
        sol = least_squares(problem.residual, p, jac=problem.jacobian if exact else "2-point",
                            x_scale="jac")
        p, nfev, njev = sol.x, nfev + sol.nfev, njev + (sol.njev or 0)
    sol.nfev, sol.njev = nfev, njev
    return sol, time.perf_counter() - start


class _Timed:
    """`rotode.integrate` timed: the seconds spent in it and its calls."""

    def __init__(self):
        self.seconds, self.calls, self._integrate = 0.0, 0, rotode.integrate

    def __call__(self, *args, **kwargs):
        start = time.perf_counter()
        res = self._integrate(*args, **kwargs)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return res


def breakdown(t, w_meas, p0):
    """Each fit's time in `rotode.integrate` and in the rest (the best of three fits each)."""
    timed = _Timed()
    rotode.integrate = timed
    try:
        for exact in (True, False):
            best = None
            for _ in range(3):
                timed.seconds, timed.calls = 0.0, 0
                _, total = fit(t, w_meas, p0, exact)
                if best is None or total < best[0]:
                    best = (total, timed.seconds, timed.calls)
            total, inside, calls = best
            print(f"{'exact Jacobian' if exact else 'finite differences':18}: {total * 1e3:6.1f} "
                  f"ms, in rotode.integrate {inside * 1e3:6.1f} ms ({calls} calls), the rest "
                  f"{(total - inside) * 1e3:6.1f} ms")
    finally:
        rotode.integrate = timed._integrate


def main(plot=None, seed=1, show_breakdown=False):
    t, w_meas = measurements(seed)
    # the first guess: the moments of a CAD model, 10 % off; the first sample as w0 (noise and
    # bias in it); no bias
    p0 = np.r_[TRUE_INERTIA[:2] * [1.1, 0.9], w_meas[0], 0.0, 0.0, 0.0]
    exact, t_exact = fit(t, w_meas, p0, exact=True)
    fd, t_fd = fit(t, w_meas, p0, exact=False)
    truth = np.r_[TRUE_INERTIA[:2], TRUE_W0, TRUE_BIAS]
    cov = np.linalg.inv(exact.jac.T @ exact.jac) * NOISE ** 2     # the fit's covariance
    sigma = np.sqrt(np.diag(cov))
    names = ["I1/I3", "I2/I3", "w0_x", "w0_y", "w0_z", "bias_x", "bias_y", "bias_z"]
    print(f"{len(t)} gyro samples at {RATE_HZ:g} Hz, noise {NOISE:g} rad/s; rk4, dt = "
          f"{1e3 / RATE_HZ:g} ms\n")
    print(f"{'':8}{'truth':>11}{'exact Jacobian':>16}{'+-1 sigma':>11}{'finite diff.':>14}")
    for k, name in enumerate(names):
        print(f"{name:8}{truth[k]:>11.5f}{exact.x[k]:>16.6f}{sigma[k]:>11.1e}{fd.x[k]:>14.6f}")
    print(f"\nexact Jacobian: {t_exact:.2f} s, {exact.nfev} residuals, {exact.njev} Jacobians")
    print(f"finite differences: {t_fd:.2f} s, {fd.nfev} residuals, {fd.njev} Jacobians")
    print(f"speed-up of the exact Jacobian: {t_fd / t_exact:.1f}x; largest difference of the "
          f"two answers: {np.abs(exact.x - fd.x).max() / sigma.min():.1e} sigma")
    print(f"largest error of the fit: {np.abs((exact.x - truth) / sigma).max():.1f} sigma")
    if show_breakdown:
        breakdown(t, w_meas, p0)
    if plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        inertia, w0, bias = unpack(exact.x)
        w_fit, _ = body_rates(inertia, w0, t)
        fig, axes = plt.subplots(4, 1, sharex=True, figsize=(8, 7.5))
        for k, ax in enumerate(axes[:3]):
            ax.plot(t, w_meas[:, k], ".", ms=1, color="0.6", label="gyro samples")
            ax.plot(t, w_fit[:, k] + bias[k], lw=1.0, label="fit (rate + bias)")
            ax.set_ylabel(f"w_{'xyz'[k]} [rad/s]")
        axes[0].legend(loc="upper right")
        for k in range(3):          # the residuals: white noise of the gyro's level
            axes[3].plot(t, 1e3 * (w_meas[:, k] - w_fit[:, k] - bias[k]), ".", ms=0.5,
                         label="xyz"[k])
        axes[3].set_ylabel("residual [mrad/s]")
        axes[3].legend(loc="upper right", markerscale=10, ncol=3)
        axes[-1].set_xlabel("t [s]")
        fig.suptitle("Inertia ratios, initial rate and gyro bias from 60 s of samples")
        fig.tight_layout()
        fig.savefig(plot, dpi=120)
        print(f"wrote {plot}")
    return exact, fd, truth, sigma


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", help="write the figure of the fit to this file")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--breakdown", action="store_true",
                        help="the time in rotode.integrate and in the rest of each fit")
    args = parser.parse_args()
    main(args.plot, args.seed, args.breakdown)
