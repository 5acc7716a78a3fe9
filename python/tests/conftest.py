# The built package (PYTHONPATH=build/python, set by ctest) and the paths the tests compare with.
import json
import os
import subprocess

import pytest

SOURCE = os.environ.get("RLX_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("RLX_CLI", os.path.join(SOURCE, "build", "bin", "rlx"))


def fixture(*parts):
    return os.path.join(SOURCE, "tests", "fixtures", *parts)


def cli_json(*args):
    out = subprocess.run([CLI, *args, "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture
def torch():
    try:
        import torch as t
    except ImportError:
        pytest.skip("Debian's python3-torch is not installed")
    return t
