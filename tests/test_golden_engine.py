"""Golden outputs of the engine: every method of the registry, on every model kind it
integrates, gives the outputs saved in tests/data/golden_engine.npz.

What it protects: the numbers of the time-loop driver and the compiled runners
(rotode/_driver.pyx, dynamic.pyx, kinematic.pyx, implicit.pyx, steps.pyx) as the registry
(rotode/methods.py) configures them, through `rotode.integrate`.  The cases
(tests/golden/cases.py, the one list that this test and the script import) are every method x
model kind x representative run: angular velocities from a sinusoid, a constant, a Python
w(t) and samples (linear, zero-order hold, cubic) in both frames; the torque-free T-handle,
constant torques in the body and world frames, a Python torque, the Lagrange top, with and
without the gyroscopic term and a norm gain; fixed steps and, for the error-controlled methods,
two tolerances with and without ``t_eval``, backwards, with events (terminal and not, compiled
and Python); each method's options (``exp``, ``terms``, ``alpha``, ``substep``, ``norm_gain``,
``normalize``, ``restore_momentum``, ``torque_substeps``, ``force``, ``qdot0``, the implicit
solvers' ``solver``, ``bound``, ``substep_angle``, ``tol``); and batches of 3 bodies (one
shared model, per-body parameters, a list of bodies, per-body rates, forces and masses).

It asserts:

- outputs (``t``, ``y``, ``w``, events, final ``qdot``/``L``) equal the saved ones to
  1e-14 relative (``assert_allclose(rtol=1e-14, atol=1e-14 * scale)``, ``scale`` the largest
  magnitude of each column, at least 1: `golden.cases.scale`), and every integer counter of
  ``stats`` (accepted and rejected steps, evaluations, per-body counters, events) exactly;
- each batch equals its bodies' single runs bit for bit (``np.array_equal``: rows, rates,
  per-body counters, events, final states), and a run on 2 threads equals the run on 1.

When a case fails, its message quotes the case's sensitivity measured when the data were
saved: how much its outputs move per unit relative change of y0 of a few units in the last
place.  Some error-controlled cases amplify round-off 10^2-10^4-fold (their error estimates,
and the first step's difference quotient, are partly rounding, so the step sizes move with
it); a difference far above ``sensitivity * 1e-16`` is a change of the method, not of
round-off.

Regenerate the data with ``python tests/golden/make_golden.py`` (a few seconds; it refuses to
write results that differ between two runs).  Regenerating is legitimate ONLY when the change
of bits is intended and explained in the commit message (which cases moved, by how much, and
why); regenerating to make this test pass hides exactly what it is there to catch.
"""
import pathlib

import numpy as np
import pytest
from golden.cases import CASES, RTOL, is_counter, load, record, scale

from rotode import methods

DATA = pathlib.Path(__file__).parent / "data" / "golden_engine.npz"
META, SAVED = load(DATA)
BATCHES = [c for c in CASES if c.n_bodies is not None]
REGENERATE = "regenerate with `python tests/golden/make_golden.py` (and say why in the commit)"


def ids(case):
    return case.id


def test_the_saved_cases_are_the_cases():
    new = sorted(c.id for c in CASES if c.id not in SAVED)
    gone = sorted(set(SAVED) - {c.id for c in CASES})
    assert not new and not gone, (f"cases without saved outputs: {new}; saved outputs of "
                                  f"cases that no longer exist: {gone}; {REGENERATE}")


@pytest.mark.parametrize("model", methods.MODELS)
def test_every_method_and_model_kind_has_cases_and_a_batch(model):
    tag = "|kin|" if model == "kinematics" else "|rb|"
    for m in methods.names(model):
        mine = [c for c in CASES if c.method == m and tag in c.id]
        assert mine, f"{m!r} on {model} has no golden case"
        assert any(c.n_bodies for c in mine), f"{m!r} on {model} has no batched case"
        if methods.get(m).adaptive:
            assert any(c.events for c in mine) and any(
                "rtol" in dict(c.options) for c in mine), m
        if model == "rigid body" and methods.get(m).adaptive:
            assert any(c.events and not c.n_bodies for c in mine), m


