"""Save the outputs of every golden-engine case (tests/golden/cases.py) to
tests/data/golden_engine.npz, which tests/test_golden_engine.py compares against.

    python tests/golden/make_golden.py

Regenerate ONLY when a change of the engine's bits is intended and explained in the commit
message (tests/test_golden_engine.py says why).  The script runs every case twice, the second
time in reverse order, and refuses to write when the two runs differ in a single bit (a result
that depends on the call history is a bug, not something to save).

It also measures each case's sensitivity to round-off and saves it with the outputs: the
largest relative change of its outputs (times, states, rates, events;
`cases.relative_difference`) when each entry of y0 moves by eps max(1, |entry|), eps drawn
uniformly from [-1.3e-15, 1.3e-15] (a few units in the last place; 8 draws), divided by
1.3e-15.  Fixed-step cases give 1-25; some error-controlled ones give 10^2-10^4: their error
estimates (and the first step's, chosen from a difference quotient) are partly rounding, so the
step sizes, and with them the outputs at the truncation-error level, move with round-off.  The
test quotes this number when a case fails: a difference well above ``sensitivity * 1e-16`` is
a change of the method, not of round-off.  The counters of ``stats`` that such a perturbation
moves (an accept/reject decision or an iteration count on the edge) are saved too
(``counters_moved_by_perturbation``).
"""
import pathlib
import platform
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
# this checkout's rotode (built in place) and the tests' helpers, from any working directory
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import numpy as np  # noqa: E402

import rotode  # noqa: E402
from golden.cases import (  # noqa: E402
    CASES,
    Y0,
    is_counter,
    record,
    relative_difference,
    save,
)

OUT = ROOT / "tests" / "data" / "golden_engine.npz"


def same(a, b):
    """Bit-for-bit equality of two records (NaN equal to NaN)."""
    if a.keys() != b.keys():
        return False
    for k, v in a.items():
        w = b[k]
        if isinstance(v, str) or isinstance(w, str):
            if v != w:
                return False
        elif v.shape != w.shape or v.dtype != w.dtype or not np.array_equal(v, w,
                                                                            equal_nan=True):
            return False
    return True


#: perturbations of y0: per case, N_PERTURBATIONS draws of eps uniform in [-EPS, EPS] for each
#: entry, added times max(1, |entry|) (a few units in the last place; the zeros of a state
#: move too, so that a quaternion's rotation changes, not only its length)
N_PERTURBATIONS, EPS = 8, 1.3e-15


def sensitivity(case, rec, seed):
    """(largest relative change of the outputs per unit relative change of y0, the counters
    that moved) over `N_PERTURBATIONS` perturbations of y0."""
    y0 = np.array(Y0[case.y0], dtype=np.float64)
    rng = np.random.default_rng(seed)
    outputs = [k for k, v in rec.items() if not is_counter(k, v) and not isinstance(v, str)]
    worst, moved = 0.0, set()
    for _ in range(N_PERTURBATIONS):
        eps = rng.uniform(-EPS, EPS, y0.shape) * np.maximum(1.0, np.abs(y0))
        other = record(case.run(y0=y0 + eps))
        worst = max(worst, relative_difference(rec, other, outputs) / EPS)
        moved.update(k for k, v in rec.items() if is_counter(k, v)
                     and not (v.shape == other[k].shape and np.array_equal(v, other[k])))
    return worst, sorted(moved)


def main():
    first = {c.id: record(c.run()) for c in CASES}
    again = {c.id: record(c.run()) for c in reversed(CASES)}
    differ = [cid for cid in first if not same(first[cid], again[cid])]
    if differ:
        sys.exit("not deterministic (a second run differs), nothing written:\n  "
                 + "\n  ".join(differ))
    failed = [cid for cid, rec in first.items() if int(rec["stats.status"]) not in (0, 1)]
    if failed:
        sys.exit("these cases failed (status not 0 or 1), nothing written:\n  "
                 + "\n  ".join(failed))
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "rotode", "setup.py"],
                           cwd=ROOT, capture_output=True, text=True).stdout.strip() != ""
    sens, moved = {}, {}
    for seed, case in enumerate(CASES):
        sens[case.id], fields = sensitivity(case, first[case.id], seed)
        if fields:
            moved[case.id] = fields
    meta = {"commit": commit, "engine_sources_modified": dirty, "rotode": rotode.__version__,
            "numpy": np.__version__, "python": platform.python_version(),
            "machine": platform.machine(), "n_cases": len(first),
            "perturbations": [N_PERTURBATIONS, EPS], "sensitivity": sens,
            "counters_moved_by_perturbation": moved}
    save(OUT, first, meta)
    print(f"{len(first)} cases -> {OUT.relative_to(ROOT)} ({OUT.stat().st_size / 1024:.0f} KiB)"
          f", saved at commit {commit[:10]}" + (" (with uncommitted changes to rotode/)"
                                                 if dirty else ""))
    loud = sorted(((s, cid) for cid, s in sens.items() if s > 25.0), reverse=True)
    print(f"{len(loud)} cases amplify a relative change of y0 more than 25-fold (a round-off "
          "change of the engine may move them by more than 1e-14):")
    for s, cid in loud:
        print(f"  {s:8.0f}  {cid}")
    if moved:
        print("counters moved by a perturbation of y0:")
        for cid, fields in moved.items():
            print(f"  {cid}: {', '.join(fields)}")


if __name__ == "__main__":
    main()
