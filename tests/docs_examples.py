"""The pages of README.md, CONTRIBUTING.md and docs/ as the tests read them: their code blocks,
their relative links and their headings."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
GENERATED = ("_build", "auto_examples", "api/generated")
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md",
         *sorted(p for p in DOCS.rglob("*.md")
                 if not any(part in p.relative_to(DOCS).as_posix() for part in GENERATED))]
# the developer pages (docs/developer.md's toctree); every other page of docs/ is for users
DEVELOPER_PAGES = ("developer.md", "contributing.md", "architecture.md", "stepper-contract.md",
                   "benchmarks.md")
USER_PAGES = [ROOT / "README.md",
              *(p for p in PAGES if p.parent == DOCS and p.name not in DEVELOPER_PAGES)]
CYTHON_PAGE = DOCS / "cython.md"
DOWNSTREAM_PYX = "# mymod.pyx"
DOWNSTREAM_SETUP = "# setup.py of a downstream package"


def code_blocks(path, language):
    """The ```language fenced blocks of ``path``, in order."""
    return re.findall(rf"^```{language}\n(.*?)^```", path.read_text(), flags=re.M | re.S)


def python_examples():
    """(page, index, source) of every Python block but the downstream setup.py."""
    return [(path, i, block) for path in PAGES
            for i, block in enumerate(code_blocks(path, "python"))
            if not block.startswith(DOWNSTREAM_SETUP)]


def downstream_example():
    """The cimport example of docs/cython.md: (mymod.pyx source, its setup.py source)."""
    (pyx,) = [b for b in code_blocks(CYTHON_PAGE, "cython") if b.startswith(DOWNSTREAM_PYX)]
    (setup,) = [b for b in code_blocks(CYTHON_PAGE, "python") if b.startswith(DOWNSTREAM_SETUP)]
    return pyx, setup


def _prose(text):
    """``text`` without its fenced code blocks."""
    return re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)


def slug(heading):
    """The anchor of a Markdown heading, as GitHub and MyST make it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path):
    """The heading anchors of a Markdown page (an included file's, for a MyST include)."""
    text = path.read_text()
    include = re.search(r"^```\{include\} (\S+)", text, flags=re.M)
    if include:
        text = (path.parent / include.group(1)).read_text()
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", _prose(text), flags=re.M)}


def links(path):
    """(target, anchor) of every relative Markdown link and image of ``path``."""
    found = re.findall(r"\]\(([^)\s]+)\)", _prose(path.read_text()))
    out = []
    for target in found:
        if re.match(r"[a-z]+:", target):            # http:, https:, mailto:
            continue
        page, _, anchor = target.partition("#")
        out.append((page, anchor))
    return out


def resolve(path, target):
    """The file a relative link of ``path`` points to (a gallery page: its example script)."""
    rel = (path.parent / target).resolve()
    gallery = DOCS / "auto_examples"
    if rel.is_relative_to(gallery):
        name = rel.relative_to(gallery)
        return ROOT / "examples" / ("README.txt" if name.stem == "index"
                                    else name.with_suffix(".py"))
    return rel
