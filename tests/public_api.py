"""rotode's public API as the documentation and signature tests walk it.

Public names: every name in ``rotode.__all__`` and in the ``__all__`` of the public modules
(`MODULES`), and the ``OdeSolver`` classes of ``rotode.solvers``.  Public members of a public
class: what ``dir(cls)`` lists without a leading underscore (and ``__call__``), defined by a
rotode class (members inherited from SciPy, NumPy or ``object`` are theirs to document).
"""
import importlib
import inspect
import re
import types

import rotode

#: The public modules (their ``__all__`` is their public list).
MODULES = ("quaternion", "so3", "omega", "torque", "events", "rhs", "steps", "exact", "inertia",
           "frames", "methods", "solvers")

_SECTION = re.compile(r"^([A-Z][A-Za-z ]+)\n-{3,}$", re.M)


def modules():
    """The rotode package and its public modules, by dotted name."""
    found = {"rotode": rotode}
    for name in MODULES:
        found[f"rotode.{name}"] = importlib.import_module(f"rotode.{name}")
    return found


def names():
    """``{qualified name: (object, defining public module)}`` of every public name."""
    found = {}
    for modname, module in modules().items():
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.ismodule(obj) or name.startswith("__"):
                continue
            key = f"{getattr(obj, '__module__', modname)}.{name}" if callable(obj) else \
                f"{modname}.{name}"
            found.setdefault(key, (obj, module))
    return found


def callables():
    """The public functions and classes, ``{qualified name: object}``."""
    return {k: obj for k, (obj, _) in names().items() if callable(obj)}


def constants():
    """The public names that are data (a dict, a tuple), ``{qualified name: (value, module)}``."""
    return {k: v for k, v in names().items() if not callable(v[0])}


def _defining_class(cls, attr):
    for klass in cls.__mro__:
        if attr in vars(klass):
            return klass
    return None


def members(cls):
    """``{name: (member, defining class)}`` of the public members a rotode class owns."""
    found = {}
    for attr in dir(cls):
        if attr.startswith("_") and attr != "__call__":
            continue
        owner = _defining_class(cls, attr)
        if owner is None or not owner.__module__.startswith("rotode"):
            continue
        found[attr] = (vars(owner)[attr], owner)
    return found


def is_routine(member):
    """True for a method (function, classmethod, staticmethod, Cython method, slot)."""
    if isinstance(member, (classmethod, staticmethod)):
        member = member.__func__
    return callable(member) and not isinstance(member, type)


def is_documented_data(member):
    """True for a data member whose docstring is the class's Attributes section: a Cython
    attribute, a NamedTuple field, a dataclass default, a plain class constant."""
    if isinstance(member, (property, classmethod, staticmethod)):
        return False
    return (type(member).__name__ in ("getset_descriptor", "member_descriptor", "_tuplegetter")
            or not callable(member))


def docstring(obj):
    """The cleaned docstring of ``obj``, without the signature (or attribute type) line that
    Cython's ``embedsignature`` writes at its top."""
    doc = inspect.cleandoc(getattr(obj, "__doc__", None) or "")
    name = getattr(obj, "__name__", "")
    first, _, rest = doc.partition("\n")
    if name and (re.match(rf"^(\w+\.)?{re.escape(name)}\(.*\)( -> .*)?$", first)
                 or re.match(rf"^(\w+\.)?{re.escape(name)}: [\w.' ]+$", first)):
        doc = inspect.cleandoc(rest)      # (``name: type`` of a Cython attribute)
    return doc


def sections(doc):
    """``{section title: body}`` of a numpydoc docstring (the summary under ``""``)."""
    parts = _SECTION.split(doc)
    found = {"": parts[0]}
    for title, body in zip(parts[1::2], parts[2::2], strict=True):
        found[title.strip()] = body
    return found


def documented_names(body):
    """The names a Parameters/Attributes section documents (``a, b : type`` lines and
    ``*args``/``**kwargs``), leading stars removed."""
    found = set()
    for line in body.split("\n"):
        if not line or line[0].isspace():
            continue
        head = line.split(" : ")[0] if " : " in line else line
        for name in head.split(","):
            name = name.strip().lstrip("*")
            if re.fullmatch(r"\w+", name):
                found.add(name)
    return found


def is_function(obj):
    """A function (Python, Cython, or one wrapped by ``functools.wraps``), not a class."""
    return not isinstance(obj, type) and callable(obj)


def unwrap(obj):
    """``obj`` without ``functools.wraps`` layers."""
    return inspect.unwrap(obj) if isinstance(obj, types.FunctionType) else obj
