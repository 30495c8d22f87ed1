"""The batch loops of rotode/_rows.hpp (quaternion.multiply, quaternion.rotate,
quaternion.to_matrix, so3.log on many rows; issue 31): on every instruction set this CPU runs
(portable, AVX2, AVX-512F, forced through the private `quaternion._rows_isa`), every row has the
bits of the scalar kernels of rotode/quaternion.pxd and rotode/so3.pxd, for partial blocks,
threaded batches, broadcasting and non-contiguous input; the loops' own input checks raise the
errors the separate checks raised; ``out=`` is validated."""
import numpy as np
import pytest

from rotode import quaternion, so3

LEVELS = (0, 1, 2)                  # portable, AVX2, AVX-512F


def _available():
    names = {}
    try:
        for level in LEVELS:
            names.setdefault(quaternion._rows_isa(level), level)
    finally:
        quaternion._rows_isa(2)
    return names


ISAS = _available()      # {"portable": 0, "avx2": 1, "avx512": 2} as far as the CPU goes


@pytest.fixture(params=sorted(ISAS))
def isa(request):
    """The batch loops' instruction set `request.param` for one test, restored after."""
    assert quaternion._rows_isa(ISAS[request.param]) == request.param
    yield request.param
    quaternion._rows_isa(2)


def _quaternions(rng, n=3000):
    """Random quaternions of lengths from 1e-13 to 1e13 and edge cases: the identity and its
    negative (zero rotation), half turns (w = 0), non-unit, tiny and huge ones."""
    q = rng.normal(size=(n, 4)) * np.exp(rng.uniform(-30.0, 30.0, (n, 1)))
    edge = [[1, 0, 0, 0], [-1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 2],
            [0, 0.6, 0.8, 0], [3, 0, 0, 0], [1e-149, 0, 0, 0], [1e150, 1e150, 0, 0],
            [1, 1e-300, 0, 0], [-0.0, 0, -1, 0], [0.5, 0.5, 0.5, 0.5]]
    q[:len(edge)] = edge
    return q


def _vectors(rng, n=3000):
    v = rng.normal(size=(n, 3)) * np.exp(rng.uniform(-20.0, 20.0, (n, 1)))
    v[:4] = [[0, 0, 0], [1, 0, 0], [0, -0.0, 1e-300], [1e100, -1e100, 3]]
    return v


def _matrices(rng, n=3000):
    """Rotation matrices of every angle up to pi (each case of Shepperd's method: half turns
    about x, y, z and their neighbours), the identity, and matrices 1e-7 off orthonormal."""
    angles = np.concatenate([[0.0, 1e-300, 1e-8, 1e-3, 0.1, np.pi, np.pi - 1e-8, np.pi - 1e-4],
                             rng.uniform(0.0, np.pi, n - 8)])
    axes = rng.normal(size=(n, 3))
    axes[:16:3] = [1, 0, 0]
    axes[1:16:3] = [0, 1, 0]
    axes[2:16:3] = [0, 0, 1]
    axes /= np.linalg.norm(axes, axis=1)[:, None]
    R = so3.exp(axes * angles[:, None])
    R[-100:] += rng.uniform(-1e-7, 1e-7, (100, 3, 3))
    R[20] = np.diag([1.0, -1.0, -1.0])
    R[21] = np.diag([-1.0, 1.0, -1.0])
    R[22] = np.diag([-1.0, -1.0, 1.0])
    return R


def _rowwise(f, *arrays):
    """f on each row alone: one rotation, the scalar kernel (rotode._loops.read_single)."""
    return np.array([f(*rows) for rows in zip(*arrays, strict=True)])


def test_every_instruction_set_is_forced():
    assert "portable" in ISAS
    for name, level in ISAS.items():
        try:
            assert quaternion._rows_isa(level) == name
        finally:
            quaternion._rows_isa(2)


def test_multiply_rows_are_the_scalar_kernel_bit_for_bit(isa, rng):
    p, q = _quaternions(rng), _quaternions(rng)[::-1].copy()
    expected = _rowwise(quaternion.multiply, p, q)
    np.testing.assert_array_equal(quaternion.multiply(p, q), expected)


