"""The studies reproduce the published qualitative claims (on reduced sizes)."""
import numpy as np
import pytest

from rotode import studies


@pytest.fixture(scope="module")
def lagrange_top():
    return studies.lagrange_top(quick=True)


def test_lagrange_top_quaternions_beat_matrices_beat_euler_angles(lagrange_top):
    """Rucker 2018 fig. 8: quaternions most accurate, Euler angles worst (their singularity)."""
    d = lagrange_top["drift-vs-step"]
    i = list(d["step [s]"]).index(0.1)
    quat = d["nonunit-quaternion error [deg]"][i]
    assert quat < d["matrix-gram-schmidt error [deg]"][i] < d["euler-xyz error [deg]"][i]
    assert d["euler-xyz error [deg]"][i] > 100 * quat


def test_lagrange_top_nonunit_matches_normalised(lagrange_top):
    """Rucker 2018 sec. III-A/IV: non-unit and step-wise normalised quaternions agree closely."""
    d = lagrange_top["drift-vs-step"]
    for key in ("error [deg]", "energy drift [%]", "z-momentum drift [%]"):
        a = d[f"nonunit-quaternion {key}"]
        b = d[f"normalised-quaternion {key}"]
        np.testing.assert_allclose(a, b, rtol=1e-3)


def test_lagrange_top_rk4_order_and_invariants_follow_the_error(lagrange_top):
    d = lagrange_top["drift-vs-step"]
    h = d["step [s]"]
    err = d["nonunit-quaternion error [deg]"]
    slope = np.polyfit(np.log(h[2:]), np.log(err[2:]), 1)[0]   # asymptotic steps 0.1, 0.05
    assert 3.8 < slope < 5.3   # RK4 (the measured global slope on this problem is ~5)
    for key in ("energy drift [%]", "z-momentum drift [%]"):
        assert np.all(np.diff(d[f"nonunit-quaternion {key}"]) < 0)   # falls with the step


def test_lagrange_top_euler_angles_error_jumps_near_the_singularity(lagrange_top):
    """Rucker 2018 fig. 7: the Euler-angle error undergoes a sharp increase."""
    s = lagrange_top["error-vs-time"]
    later = s["time [s]"] >= 5.0
    jumps = {k: np.diff(np.log10(s[k][later])).max() for k in studies.TOP_FORMULATIONS}
    # within one 0.1 s output step the Euler-angle error grows > 3x; the others < 1.1x
    assert jumps["euler-xyz"] > 0.5
    for k in ("nonunit-quaternion", "normalised-quaternion", "matrix-gram-schmidt"):
        assert jumps[k] < 0.05


def test_study_writes_csv(tmp_path):
    data = studies.run_study("lagrange-top", out_dir=str(tmp_path), quick=True, plot=False,
                             progress=None)
    path = tmp_path / "lagrange-top-drift-vs-step.csv"
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    np.testing.assert_allclose(table[:, 0], data["drift-vs-step"]["step [s]"])
    with pytest.raises(ValueError, match="unknown study"):
        studies.run_study("nope", out_dir=str(tmp_path))


@pytest.fixture(scope="module")
def rucker():
    return studies.rucker_benchmark(quick=True)


def test_rucker_rk4_rk3_ab3_each_about_ten_times_apart(rucker):
    """Rucker 2018 sec. III-C: at dt = 0.1, RK4 ~10x better than RK3 ~10x better than AB3."""
    d = rucker["error-vs-step"]
    i = list(d["step [s]"]).index(0.1)
    rk4, rk3, ab3 = d["rk4"][i], d["rk3"][i], d["ab3"][i]
    assert 4 < rk3 / rk4 < 25 and 4 < ab3 / rk3 < 25
    assert min(d["lie_euler"][i], d["exp2"][i]) > rk3   # both exponential updates worse


def test_rucker_exponential_updates_orders_and_exp2_crossover(rucker):
    d = rucker["error-vs-step"]
    h = d["step [s]"]
    fine = h <= 0.05
    for m, order in (("lie_euler", 1), ("exp2", 2)):
        slope = np.polyfit(np.log(h[fine]), np.log(d[m][fine]), 1)[0]
        assert abs(slope - order) < 0.25
    # Rucker 2018: exp. update 2 is worse than update 1 for steps above 0.1 s
    i = list(h).index(0.2)
    assert d["exp2"][i] > d["lie_euler"][i]


def test_rucker_norm_control_limits_the_drift(rucker):
    """Rucker 2018 figs. 4-5: c = 0.1 (1 - q.q) keeps the norm drift smaller at every step size."""
    d = rucker["norm-drift-vs-step"]
    for m in ("rk3", "rk4", "ab3"):
        assert np.all(d[f"{m} c=0.1"] < d[f"{m} c=0"])
    t = rucker["norm-drift-vs-time"]
    late = t["time [s]"] > 50
    assert t["rk4 c=0.1"][late].max() < t["rk4 c=0"][late].max()


def test_energy_map_stays_below_the_seeds_bound():
    """Mizerski 2020 sec. 11: one step with Kantorovich sub-steps changes E by at most 0.3 %."""
    d = studies.energy_map(quick=True)["relative-energy-change"]
    assert d["implicit_midpoint"].max() <= 3e-3
    assert d["trapezoid"].max() <= 3e-3
    assert d["object_trapezoid"].max() < 1e-12     # energy-conserving by construction


def test_newton_map_newton_converges_where_the_simple_iteration_does_not():
    d = studies.newton_map(quick=True)["iterations"]
    fp, nt = d["fixed-point iterations"], d["newton iterations"]
    both = np.isfinite(fp) & np.isfinite(nt)
    assert np.all(nt[both] <= fp[both])
    assert np.isfinite(nt).sum() > np.isfinite(fp).sum()
    # inside the Kantorovich region Newton always converges
    assert np.all(np.isfinite(nt[d["kantorovich h <= 1/2"] == 1]))


def test_work_precision_high_order_magnus_beats_dop853_with_numpy():
    d = studies.work_precision(quick=True)["rucker-benchmark"]
    rows = list(zip(d["method"], d["time [s]"], d["error [deg]"], strict=True))
    best_dop = min(e for m, _, e in rows if m.startswith("solve_ivp"))
    slowest_dop = max(t for m, t, _ in rows if m.startswith("solve_ivp"))
    magnus8 = [(t, e) for m, t, e in rows if m == "magnus8"]
    assert min(e for _, e in magnus8) < best_dop
    assert max(t for t, _ in magnus8) < slowest_dop


def test_events_study_stops_the_top_and_counts_the_flips():
    d = studies.events_study(quick=True)
    tilt = d["tilt"]
    assert 55.0 < tilt["tilt [deg]"][-1] <= 60.0 and 2.0 < tilt["stop [s]"][0] < 3.0
    f = d["flips"]
    assert len(f["rotode [s]"]) == 3                            # 40 s: three sign changes
    assert np.abs(f["difference [s]"]).max() < 1e-9
