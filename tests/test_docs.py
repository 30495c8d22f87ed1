"""The README and the documentation as a user meets them: every Python example runs as written
(the cimport example is built in tests/test_extending.py), every relative link and heading
anchor exists, the user pages name no private module and carry no working notes, every speed
ratio the README quotes is on the measured page, and the API reference lists every public
name. (The site itself is built with ``sphinx-build -W`` in CI.)"""
import importlib
import re
import subprocess
import sys

import pytest
from docs_examples import (
    DEVELOPER_PAGES,
    DOCS,
    PAGES,
    ROOT,
    USER_PAGES,
    anchors,
    code_blocks,
    links,
    python_examples,
    resolve,
)

import rotode

EXAMPLES = python_examples()
README = ROOT / "README.md"
GALLERY = sorted((ROOT / "examples").glob("plot_*.py"))


def _param(path, i, block):
    marks = [pytest.mark.slow] if "import sympy" in block else []
    return pytest.param(block, id=f"{path.relative_to(ROOT)}[{i}]", marks=marks)


def test_examples_found():
    pages = {path.name for path, _, _ in EXAMPLES}
    assert {"README.md", "getting-started.md", "tour.md", "scaling.md", "events.md"} <= pages
    assert len(EXAMPLES) >= 15


@pytest.mark.parametrize("source", [_param(*e) for e in EXAMPLES])
def test_example_runs(source, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)          # an example that writes files writes them here
    # run as a script pasted into a file: the code under `if __name__ == "__main__":` runs too
    namespace = {"__name__": "__main__"}
    exec(compile(source, "<doc example>", "exec"), namespace)
    if "import sympy" in source:         # the Magnus derivation: check what the page states
        sp, Om, h, e = (namespace[k] for k in ("sp", "Om", "h", "e"))
        w, a = namespace["w"], namespace["a"]
        eps2 = Om.applyfunc(lambda x: sp.expand(x).coeff(e, 2))
        assert sp.simplify(eps2 - h**3 / 12 * a.cross(w)) == sp.zeros(3, 1)
        eps3 = Om.applyfunc(lambda x: sp.expand(x).coeff(e, 3))
        assert sp.simplify(eps3 - h**5 / 240 * a.cross(a.cross(w))) == sp.zeros(3, 1)


def test_examples_that_start_a_cluster_are_guarded():
    # dask starts its workers by importing the script again: without the guard a pasted
    # example fails with "Nanny failed to start"
    sources = [b for _, _, b in EXAMPLES] + [p.read_text() for p in ROOT.glob("examples/*.py")]
    clusters = [s for s in sources if re.search(r"\b(Client|LocalCluster)\(", s)]
    assert len(clusters) >= 3
    for source in clusters:
        assert 'if __name__ == "__main__":' in source, source[:300]


def test_readme_is_user_first():
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings[:3] == ["Quickstart", "Set up a fresh machine", "Which method?"], headings
    # the quickstart is the first code block, ten lines of code at most
    first = re.search(r"^```(\w+)\n(.*?)^```", text, flags=re.M | re.S)
    assert first.group(1) == "python" and first.start() < text.index("## Set up a fresh machine")
    code = [line for line in first.group(2).splitlines()
            if line.strip() and not line.lstrip().startswith("#")]
    assert len(code) <= 10, code
    # the two set-up commands, exactly as CI runs them
    out = subprocess.run([sys.executable, str(ROOT / ".ci" / "readme_commands.py")],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ['python -m pip install . && python -m rotode demo',
                   'python -m pip install ".[test]" && pytest']
    # the documentation's build command, as CI runs it
    assert "sphinx-build -W -b html docs docs/_build/html" in text
    assert "sphinx-build -W -b html docs docs/_build/html" in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page):
    for target, anchor in links(page):
        path = resolve(page, target) if target else page
        assert path.exists(), f"{page.name}: broken link {target!r}"
        if anchor and path.suffix == ".md":
            assert anchor in anchors(path), f"{page.name}: no heading #{anchor} in {target!r}"


# rotode's private modules and files (rotode._driver, rotode/_rodrigues.hpp), private
# attributes (so3._rows_isa) and private names in code spans
PRIVATE = re.compile(r"rotode[./](?:\w+[./])*_[a-z]\w*|(?<![\w/])[A-Za-z]\w*\._[a-z]\w*|`_[a-z]\w*")
NOTES = re.compile(r"\bseed[ _]?0\d|\bwe work from\b|\bwere lost\b|\bunreadable\b|"
                   r"\bwhich rotode used before\b|\bTODO\b|\bFIXME\b|\bXXX\b", re.I)


