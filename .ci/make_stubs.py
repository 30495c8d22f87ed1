"""Write rotode/*.pyi for the compiled modules from the built extension (then edit by hand).

Usage: python .ci/make_stubs.py MODULE... (e.g. rotode.omega). `.ci/stubtest` checks the stubs
against the built package in CI, so a stub that falls behind the code fails there.
Signatures come from the Cython functions (binding) and, for extension types, from the
signature line that `embedsignature` writes at the top of the class docstring.
"""
import importlib
import inspect
import sys
from pathlib import Path

ARRAY_FUNCTIONS = {"rotode.quaternion", "rotode.so3"}
TUPLE_RESULTS = {"to_matrix_jacobian", "exp_and_dexp", "exp_jacobian", "dexp_jacobian",
                 "dexp_inv_jacobian"}
SKIP = {"__reduce_cython__", "__setstate_cython__", "__test__"}


def own(module, obj):
    return getattr(obj, "__module__", None) == module.__name__


def annotate(sig, arrays):
    params = []
    for p in sig.parameters.values():
        text = str(p).split(":")[0].split("=")[0]
        if arrays and p.name not in ("self", "out", "allow_simd", "rotation"):
            text += ": ArrayLike"
        if p.default is not inspect.Parameter.empty:
            text += " = ..." if arrays else "=..."
        params.append(text)
    # keep '*' and '/' markers as inspect writes them
    out, seen_kw = [], False
    for p, text in zip(sig.parameters.values(), params, strict=True):
        if p.kind is p.KEYWORD_ONLY and not seen_kw:
            out.append("*")
            seen_kw = True
        out.append(text if p.kind is not p.VAR_POSITIONAL else "*" + p.name)
    return ", ".join(out)


def function_stub(module, name, f, indent=""):
    arrays = module.__name__ in ARRAY_FUNCTIONS and not indent
    try:
        sig = inspect.signature(f)
    except (TypeError, ValueError):
        return f"{indent}def {name}(*args: Any, **kwargs: Any) -> Any: ..."
    if name == "from_scipy":
        return f"{indent}def {name}(rotation: Rotation) -> NDArray[np.float64]: ..."
    if name == "to_scipy":
        return f"{indent}def {name}(q: ArrayLike) -> Rotation: ..."
    result = "Any"
    if arrays:
        result = ("tuple[NDArray[np.float64], NDArray[np.float64]]" if name in TUPLE_RESULTS
                  else "str" if name == "_exp_rows_isa" else "NDArray[np.float64]")
    return f"{indent}def {name}({annotate(sig, arrays)}) -> {result}: ..."


def class_stub(module, name, cls):
    bases = [b for b in cls.__bases__ if b is not object]
    head = f"class {name}({', '.join(b.__name__ for b in bases)}):" if bases else f"class {name}:"
    # an extension type with its own C layout cannot share a subclass with another (PEP 800)
    disjoint = cls.__basicsize__ != cls.__base__.__basicsize__
    lines = (["@disjoint_base"] if disjoint else []) + [head]
    first = (cls.__doc__ or "").split("\n", 1)[0]
    if first.startswith(name + "("):
        args = first[len(name) + 1:first.rindex(")")]
        args = ", ".join(a.split("=")[0].strip() + ("=..." if "=" in a else "")
                         for a in args.split(",") if a.strip())
        lines.append(f"    def __init__(self{', ' if args else ''}{args}) -> None: ...")
    for attr, value in vars(cls).items():
        if attr in SKIP or (attr.startswith("_") and attr not in ("__call__",)):
            continue
        if type(value).__name__ == "getset_descriptor":
            lines.append(f"    @property\n    def {attr}(self) -> Any: ...")
        elif callable(value):
            lines.append(function_stub(module, attr, value, indent="    "))
    return "\n".join(lines if not lines[-1].endswith(":") else lines + ["    ..."])


def module_stub(name):
    module = importlib.import_module(name)
    out = [f'"""Type stubs of the compiled module {name} (checked by mypy.stubtest in CI)."""',
           "from typing import Any", "", "import numpy as np",
           "from typing_extensions import disjoint_base",
           "from numpy.typing import ArrayLike, NDArray", ""]
    if name == "rotode.quaternion":
        out[-1:] = ["from scipy.spatial.transform import Rotation  # type: ignore[import-untyped]",
                    ""]
    public = getattr(module, "__all__", None)
    if public is not None:
        out.append(f"__all__ = {list(public)!r}")
    for attr, value in vars(module).items():
        if attr.startswith("__") or attr in SKIP:
            continue
        if inspect.isclass(value) and own(module, value):  # private ones too: they are bases
            out += ["", class_stub(module, attr, value), ""]
        elif callable(value) and own(module, value) and not attr.startswith("_"):
            out.append(function_stub(module, attr, value))
        elif isinstance(value, bool | int | float | str) and not attr.startswith("_"):
            out.append(f"{attr}: {type(value).__name__}")
        elif isinstance(value, tuple | dict) and not attr.startswith("_"):
            out.append(f"{attr}: {type(value).__name__}[Any, ...]" if isinstance(value, tuple)
                       else f"{attr}: dict[Any, Any]")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    for name in sys.argv[1:]:
        path = Path(importlib.import_module(name).__file__).parent / (name.split(".")[1] + ".pyi")
        path.write_text(module_stub(name))
        print("wrote", path)