def assert_same_record(saved, new, case_id):
    """``new`` equals ``saved``: the same fields and shapes, floats to RTOL, counters and
    strings exactly."""
    note = (f"case {case_id}: sensitivity {META['sensitivity'].get(case_id, float('nan')):.3g}"
            " (relative output change per unit relative change of y0 when saved)")
    moved = META["counters_moved_by_perturbation"].get(case_id)
    if moved:
        note += f"; a few-ulp change of y0 moved its counters {', '.join(moved)} when saved"
    assert sorted(new) == sorted(saved), f"{note}: fields {sorted(new)} != {sorted(saved)}"
    for name, ref in saved.items():
        got = new[name]
        if isinstance(ref, str):
            assert got == ref, f"{note}: {name} {got!r} != {ref!r}"
            continue
        assert got.shape == ref.shape, f"{note}: {name} has shape {got.shape}, saved {ref.shape}"
        if is_counter(name, ref) and ref.dtype.kind in "iub":
            assert np.array_equal(got, ref), f"{note}: counter {name} {got} != saved {ref}"
        elif ref.ndim >= 2:            # rows: each column against its own scale
            for j, size in enumerate(scale(ref)):
                np.testing.assert_allclose(got[..., j], ref[..., j], rtol=RTOL,
                                           atol=RTOL * size, err_msg=f"{note}: {name}[..., {j}]")
        else:
            np.testing.assert_allclose(got, ref, rtol=RTOL, atol=RTOL * scale(ref),
                                       err_msg=f"{note}: {name}")


@pytest.mark.parametrize("case", CASES, ids=ids)
def test_outputs_equal_the_saved_ones(case):
    if case.id not in SAVED:
        pytest.fail(f"no saved outputs for {case.id}: {REGENERATE}")
    assert_same_record(SAVED[case.id], record(case.run()), case.id)


def _bitwise(a, b, what):
    assert a.shape == b.shape and np.array_equal(a, b, equal_nan=True), what


@pytest.mark.parametrize("case", BATCHES, ids=ids)
def test_batch_equals_single_runs_bit_for_bit(case):
    batch = case.run()
    threads = record(case.run(workers=2))
    for name, value in record(batch).items():
        if isinstance(value, str):
            assert threads[name] == value
        else:
            _bitwise(threads[name], value, f"workers=2 differs from workers=1 in {name}")
    for i in range(case.n_bodies):
        one = case.run_single(i)
        where = f"body {i} of {case.id}"
        stopped = one.t_stop is not None and np.isfinite(one.t_stop)
        if stopped:
            # one body's output ends at its stop (solve_ivp's rule), the batch's rows after
            # it are NaN; rows at the same times are the same
            _bitwise(batch.t_stop[i], np.float64(one.t_stop), f"t_stop of {where}")
            rows = np.isin(batch.t, one.t)
            keep = np.isin(one.t, batch.t)
            assert np.isnan(batch.y[i][~rows]).all(), where
        else:
            rows = keep = slice(None)
            _bitwise(batch.t, one.t, f"t of {where}")
        _bitwise(batch.y[i][rows], one.y[keep], f"y of {where}")
        _bitwise(batch.w[i][rows], one.w[keep], f"w of {where}")
        for name, counts in batch.stats.get("per_body", {}).items():
            assert counts[i] == one.stats[name], f"per_body {name} of {where}"
        for name in ("qdot", "L"):
            if name in batch.stats:
                # (one body's qdot has shape (4,), its L keeps (1, 3))
                _bitwise(batch.stats[name][i], one.stats[name].reshape(-1),
                         f"stats {name} of {where}")
        if batch.t_events is not None:
            _bitwise(batch.stats["n_events"][i], one.stats["n_events"], f"n_events of {where}")
            for j, (te, ye) in enumerate(zip(one.t_events, one.y_events, strict=True)):
                _bitwise(batch.t_events[i][j], te, f"t_events[{j}] of {where}")
                _bitwise(batch.y_events[i][j], ye, f"y_events[{j}] of {where}")
            _bitwise(batch.y_final[i], one.y_final, f"y_final of {where}")
            _bitwise(batch.w_final[i], one.w_final, f"w_final of {where}")
