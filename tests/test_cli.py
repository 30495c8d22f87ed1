"""The command line as a new user meets it: from the clone's root and from anywhere else."""
import os
import subprocess
import sys
from pathlib import Path

import rotode

ROOT = Path(__file__).resolve().parent.parent


def run(args, cwd):
    # the rotode this test imports (installed, or a source folder built in place)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(rotode.get_include()))
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=300)


def test_help_from_clone_root_is_plain_text():
    # python -m rotode in the root finds the source folder first on sys.path: it must still
    # reach the compiled modules (of the installed copy, or of an in-place build)
    res = run(["-m", "rotode", "--help"], cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert "demo" in res.stdout and "study" in res.stdout
    assert "``" not in res.stdout and "seed 00" not in res.stdout


def test_import_from_clone_root_uses_compiled_modules():
    res = run(["-c", "import rotode.quaternion as q; print(q.__file__)"], cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().endswith((".so", ".pyd")), res.stdout


def test_study_writes_to_its_own_folder(tmp_path):
    res = run(["-m", "rotode", "study", "newton-map", "--quick", "--no-plot"], cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in (tmp_path / "rotode-studies").iterdir()) == [
        "newton-map-iterations.csv"]
    assert "newton-map: running" in res.stdout


def test_source_folder_without_build_or_install_says_what_to_do(tmp_path):
    # a copy of the source folder alone (nothing built, nothing installed on the path)
    src = tmp_path / "rotode"
    src.mkdir()
    (src / "__init__.py").write_text((ROOT / "rotode" / "__init__.py").read_text())
    # -S: no site-packages, so no installed rotode either; -E: PYTHONPATH ignored
    res = subprocess.run([sys.executable, "-S", "-E", "-c", "import rotode"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 1
    assert "ImportError" in res.stderr and "python -m pip install ." in res.stderr, res.stderr
