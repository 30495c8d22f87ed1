"""Speed and accuracy of rotode.implicit on the T-handle, beside MuJoCo's Euler and RK4.

Run from the repository root after building:  python benchmarks/bench_implicit.py [--quick]
Reports
  - implicit_midpoint (and the two trapezoids), T-handle (2.5, 1.4, 1.3), w0 = (0.01, 5, 0.01)
    rad/s, dt = 1/60: Newton iterations (mean, max), time per step for one body, relative energy
    error over 100 s;
  - batched N = 1e5 bodies (random states near the same energy): body-steps per second per
    core with 1 and 2 workers;
  - MuJoCo (if installed: `pip install mujoco`; skipped otherwise): one free body with the same
    inertia, zero gravity, integrators Euler and RK4 at the same dt: energy error over 100 s and
    time per step (mj_step from Python, and `mujoco.rollout` when available, which excludes the
    Python loop).
"""
import sys

import numpy as np

from rotode import implicit
from rotode.rhs import RigidBody
from rotode.studies import best_time

INERTIA = np.array([2.5, 1.4, 1.3])
W0 = np.array([0.01, 5.0, 0.01])
DT = 1 / 60
T_END = 100.0


def energy(w):
    return 0.5 * np.sum(INERTIA * w * w, axis=-1)


def bench_single(method, repeat):
    body = RigidBody(INERTIA)
    n = int(round(T_END / DT))
    t = np.arange(n + 1) * DT
    y0 = np.r_[1.0, 0, 0, 0, W0][None, :]
    # accuracy with every state saved
    _, w, stats = implicit.run(method, body, y0, t, np.arange(n + 1), {}, 1)
    err = np.abs(energy(w[0]) / energy(W0) - 1).max()
    # speed: 10 x 100 s, only the last state saved (the stepping cost, not the output)
    tl = np.arange(10 * n + 1) * DT
    sec, _ = best_time(lambda: implicit.run(method, body, y0, tl, np.array([10 * n]), {}, 1),
                     repeat)
    return sec / (10 * n), err, stats


def bench_batched(N, n_steps, workers, repeat):
    rng = np.random.default_rng(0)
    body = RigidBody(INERTIA)
    y0 = np.empty((N, 7))
    y0[:, :4] = rng.normal(size=(N, 4))
    y0[:, 4:] = W0 + 0.05 * rng.normal(size=(N, 3))
    t = np.arange(n_steps + 1) * DT
    save = np.array([n_steps])
    sec, out = best_time(lambda: implicit.run("implicit_midpoint", body, y0, t, save, {},
                                            workers), repeat)
    return N * n_steps / sec, out


def mujoco_free_body(integrator, repeat):
    import mujoco
    xml = f"""
    <mujoco>
      <option timestep="{DT!r}" gravity="0 0 0" integrator="{integrator}"/>
      <worldbody>
        <body name="handle">
          <freejoint/>
          <inertial pos="0 0 0" mass="1" diaginertia="{INERTIA[0]} {INERTIA[1]} {INERTIA[2]}"/>
        </body>
      </worldbody>
    </mujoco>"""
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    n = int(round(T_END / DT))

    def simulate():
        mujoco.mj_resetData(model, data)
        data.qvel[3:6] = W0                  # free joint: angular velocity in the body frame
        E = np.empty(n + 1)
        E[0] = energy(data.qvel[3:6])
        for k in range(n):
            mujoco.mj_step(model, data)
            E[k + 1] = energy(data.qvel[3:6])
        return E

    E = simulate()
    err = np.abs(E / E[0] - 1).max()

    def steps_only():
        mujoco.mj_resetData(model, data)
        data.qvel[3:6] = W0
        for _ in range(n):
            mujoco.mj_step(model, data)

    sec, _ = best_time(steps_only, repeat)
    per_step_py = sec / n
    per_step_rollout = None
    try:
        from mujoco import rollout
        mujoco.mj_resetData(model, data)
        data.qvel[3:6] = W0
        size = mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_FULLPHYSICS)
        state0 = np.empty(size)
        mujoco.mj_getState(model, data, state0, mujoco.mjtState.mjSTATE_FULLPHYSICS)
        sec, _ = best_time(lambda: rollout.rollout(model, data, state0[None, :], nstep=n), repeat)
        per_step_rollout = sec / n
    except Exception as exc:  # older MuJoCo without rollout, or an API change
        print(f"  (mujoco.rollout unavailable: {exc})")
    return err, per_step_py, per_step_rollout


def main():
    quick = "--quick" in sys.argv
    repeat = 2 if quick else 5
    print(f"T-handle inertia {INERTIA.tolist()}, w0 = {W0.tolist()} rad/s, dt = 1/60, "
          f"{T_END:g} s ({int(round(T_END / DT))} steps)")
    for method in implicit.METHODS:
        per_step, err, stats = bench_single(method, repeat)
        print(f"rotode {method:18s} {per_step * 1e9:7.1f} ns/step  max |dE/E| = {err:.2e}  "
              f"Newton iterations mean {stats['newton_iter_mean']:.2f} max "
              f"{stats['newton_iter_max']}  sub-steps {stats['n_substeps']}")
    N = 10_000 if quick else 100_000
    n_steps = 20 if quick else 100
    for workers in (1, 2):
        rate, (_, _, st) = bench_batched(N, n_steps, workers, max(1, repeat - 2))
        print(f"rotode implicit_midpoint batched N = {N}, {n_steps} steps, workers = {workers}: "
              f"{rate:.3g} body-steps/s ({rate / workers:.3g} per core), status {st['status']}")
    try:
        import mujoco
    except ImportError:
        print("MuJoCo not installed (pip install mujoco): comparison skipped")
        return
    print(f"MuJoCo {mujoco.__version__}: one free body, same inertia, zero gravity")
    for integrator in ("Euler", "RK4"):
        err, py, ro = mujoco_free_body(integrator, repeat)
        ro_txt = f"{ro * 1e9:7.1f} ns/step (rollout)" if ro is not None else ""
        print(f"mujoco {integrator:5s} max |dE/E| = {err:.2e}  {py * 1e9:7.1f} ns/step "
              f"(mj_step from Python)  {ro_txt}")


if __name__ == "__main__":
    main()