def test_rotate_rows_are_the_scalar_kernel_bit_for_bit(isa, rng):
    q, v = _quaternions(rng), _vectors(rng)
    expected = _rowwise(quaternion.rotate, q, v)
    np.testing.assert_array_equal(quaternion.rotate(q, v), expected)


def test_to_matrix_rows_are_the_scalar_kernel_bit_for_bit(isa, rng):
    q = _quaternions(rng)
    expected = _rowwise(quaternion.to_matrix, q)
    np.testing.assert_array_equal(quaternion.to_matrix(q), expected)


def test_log_rows_are_the_scalar_kernel_bit_for_bit(isa, rng):
    R = _matrices(rng)
    expected = so3._log_scalar(R)
    np.testing.assert_array_equal(so3.log(R), expected)
    np.testing.assert_array_equal(so3.log(R[:5]), expected[:5])
    # the single-rotation path (the scalar kernel itself) agrees too
    np.testing.assert_array_equal(_rowwise(so3.log, R[:200]), expected[:200])


@pytest.mark.parametrize("n", [1, 63, 64, 65, 1023, 1025])
def test_partial_blocks_and_chunks(isa, rng, n):
    q, v, R = _quaternions(rng)[:n], _vectors(rng)[:n], _matrices(rng)[:n]
    np.testing.assert_array_equal(quaternion.rotate(q, v), _rowwise(quaternion.rotate, q, v))
    np.testing.assert_array_equal(quaternion.to_matrix(q), _rowwise(quaternion.to_matrix, q))
    np.testing.assert_array_equal(quaternion.multiply(q, q), _rowwise(quaternion.multiply, q, q))
    np.testing.assert_array_equal(so3.log(R), so3._log_scalar(R))


@pytest.mark.parametrize("threads", [False, True])
def test_threaded_batches(isa, rng, threads):
    q, v, R = _quaternions(rng, 500), _vectors(rng, 500), _matrices(rng, 500)
    before = quaternion._rows_threads(threads)
    try:
        _check_tiled(q, v, R)
    finally:
        quaternion._rows_threads(before)


def _check_tiled(q, v, R):
    reps = 41                                               # > 16384 rows: the threaded path
    np.testing.assert_array_equal(quaternion.rotate(np.tile(q, (reps, 1)), np.tile(v, (reps, 1))),
                                  np.tile(_rowwise(quaternion.rotate, q, v), (reps, 1)))
    np.testing.assert_array_equal(quaternion.to_matrix(np.tile(q, (reps, 1))),
                                  np.tile(_rowwise(quaternion.to_matrix, q), (reps, 1, 1)))
    np.testing.assert_array_equal(quaternion.multiply(np.tile(q, (reps, 1)), q[0]),
                                  np.tile(_rowwise(quaternion.multiply, q, [q[0]] * 500),
                                          (reps, 1)))
    np.testing.assert_array_equal(so3.log(np.tile(R, (reps, 1, 1))),
                                  np.tile(so3._log_scalar(R), (reps, 1)))


def test_to_matrix_past_the_caches(isa, rng):
    # an output beyond the caches, threaded, into a new array and into out= (16-byte aligned
    # or not): the rows written one by one after the vectorised norms (rotode/_rows.hpp)
    q = _quaternions(rng, 500)
    expected = np.tile(_rowwise(quaternion.to_matrix, q), (480, 1, 1))     # 240000 rows
    big = np.tile(q, (480, 1))
    np.testing.assert_array_equal(quaternion.to_matrix(big), expected)
    buf = np.empty(expected.size + 1)
    for offset in (0, 1):
        out = buf[offset:offset + expected.size].reshape(expected.shape)
        assert quaternion.to_matrix(big, out=out) is out
        np.testing.assert_array_equal(out, expected)


