"""The public API is what ``__all__`` says, and every public callable has a signature.

``dir()`` of rotode and of its public modules lists their ``__all__`` (no imported module or
private helper such as ``np`` or ``as_rows``); ``inspect.signature`` works for every public
function and class (the compiled classes' constructors included, rotode/_signature.py), for
the public methods of public classes and for the calls of the compiled sources, events and
right-hand sides.
"""
import inspect

import numpy as np
import pytest
from public_api import callables, is_routine, members, modules

import rotode
from rotode import events, omega, rhs, torque

MODULES = modules()
CALLABLES = callables()


@pytest.mark.parametrize("name", sorted(MODULES))
def test_dir_lists_the_public_names(name):
    module = MODULES[name]
    public = [n for n in dir(module) if not n.startswith("_")]
    assert sorted(public) == sorted(n for n in module.__all__ if not n.startswith("_"))
    assert all(hasattr(module, n) for n in module.__all__)


def test_dir_of_torque_hides_its_imports():     # the example
    assert "np" not in dir(rotode.torque) and "as_rows" not in dir(rotode.torque)
    assert rotode.torque.np is np                # (still there for the module itself)


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_signature_of_public_callable(name):
    sig = inspect.signature(CALLABLES[name])
    assert all(p.name != "self" for p in sig.parameters.values())


def _method_cases():
    """The public methods (``__call__`` of a compiled class is a C slot, whose signature
    ``inspect`` reads from the instance: `test_compiled_instance_call_signature`)."""
    cases = []
    for name, obj in sorted(CALLABLES.items()):
        if isinstance(obj, type):
            for attr, (member, _) in sorted(members(obj).items()):
                slot = type(member).__name__ == "wrapper_descriptor"
                if is_routine(member) and not isinstance(member, property) and not slot:
                    cases.append(pytest.param(getattr(obj, attr), id=f"{name}.{attr}"))
    return cases


@pytest.mark.parametrize("method", _method_cases())
def test_signature_of_public_method(method):
    inspect.signature(method)


@pytest.mark.parametrize(("cls", "params"), [
    (rotode.RigidBody, ["inertia", "torque", "norm_gain", "gyroscopic"]),
    (rotode.QuaternionKinematics, ["omega", "frame", "norm_gain"]),
    (omega.Samples, ["t", "w", "kind", "offset", "bias", "scale"]),
    (torque.Gravity, ["mass", "g", "com"]),
    (events.AxisAngle, ["body_axis", "world_axis", "angle", "terminal", "direction", "block",
                        "rate"]),
    (rhs.RightHandSide, []),
])
def test_compiled_constructor_signature(cls, params):
    sig = inspect.signature(cls)
    assert list(sig.parameters) == params
    defaults = {k: p.default for k, p in sig.parameters.items()
                if p.default is not inspect.Parameter.empty}
    if cls is rotode.RigidBody:
        assert defaults == {"torque": None, "norm_gain": 0.0, "gyroscopic": True}
    if cls is omega.Samples:
        assert defaults == {"kind": "linear", "offset": 0.0, "bias": 0.0, "scale": 1.0}


@pytest.mark.parametrize(("obj", "params"), [
    (rotode.RigidBody([1.0, 2.0, 3.0]), ["t", "y"]),
    (omega.Constant([0.0, 0.0, 1.0]), ["t"]),
    (torque.Constant([0.0, 0.0, 1.0]), ["t", "q", "w"]),
    (events.Component("q", 0), ["t", "y", "body"]),
], ids=["rhs", "omega", "torque", "event"])
def test_compiled_instance_call_signature(obj, params):
    assert list(inspect.signature(obj).parameters) == params


@pytest.mark.parametrize(("func", "params"), [
    (rotode.propagate_covariance, ["res", "P0"]),
])
def test_function_signature(func, params):
    assert list(inspect.signature(func).parameters) == params


def test_python_subclass_signatures_are_its_own():
    class Tumbler(rotode.RigidBody):
        def __init__(self, scale, torque=None):
            super().__init__([scale, 2 * scale, 2.5 * scale], torque)

        def __call__(self, t, y, extra=0.0):
            return super().__call__(t, y)

    class Plain(rotode.RigidBody):
        pass

    assert list(inspect.signature(Tumbler).parameters) == ["scale", "torque"]
    assert list(inspect.signature(Tumbler(1.0)).parameters) == ["t", "y", "extra"]
    assert list(inspect.signature(Plain).parameters)[0] == "inertia"
    assert list(inspect.signature(Plain([1.0, 1.0, 1.0])).parameters) == ["t", "y"]


def _filled_classes():
    """The compiled classes whose docstring is filled in at import (``__doc__ = fill(...)``
    under ``@cython.embedsignature(False)``), so that their signature line is written by hand:
    (module, class name, the parameters of the ``__init__`` in the source)."""
    import re
    from pathlib import Path

    found = []
    for pyx in sorted(Path(rotode.__file__).parent.glob("*.pyx")):
        text = pyx.read_text()
        for m in re.finditer(r"@cython\.embedsignature\(False\)\ncdef class (\w+)\(", text):
            init = re.compile(r"\n    def __init__\(self, (.*?)\):\n", re.S).search(text, m.end())
            found.append((f"rotode.{pyx.stem}", m.group(1), " ".join(init.group(1).split())))
    return found


@pytest.mark.parametrize(("module", "name", "params"), _filled_classes())
def test_a_filled_class_docstring_states_its_constructor(module, name, params):
    """The hand-written signature line of a filled docstring is the source's ``__init__``
    (``inspect.signature`` reads that line, rotode/_signature.py)."""
    import importlib

    cls = getattr(importlib.import_module(module), name)
    assert cls.__doc__.split("\n", 1)[0] == f"{name}({params})"
    assert "%(" not in cls.__doc__                      # every placeholder filled
    assert str(inspect.signature(cls)) == f"({params})"


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_no_placeholder_is_left_in_a_docstring(name):
    """Every ``%(name)s`` of a shared docstring block (rotode/_docfill.py) is filled in."""
    assert "%(" not in (CALLABLES[name].__doc__ or "")
