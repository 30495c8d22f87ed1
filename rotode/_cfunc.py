"""A user's compiled function: its C address from a numba ``cfunc``, a `scipy.LowLevelCallable`
or a ctypes function, checked against the C signature the caller expects.

The one place where `rotode.ODE` (rotode/ode.pyx) and `rotode.torque.Compiled`
(rotode/torque.pyx) turn a function object into a function pointer.  Every signature is
``int f(double t, double* a, ..., double* p)``: a return type ``int``, one ``double`` and then
`CSignature.pointers` pointers to ``double``; ``const`` is not visible to ctypes or numba and is
ignored where a `scipy.LowLevelCallable` spells it.
"""
import ctypes
import itertools
import os
import weakref
from typing import NamedTuple

__all__ = ["CSignature", "address", "numba_signature", "NumbaSignature", "signature_error",
           "ShippedFunction"]


class CSignature(NamedTuple):
    """What a caller expects of a compiled function (for its checks and messages).

    Attributes
    ----------
    c : str
        The C signature as a `scipy.LowLevelCallable` carries it,
        e.g. ``"int (double, const double *, double *, const double *)"``.
    prototype : str
        The same with parameter names, for messages (``int f(double t, ...)``).
    pointers : int
        The ``double*`` parameters after the leading ``double``.
    owner : str
        The public name holding the numba signature (``rotode.ODE``), for messages.
    forms : str
        The accepted forms for a message, ahead of the compiled ones ("a Python callable
        fun(t, y, *args) -> dydt, "), or "".
    python : str
        Where a Python function goes instead, for the message refusing one, or "".
    """

    c: str
    prototype: str
    pointers: int
    owner: str
    forms: str = ""
    python: str = ""


#: the kinds of function `address` returns
FUN_C = 0          # a C function pointer (numba cfunc, LowLevelCallable, ctypes)
FUN_PYTHON = 1     # a Python callable, called with the GIL


def signature_error(sig, got):
    """TypeError naming the forms and the C signature `sig` expects, and what was `got`."""
    return TypeError(
        f"`fun` must be {sig.forms}a numba cfunc of {sig.owner}.signature, or a "
        f"scipy.LowLevelCallable / ctypes function of the C signature {sig.c!r}: "
        f"{sig.prototype}; got {got}")


def numba_signature(sig):
    """numba's ``intc(float64, CPointer(float64), ...)`` of `sig` (AttributeError without
    numba, naming the C signature)."""
    try:
        from numba import types
    except ImportError:
        raise AttributeError(f"{sig.owner}.signature needs numba (pip install numba); the C "
                             f"signature is {sig.c!r} ({sig.owner}.c_signature)") from None
    ptr = types.CPointer(types.float64)
    return types.intc(types.float64, *([ptr] * sig.pointers))


class NumbaSignature:
    """A class attribute that is numba's signature of `sig`, built when it is read (numba is
    optional)."""

    def __init__(self, sig):
        self.sig = sig

    def __get__(self, obj, cls=None):
        return numba_signature(self.sig)


def _spelling(c):
    """A C signature without spaces and ``const`` (how two spellings are compared)."""
    return "".join(str(c).replace("const", " ").split())


def _ctypes_address(fun, sig):
    """The address of a ctypes function of the C signature, or TypeError."""
    c = ctypes
    ptr = c.POINTER(c.c_double)
    argtypes = tuple(getattr(fun, "argtypes", None) or ())
    if (getattr(fun, "restype", None) not in (c.c_int, c.c_int32)
            or len(argtypes) != 1 + sig.pointers or argtypes[0] is not c.c_double
            or any(a is not ptr for a in argtypes[1:])):
        got = (f"a C function ({getattr(getattr(fun, 'restype', None), '__name__', None)} "
               f"({', '.join(getattr(a, '__name__', str(a)) for a in argtypes)}))")
        raise signature_error(sig, got)
    return c.cast(fun, c.c_void_p).value


_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _llc_address(fun, sig):
    """The function pointer of a scipy.LowLevelCallable of the C signature, or TypeError."""
    if _spelling(fun.signature) != _spelling(sig.c):
        raise signature_error(sig, f"a LowLevelCallable of signature {fun.signature!r}")
    if fun.user_data is not None:
        raise TypeError("`fun`: a LowLevelCallable with user_data is not supported; give the "
                        "data as `params`")
    capsule = tuple.__getitem__(fun, 0)       # (a LowLevelCallable is a tuple: the capsule first)
    return _capsule_pointer(capsule, _capsule_name(capsule))


