"""Sphinx configuration of rotode's documentation site.

Build from the clone's root, after ``python -m pip install ".[docs]"`` (or an in-place build):

    sphinx-build -W -b html docs docs/_build/html

``-W`` turns every warning into an error; ``nitpicky`` makes each unresolved cross-reference a
warning (rotode's own names must all resolve; NumPy, SciPy, dask and matplotlib are not linked,
so the build needs no network), and MyST warns of every relative link to a missing page or
heading. The gallery (``examples/plot_*.py``) is executed at build time.
"""
import os
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# the clone's root first: `import rotode` then loads the installed copy's compiled modules
# (or those built in place), see rotode/__init__.py
sys.path.insert(0, str(ROOT))
# OpenBLAS worker threads spinning after a BLAS call would slow the gallery on a small machine
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import rotode  # noqa: E402

project = "rotode"
author = "rotode developers"
copyright = "rotode developers, BSD-3-Clause"
version = release = rotode.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "README.md", "Thumbs.db", ".DS_Store",
                    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip"]
templates_path = ["_templates"]

# ---- cross-references: nitpicky, external libraries aside ------------------------------------
nitpicky = True
# NumPy, SciPy, dask and matplotlib are not linked (no intersphinx: the build must not need the
# network); every other reference, rotode's own names first, must resolve
nitpick_ignore_regex = [(r"py:.*", r"(numpy|np|scipy|dask|matplotlib)(\..*)?")]

# ---- MyST (Markdown pages) ------------------------------------------------------------------
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3          # [text](page.md#a-heading) links, as on GitHub

# ---- autodoc / autosummary / numpydoc -----------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"        # the numpydoc sections state the types
numpydoc_show_class_members = False   # class pages document their members by autodoc
                                      # (_templates/autosummary/class.rst)
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# ---- sphinx-gallery --------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": str(DOCS / "auto_examples"),
    "filename_pattern": r"/plot_",        # the examples executed at build time
    # command-line programs (the dask example's cluster version, named on the scaling page;
    # the inertia identification, named on the sensitivity page)
    "ignore_pattern": r"__init__\.py|monte_carlo_attitude\.py|inertia_identification\.py",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "show_memory": False,
    "promote_jupyter_magic": False,
    "capture_repr": ("_repr_html_",),
}

# ---- HTML ------------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"rotode {release}"
html_static_path = []
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": []}
html_show_sourcelink = False


# ---- docstrings written as plain-text mathematics -------------------------------------------
# rotode's docstrings write norms and absolute values as ``|q|``, which reStructuredText reads as
# substitution references. Escape every bar outside inline literals and :math: before numpydoc
# parses the docstring (line blocks and grid tables are left alone);
# the rendered text shows the bars as written. Inside an inline literal, a zero-width space
# follows a period that a space follows, so that autosummary's first-sentence summary does not
# end inside the literal (``1/2 w . I w``).
_LITERALS = re.compile(r"(``.+?``|:math:`[^`]*`)")


def _plain_text_math(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("| ", "+-", "+=")):
            continue
        lines[i] = "".join(part.replace(". ", ".\u200b ") if _LITERALS.fullmatch(part) else
                           re.sub(r"(?<!\\)\|", r"\\|", part)
                           for part in _LITERALS.split(line))


def setup(app):
    app.connect("autodoc-process-docstring", _plain_text_math, priority=100)
