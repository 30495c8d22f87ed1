"""Dask arrays through the kernels of `rotode.quaternion` and `rotode.so3`: the same compiled
kernel block by block (``dask.array.apply_gufunc``), a dask array out, so post-processing
stays lazy (docs/scaling.md).

This module knows how to map a kernel over blocks and nothing else (the ensembles of
`rotode.integrate` on dask are `rotode._dask`'s).  A kernel asks `is_dask` of its arguments
only after its one-rotation fast path (which takes ndarrays alone), and tests the type of an
argument against ``np.ndarray`` before that, so NumPy input pays nothing for it.  Nothing here
imports dask until a dask array is seen: the core install does not need it
(``pip install "rotode[dask]"``).
"""
from rotode._validation import is_dask

__all__ = ["is_dask", "dask_array", "map_blocks"]


def dask_array():
    """``dask.array``, or an ImportError saying how to install it."""
    try:
        import dask.array as da
    except ImportError:             # (a dask collection came from somewhere: say what is missing)
        raise ImportError("dask arrays need dask: pip install \"rotode[dask]\"") from None
    return da


def map_blocks(func, signature, args, kwargs=None):
    """``func(*args, **kwargs)`` on dask arrays among ``args``: ``func`` called on their NumPy
    blocks by ``dask.array.apply_gufunc`` with the generalised-ufunc ``signature`` of its
    array arguments (e.g. ``"(4),(4)->(4)"``; outputs separated by commas), a dask array out
    (a tuple of them for several outputs).  ``kwargs`` are passed to every call unchanged;
    ``out`` cannot be given (the result is a new dask array)."""
    da = dask_array()
    kwargs = dict(kwargs or {})
    if kwargs.pop("out", None) is not None:
        raise TypeError(f"`out` cannot be given with dask arrays ({func.__name__} returns a "
                        "new dask array)")
    n_out = signature.split("->")[1].count(")")
    dtypes = (float,) * n_out if n_out > 1 else float
    # core dimensions are sizes (3, 4): dask reads them as names, whose sizes it needs
    sizes = {d: int(d) for d in "".join(c if c.isdigit() else " " for c in signature).split()}
    return da.apply_gufunc(func, signature, *args, output_dtypes=dtypes, output_sizes=sizes,
                           allow_rechunk=True, **kwargs)
