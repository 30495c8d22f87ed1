"""Docstrings are contracts: every public name states its parameters, what it returns and an
example, and every example runs.

The rule (numpydoc sections; the public names are those of tests/public_api.py):

- every public function and class has a one-line summary, a ``See Also`` section and an
  ``Examples`` section with ``>>>`` lines;
- a function has a ``Parameters`` section naming every parameter of its signature (none when
  it takes none), the entry of a parameter with a default saying "optional" or "default"
  (classes alike), and a ``Returns`` (or ``Yields``) section: every public function returns
  something;
- a class documents its constructor's parameters in the ``Parameters`` section of the class
  docstring (``__init__`` has no docstring of its own to read), and has no ``Returns``;
- a public method or property of a public class has at least a one-line docstring; a data
  member (a Cython attribute without a docstring, a NamedTuple or dataclass field) is named in
  the class's ``Attributes`` or ``Parameters`` section;
- a public constant (a dict or tuple in an ``__all__``) is named in its module's docstring;
- every ``>>>`` example of these docstrings and of the public modules' docstrings runs and
  prints what it shows (``doctest``, run on the collected ``__doc__`` strings: pytest's
  ``--doctest-modules`` does not read the compiled modules' docstrings).
"""
import doctest
import inspect
import re

import numpy as np
import pytest
from public_api import (
    callables,
    constants,
    docstring,
    documented_names,
    is_documented_data,
    is_function,
    is_routine,
    members,
    modules,
    names,
    sections,
)

CALLABLES = callables()
DOCTEST_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _parameters(obj):
    """The names of the parameters a docstring must document (``self`` left out)."""
    sig = inspect.signature(obj)
    return [p.name for p in sig.parameters.values() if p.name != "self"]


def _entries(body):
    """``{name: text}`` of the entries of a Parameters section (a grouped ``a, b : type``
    entry under each of its names)."""
    found, names = {}, []
    for line in body.split("\n"):
        if line and not line[0].isspace():
            head = line.split(" : ")[0]
            names = [n.strip().lstrip("*") for n in head.split(",")]
            for n in names:
                found[n] = line
        else:
            for n in names:
                found[n] += "\n" + line
    return found


def _contract_problems(name, obj):
    doc = docstring(obj)
    found = sections(doc)
    problems = []
    if not found[""].strip():
        problems.append("no summary line")
    params = _parameters(obj)
    if params:
        if "Parameters" not in found:
            problems.append("no Parameters section")
        else:
            missing = [p for p in params if p not in documented_names(found["Parameters"])]
            if missing:
                problems.append(f"Parameters does not document {missing}")
            entries = _entries(found["Parameters"])
            silent = [p.name for p in inspect.signature(obj).parameters.values()
                      if p.default is not inspect.Parameter.empty and p.name in entries
                      and not re.search(r"optional|default", entries[p.name], re.I)]
            if silent:
                problems.append(f"Parameters does not state the defaults of {silent}")
    if is_function(obj):
        if "Returns" not in found and "Yields" not in found:
            problems.append("no Returns section")
    elif "Returns" in found:
        problems.append("a class has no Returns section (document attributes instead)")
    if "See Also" not in found:
        problems.append("no See Also section")
    if ">>>" not in found.get("Examples", ""):
        problems.append("no Examples section with >>> lines")
    return problems


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_public_callable_states_its_contract(name):
    problems = _contract_problems(name, CALLABLES[name])
    assert not problems, f"{name}: " + "; ".join(problems)


def _member_cases():
    cases = []
    for name, obj in sorted(CALLABLES.items()):
        if isinstance(obj, type):
            for attr, (member, owner) in sorted(members(obj).items()):
                cases.append(pytest.param(obj, attr, member, owner, id=f"{name}.{attr}"))
    return cases


@pytest.mark.parametrize(("cls", "attr", "member", "owner"), _member_cases())
def test_public_member_is_documented(cls, attr, member, owner):
    if is_documented_data(member):
        if type(member).__name__ == "getset_descriptor" and docstring(member).strip():
            return                       # a Cython property with its own docstring
        listed = set()
        for klass in (cls, owner):
            found = sections(docstring(klass))
            for title in ("Attributes", "Parameters"):
                listed |= documented_names(found.get(title, ""))
        assert attr in listed, (f"{owner.__name__}.{attr}: not in the Attributes section of "
                                f"{cls.__name__}'s docstring")
    else:
        assert is_routine(member) or isinstance(member, property), (attr, type(member))
        assert docstring(member).strip(), f"{owner.__name__}.{attr} has no docstring"


@pytest.mark.parametrize("name", sorted(constants()))
def test_public_constant_is_named_in_its_module_docstring(name):
    _, module = constants()[name]
    short = name.rsplit(".", 1)[1]
    assert f"``{short}``" in (module.__doc__ or "") or f"`{short}`" in (module.__doc__ or ""), (
        f"{name} is not described in the docstring of {module.__name__}")


def _docstrings():
    """``{id: (docstring, globals)}`` of every public docstring (modules, names, members)."""
    found = {}
    for modname, module in modules().items():
        found[modname] = (module.__doc__ or "", module)
    for name, (obj, module) in names().items():
        if not callable(obj):
            continue
        home = inspect.getmodule(obj) or module
        found[name] = (obj.__doc__ or "", home)
        if isinstance(obj, type):
            for attr, (member, owner) in members(obj).items():
                key = f"{owner.__module__}.{owner.__name__}.{attr}"
                if not is_documented_data(member):
                    found.setdefault(key, (getattr(member, "__doc__", None) or "", home))
    return {k: v for k, v in found.items() if ">>>" in v[0]}


DOCSTRINGS = _docstrings()


def test_examples_found():
    assert len(DOCSTRINGS) >= len(CALLABLES)


@pytest.mark.parametrize("name", sorted(DOCSTRINGS))
def test_docstring_example_runs(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)          # an example that writes files writes them here
    doc, module = DOCSTRINGS[name]
    globs = {"__name__": "__main__"}    # as a user who pastes the example: nothing imported
    parser = doctest.DocTestParser()
    test = parser.get_doctest(doc, globs, name, getattr(module, "__file__", None), 0)
    runner = doctest.DocTestRunner(optionflags=DOCTEST_FLAGS)
    report = []
    with np.printoptions(legacy=False):
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_the_contract_check_can_fail():
    def bare(x, y=1):
        """Sum."""
        return x + y

    problems = _contract_problems("bare", bare)
    assert problems == ["no Parameters section", "no Returns section", "no See Also section",
                        "no Examples section with >>> lines"]

    def partial(x, y=1):
        """Sum.

        Parameters
        ----------
        x : float
        z : float

        Returns
        -------
        float

        See Also
        --------
        bare

        Examples
        --------
        >>> partial(1)
        2
        """
        return x + y

    assert _contract_problems("partial", partial) == ["Parameters does not document ['y']"]
    partial.__doc__ = partial.__doc__.replace("z : float", "y : float")
    assert _contract_problems("partial", partial) == [
        "Parameters does not state the defaults of ['y']"]
