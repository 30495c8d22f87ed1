"""``inspect.signature`` for rotode's extension types (``cdef class``).

Cython's ``binding`` directive gives every ``def`` function and method a signature that
``inspect`` reads, but not a ``cdef class``'s constructor nor its ``__call__``: those are C
slots, which ``inspect.signature`` refuses ("no signature found for builtin type").  The
``embedsignature`` directive (setup.py) writes them as the first line of the docstrings, e.g.
``RigidBody(inertia, torque=None, norm_gain=0.0, gyroscopic=True)`` at the top of the class's
and ``RightHandSide.__call__(self, t, y)`` at the top of ``__call__``'s.  A base class sets
``__signature__ = ExtensionSignature()``; ``inspect.signature`` then reads those lines, for the
class (its constructor) and for an instance (its ``__call__``), so the signature is the one
Cython compiled and cannot drift from the code.
"""
import ast
import inspect
import types

__all__ = ["ExtensionSignature"]

_PYTHON_CODE = (types.FunctionType, classmethod, staticmethod)


class _Default:
    """A default value that is not a literal, shown as its source text."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _value(node):
    try:
        return ast.literal_eval(node)
    except ValueError:
        return _Default(ast.unparse(node))


def _parse(arguments):
    """The Signature of the parameter list ``arguments`` (the text between the parentheses)."""
    args = ast.parse(f"def f({arguments}): pass").body[0].args
    params = []
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for i, (a, d) in enumerate(zip(positional, defaults, strict=True)):
        kind = (inspect.Parameter.POSITIONAL_ONLY if i < len(args.posonlyargs)
                else inspect.Parameter.POSITIONAL_OR_KEYWORD)
        params.append(inspect.Parameter(
            a.arg, kind, default=inspect.Parameter.empty if d is None else _value(d)))
    if args.vararg is not None:
        params.append(inspect.Parameter(args.vararg.arg, inspect.Parameter.VAR_POSITIONAL))
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(inspect.Parameter(
            a.arg, inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if d is None else _value(d)))
    if args.kwarg is not None:
        params.append(inspect.Parameter(args.kwarg.arg, inspect.Parameter.VAR_KEYWORD))
    return inspect.Signature(params)


def _embedded(doc, name):
    """The parameter list of the signature line ``name(...)`` opening ``doc``, or None."""
    first = (doc or "").split("\n", 1)[0]
    if not first.startswith(name + "(") or ")" not in first:
        return None
    return first[len(name) + 1:first.rindex(")")]


def _constructor(cls):
    for klass in cls.__mro__[:-1]:
        own = vars(klass)
        if isinstance(own.get("__init__"), _PYTHON_CODE) or isinstance(
                own.get("__new__"), _PYTHON_CODE):
            return None                 # a Python subclass's constructor: inspect reads it
        if "__init__" in own:
            arguments = _embedded(own.get("__doc__"), klass.__name__)
            return None if arguments is None else _parse(arguments)
    return inspect.Signature()          # no constructor of its own: object's, no arguments


def _call(cls):
    for klass in cls.__mro__[:-1]:
        call = vars(klass).get("__call__")
        if call is None:
            continue
        if isinstance(call, _PYTHON_CODE):
            return None                 # a Python subclass's __call__: inspect reads it
        arguments = _embedded(call.__doc__, f"{klass.__name__}.__call__")
        if arguments is None:
            return None
        sig = _parse(arguments)
        return sig.replace(parameters=list(sig.parameters.values())[1:])    # bound: no self
    return None


class ExtensionSignature:
    """``__signature__`` of an extension type and of its instances.

    On the class, the constructor's signature (from the ``embedsignature`` line of the class
    docstring of the first class in the MRO that defines ``__init__``); on an instance, the
    signature of its ``__call__`` without ``self``.  None (``inspect`` then reads the code
    itself) where a Python subclass defines the constructor or ``__call__``.
    """

    def __get__(self, obj, owner=None):
        if obj is None:
            return _constructor(owner)
        return _call(type(obj))
