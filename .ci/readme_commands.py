"""Print the README's two set-up commands, one per line, exactly as a new user types them.

They are the two ``bash`` blocks under the heading "Set up a fresh machine": the first runs the
demo, the second installs the test extras and runs the tests. ``.ci/run`` runs what this prints,
so the README and CI cannot drift apart.
"""
import re
import sys
from pathlib import Path

HEADING = "## Set up a fresh machine"


def commands(readme):
    section = readme.split(HEADING, 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```bash\n(.*?)^```", section, flags=re.M | re.S)
    lines = [b.strip() for b in blocks]
    if len(lines) != 2 or any("\n" in c for c in lines):
        sys.exit(f"README: expected two one-line bash blocks under {HEADING!r}, got {lines!r}")
    return lines


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    print("\n".join(commands((root / "README.md").read_text())))