def address(fun, sig, python=True):
    """``(kind, address or 0, fun)`` of the function `fun` for the C signature `sig`.

    A numba ``cfunc``, a `scipy.LowLevelCallable` or a ctypes function of the signature give
    ``FUN_C`` and its address; a Python callable gives ``FUN_PYTHON`` when `python` is true.
    Anything else, a C function of another signature and a numba ``@njit`` function raise
    TypeError naming the expected signature (`signature_error`).
    """
    from scipy import LowLevelCallable
    if isinstance(fun, LowLevelCallable):
        return FUN_C, _llc_address(fun, sig), fun
    if isinstance(fun, ctypes._CFuncPtr):
        return FUN_C, _ctypes_address(fun, sig), fun
    compiled = getattr(fun, "ctypes", None)          # numba's cfunc: .address and .ctypes
    if compiled is not None and hasattr(fun, "address"):
        _ctypes_address(compiled, sig)
        return FUN_C, int(fun.address), fun
    if hasattr(fun, "address") and hasattr(fun, "native_name"):
        raise signature_error(sig, f"{type(fun).__name__} without a ctypes signature")
    if callable(fun):
        if type(fun).__name__ in ("CPUDispatcher", "Dispatcher") and hasattr(fun, "py_func"):
            raise signature_error(sig, f"a numba @njit function (compile it with "
                                       f"@numba.cfunc({sig.owner}.signature)"
                                       + (", or pass fun.py_func)" if python else ")"))
        if python:
            return FUN_PYTHON, 0, fun
        hint = f" (a Python function goes in {sig.python})" if sig.python else ""
        raise signature_error(sig, f"a Python callable {type(fun).__name__}{hint}")
    raise signature_error(sig, type(fun).__name__)


class ShippedFunction:
    """A user's function (`rotode.ODE`'s, `rotode.torque.Compiled`'s) as pickle sends it to
    another process (a dask task).

    In this process (the threaded scheduler) the task calls ``fun`` itself.  Pickled for another
    process: a Python function as pickle (cloudpickle) sends it; a numba ``cfunc`` as its
    Python function (``__wrapped__``), its signature and its compile options, compiled again
    on the first task of each process (`_numba_cfunc`: the same code, the same bits); a ctypes
    function or `scipy.LowLevelCallable` raises TypeError (an address means nothing in another
    process).  dask's token of it is the function's identity in this process (`token`), so
    that tokenizing the graph does not pickle, unpickle and compile it.
    """

    _tokens = weakref.WeakKeyDictionary()     # a function -> its token in this process
    _count = itertools.count()

    def __init__(self, fun):
        self.fun = fun

    @property
    def token(self):
        """A name of ``fun`` unique in this process and over its life (its id where it takes
        no weak reference)."""
        try:
            token = self._tokens.get(self.fun)
            if token is None:
                token = self._tokens[self.fun] = f"{os.getpid()}:{next(self._count)}"
        except TypeError:
            token = f"{os.getpid()}:id {id(self.fun)}"
        return token

    def __dask_tokenize__(self):
        return ("rotode compiled fun", self.token)

    def __reduce__(self):
        fun = self.fun
        wrapped = getattr(fun, "__wrapped__", None)
        if type(fun).__name__ == "CFunc" and wrapped is not None:      # a numba cfunc
            compiler = getattr(fun, "_compiler", None)
            options = dict(getattr(compiler, "targetoptions", None) or {})
            local_types = dict(getattr(compiler, "locals", None) or {})
            return _numba_cfunc, (self.token, wrapped, fun._sig, local_types, options)
        from scipy import LowLevelCallable
        if isinstance(fun, (ctypes._CFuncPtr, LowLevelCallable)) or hasattr(fun, "address"):
            raise TypeError(
                f"a `fun` that is a {type(fun).__name__} (a C function's address, valid in this "
                "process only) cannot be sent to another process: run the dask ensemble on the "
                "threaded scheduler, or give `fun` as a numba cfunc (compiled again from its "
                "Python source on each worker) or a Python function")
        return ShippedFunction, (fun,)


#: numba cfuncs compiled in this process from a `ShippedFunction` (token -> ShippedFunction)
_COMPILED = {}


def _numba_cfunc(token, pyfunc, signature, local_types, options):
    """The `ShippedFunction` of a numba cfunc sent from another process: `pyfunc` compiled
    with numba's `signature` and options, once per process and token."""
    shipped = _COMPILED.get(token)
    if shipped is None:
        import numba
        fun = numba.cfunc(signature, locals=local_types, **options)(pyfunc)
        shipped = _COMPILED[token] = ShippedFunction(fun)
    return shipped
