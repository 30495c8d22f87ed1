"""The code blocks of README.md and docs/*.md, as the tests execute them."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
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
    """The README's cimport example: (mymod.pyx source, its setup.py source)."""
    readme = ROOT / "README.md"
    (pyx,) = code_blocks(readme, "cython")
    (setup,) = [b for b in code_blocks(readme, "python") if b.startswith(DOWNSTREAM_SETUP)]
    return pyx, setup