@pytest.mark.parametrize("page", USER_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_user_pages_name_no_private_module_and_carry_no_notes(page):
    text = page.read_text()
    assert not PRIVATE.findall(text), PRIVATE.findall(text)
    assert not NOTES.findall(text), NOTES.findall(text)


def test_developer_pages_are_kept_apart():
    """The developer pages appear in the developer toctree only; user toctrees never list them."""
    toctrees = {}
    for page in DOCS.glob("*.md"):
        for block in re.findall(r"^```\{toctree\}\n(.*?)^```", page.read_text(),
                                flags=re.M | re.S):
            entries = [line.strip() for line in block.splitlines()
                       if line.strip() and not line.startswith(":")]
            toctrees[page.name] = toctrees.get(page.name, []) + entries
    developer = {name[:-3] for name in DEVELOPER_PAGES if name != "developer.md"}
    assert set(toctrees["developer.md"]) == developer
    for name, entries in toctrees.items():
        if name != "developer.md":
            assert not developer & set(entries), (name, entries)
    assert toctrees["index.md"] == ["getting-started", "how-to", "explanations", "api/index",
                                    "developer"]


RATIO = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?:-(\d+(?:\.\d+)?))?x\b")


@pytest.mark.parametrize("page", [README, DOCS / "which-method.md"], ids=lambda p: p.name)
def test_quoted_speed_ratios_are_on_the_measured_page(page):
    measured = (DOCS / "performance.md").read_text()
    assert "python benchmarks/docs_numbers.py" in measured
    quoted = RATIO.findall(page.read_text())
    assert len(quoted) >= 5
    for low, high in quoted:
        for value in filter(None, (low, high)):
            assert re.search(rf"(?<![\d.]){re.escape(value)}x", measured), (
                f"{page.name} quotes {value}x, which docs/performance.md does not contain: "
                "run python benchmarks/docs_numbers.py and quote its output")


def test_api_reference_lists_every_public_name():
    api = "\n".join(p.read_text() for p in (DOCS / "api").glob("*.rst"))
    listed = set(re.findall(r"^   (rotode\.)?(\w+)$", api, flags=re.M))
    listed = {name for _, name in listed}
    missing = [n for n in rotode.__all__ if n not in listed and n not in {
        "__version__",
        # modules (one page each), and the frames/inertia names re-exported at the top level
        "quaternion", "so3", "inertia", "frames", "omega", "torque", "rhs", "exact", "events",
        "kinematic", "dynamic", "implicit", "steps"}]
    assert not missing, missing
    for module in ("quaternion", "so3", "omega", "torque", "events", "rhs", "steps", "exact",
                   "inertia", "frames", "methods", "kinematic", "dynamic", "implicit"):
        page = (DOCS / "api" / f"{module}.rst").read_text()
        names = importlib.import_module(f"rotode.{module}").__all__
        absent = [n for n in names if not re.search(rf"^   (rotode\.)?{n}$", page, flags=re.M)]
        assert not absent, (module, absent)


@pytest.mark.parametrize("script", GALLERY, ids=lambda p: p.name)
def test_gallery_example_has_a_title_and_runs_from_the_docs_build(script):
    # sphinx-gallery takes the title from the module docstring's first underlined line and
    # runs the script in examples/ with neither __file__ nor command-line arguments
    text = script.read_text()
    doc = re.match(r'"""\n(.+)\n(=+)\n', text)
    assert doc and len(doc.group(2)) >= len(doc.group(1)), script.name
    assert "sys.argv" not in text


def test_gallery_covers_the_tasks():
    names = {p.stem for p in GALLERY}
    assert {"plot_gyroscope_to_attitude", "plot_satellite_gravity_gradient",
            "plot_tumbling_bodies_events", "plot_events_on_the_group", "plot_from_solve_ivp",
            "plot_compiled_torque", "plot_dask_monte_carlo"} <= names
    how_to = (DOCS / "how-to.md").read_text()
    for name in names:
        assert f"auto_examples/{name}.rst" in how_to, name


def test_cython_page_shows_the_built_example():
    assert len(code_blocks(DOCS / "cython.md", "cython")) == 2
