"""mypy reads rotode's types: on a typed user script (tests/typing/user_script.py) it reveals
`IntegrationResult` for `rotode.integrate`, `OdeResult` for `rotode.solve_ivp` and NumPy
arrays for the kernels, not ``Any``; the script also runs."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "tests" / "typing" / "user_script.py"

pytest.importorskip("mypy")


def _expected():
    """``{line: (exact?, type)}`` from the ``# reveal: T`` / ``# reveal~: T`` comments."""
    found = {}
    for n, line in enumerate(SCRIPT.read_text().splitlines(), start=1):
        m = re.search(r"reveal_type\(.*# reveal(~?): (.+)$", line)
        if m:
            found[n] = (m.group(1) == "", m.group(2).strip())
    return found


def test_mypy_reveals_rotode_types(tmp_path):
    # --follow-imports=silent: rotode's own modules are read for their types, not reported on
    # (as for an installed package); the source folder stands for the installed package here
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-error-summary",
         "--cache-dir", str(tmp_path / "mypy-cache"), str(SCRIPT.relative_to(ROOT))],
        cwd=ROOT, capture_output=True, text=True)
    revealed = {int(m.group(1)): m.group(2) for m in re.finditer(
        r"^[^:\n]+:(\d+): note: Revealed type is \"(.+)\"$", out.stdout, flags=re.M)}
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert not errors, "\n".join(errors)
    expected = _expected()
    assert len(expected) >= 10 and set(revealed) == set(expected), out.stdout
    for line, (exact, want) in expected.items():
        got = revealed[line]
        assert (got == want) if exact else (want in got), f"line {line}: {got!r}, want {want!r}"


def test_user_script_runs():
    subprocess.run([sys.executable, str(SCRIPT)], cwd=ROOT, check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})
