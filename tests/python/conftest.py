"""Fixtures of the Python module's tests: the pyrgrid program (for results
the module must equal bit for bit) and the source tree's examples.

Run by CTest (test_python) with PYRGRID_LIBRARY, PYTHONPATH and PYRGRID_CLI
set; by hand: PYTHONPATH=python PYRGRID_CLI=build/pyrgrid /usr/bin/python3 -m pytest tests/python
"""
import os
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def cli():
    path = os.path.abspath(os.environ.get("PYRGRID_CLI", str(SOURCE / "build" / "pyrgrid")))
    if not os.access(path, os.X_OK):
        pytest.skip(f"the pyrgrid program is not at {path} (set PYRGRID_CLI)")

    def run(*args, cwd=None, expect=0):
        r = subprocess.run([path, *map(str, args)], capture_output=True, text=True, cwd=cwd)
        assert r.returncode == expect, f"pyrgrid {' '.join(map(str, args))}: exit {r.returncode}\n{r.stdout}{r.stderr}"
        return r
    return run


@pytest.fixture(scope="session")
def examples():
    return SOURCE / "examples"


@pytest.fixture(autouse=True)
def _private_wisdom(tmp_path, monkeypatch):
    # calibration and wisdom exports of a test touch its own file only
    monkeypatch.setenv("PYRGRID_WISDOM", str(tmp_path / "wisdom"))
