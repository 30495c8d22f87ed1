# A user's Python function called from the nogil kernels for a 3-vector: the force of
# rotode.dynamic's `ForceSource`, rotode.torque's `Callable`, rotode.omega's `Callable` and its
# derivative.  Each caller holds the GIL, passes rotode._validation's `call_vector` as `call`
# (a .pxd holds no Python import) and stores a returned exception in its `error`.


cdef inline object call_vector3(object call, object function, str what, double t, tuple rows,
                                double* out):
    """``call(function, what, t, *rows)`` (rotode._validation.call_vector: ``function(t, *rows)``
    with each row a new float64 array, its result checked) and its three values written (OUT:
    out[3]); None, or the exception that the function or the check raised (Ctrl-C in the
    user's code too), with nothing written then."""
    try:
        r = call(function, what, t, *rows)
    except BaseException as exc:
        return exc
    out[0] = r[0]
    out[1] = r[1]
    out[2] = r[2]
    return None
