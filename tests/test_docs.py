"""Every Python example in README.md and docs/*.md runs as written (the cimport example is
built in tests/test_extending.py)."""
import pytest
from docs_examples import ROOT, python_examples

EXAMPLES = python_examples()


def _param(path, i, block):
    marks = [pytest.mark.slow] if "import sympy" in block else []
    return pytest.param(block, id=f"{path.relative_to(ROOT)}[{i}]", marks=marks)


def test_examples_found():
    pages = {path.name for path, _, _ in EXAMPLES}
    assert "README.md" in pages and len(EXAMPLES) >= 6


@pytest.mark.parametrize("source", [_param(*e) for e in EXAMPLES])
def test_example_runs(source, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)          # an example that writes files writes them here
    namespace = {"__name__": "__doc_example__"}
    exec(compile(source, "<doc example>", "exec"), namespace)
    if "import sympy" in source:         # the Magnus derivation: check what the page states
        sp, Om, h, e = (namespace[k] for k in ("sp", "Om", "h", "e"))
        w, a = namespace["w"], namespace["a"]
        eps2 = Om.applyfunc(lambda x: sp.expand(x).coeff(e, 2))
        assert sp.simplify(eps2 - h**3 / 12 * a.cross(w)) == sp.zeros(3, 1)
        eps3 = Om.applyfunc(lambda x: sp.expand(x).coeff(e, 3))
        assert sp.simplify(eps3 - h**5 / 240 * a.cross(a.cross(w))) == sp.zeros(3, 1)