def test_broadcasting_and_non_contiguous_input(isa, rng):
    q, v = _quaternions(rng, 64), _vectors(rng, 40)
    out = quaternion.rotate(q[:, None, :], v[None, :, :])
    assert out.shape == (64, 40, 3)
    for i in (0, 5, 63):
        np.testing.assert_array_equal(out[i], _rowwise(quaternion.rotate, [q[i]] * 40, v))
    np.testing.assert_array_equal(quaternion.rotate(q[7], v), _rowwise(
        quaternion.rotate, [q[7]] * 40, v))
    np.testing.assert_array_equal(quaternion.multiply(q[:, None, :], q[None, :5, :])[:, 3],
                                  _rowwise(quaternion.multiply, q, [q[3]] * 64))
    qf, vs = np.asfortranarray(q), _vectors(rng, 128)[::2]
    np.testing.assert_array_equal(quaternion.to_matrix(qf), _rowwise(quaternion.to_matrix, q))
    np.testing.assert_array_equal(quaternion.rotate(q[::-1], vs[:64]),
                                  _rowwise(quaternion.rotate, q[::-1], vs[:64]))
    R = _matrices(rng, 200)
    np.testing.assert_array_equal(so3.log(R[::2]), so3._log_scalar(R[::2]))
    np.testing.assert_array_equal(so3.log(R.transpose(0, 2, 1)),
                                  so3._log_scalar(R.transpose(0, 2, 1)))
    np.testing.assert_array_equal(so3.log(R.reshape(10, 20, 3, 3)),
                                  so3._log_scalar(R).reshape(10, 20, 3))


@pytest.mark.parametrize("case", ["multiply", "rotate", "to_matrix", "log"])
def test_out(rng, case):
    q, v, R = _quaternions(rng, 100), _vectors(rng, 100), _matrices(rng, 100)
    call, args, shape = {
        "multiply": (quaternion.multiply, (q, q[::-1].copy()), (100, 4)),
        "rotate": (quaternion.rotate, (q, v), (100, 3)),
        "to_matrix": (quaternion.to_matrix, (q,), (100, 3, 3)),
        "log": (so3.log, (R,), (100, 3)),
    }[case]
    out = np.full(shape, np.nan)
    assert call(*args, out=out) is out
    np.testing.assert_array_equal(out, call(*args))
    one = np.empty(shape[1:])
    assert call(*(a[0] for a in args), out=one) is one           # one rotation too
    np.testing.assert_array_equal(one, call(*(a[0] for a in args)))
    bad = [np.empty(shape[:-1] + (shape[-1] + 1,)), np.empty(shape, dtype=np.float32),
           np.empty(shape[::-1]).T, np.empty(shape).tolist(), np.empty((3,) + shape)[0:2]]
    for o in bad:
        with pytest.raises(ValueError, match="`out`"):
            call(*args, out=o)
    size = int(np.prod(shape))
    buf = np.zeros(size + args[0].size)         # the first input half inside `out`
    first = buf[size // 2:size // 2 + args[0].size].reshape(args[0].shape)
    first[...] = args[0]
    with pytest.raises(ValueError, match="`out` overlaps"):
        call(first, *args[1:], out=buf[:size].reshape(shape))


def test_the_loops_checks_raise_the_usual_errors(rng):
    q, v, R = _quaternions(rng, 100), _vectors(rng, 100), _matrices(rng, 100)
    zero, nan_v, nan_q = q.copy(), v.copy(), q.copy()
    zero[57] = 0.0
    nan_v[3, 1] = np.nan
    nan_q[99, 2] = np.inf
    for call in (lambda x: quaternion.rotate(x, v), quaternion.to_matrix):
        with pytest.raises(ValueError, match="nonzero quaternions"):
            call(zero)
        with pytest.raises(ValueError, match="finite"):
            call(nan_q)
    with pytest.raises(ValueError, match="`v` must contain only finite"):
        quaternion.rotate(q, nan_v)
    with pytest.raises(ValueError, match="`q` must contain only finite"):
        quaternion.multiply(q, nan_q)
    with pytest.raises(ValueError, match="`p` must contain only finite"):
        quaternion.multiply(nan_q, q)
    R2 = R.copy()
    R2[40, 0, 0] += 1e-5
    with pytest.raises(ValueError, match="must hold rotation matrices"):
        so3.log(R2)
    R2 = R.copy()
    R2[40] = -R2[40]                                         # det -1
    with pytest.raises(ValueError, match="must hold rotation matrices"):
        so3.log(R2)
    R2[40, 1, 1] = np.nan
    with pytest.raises(ValueError, match="`R` must contain only finite"):
        so3.log(R2)
