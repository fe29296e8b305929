"""Shared fixtures: the repository root and the quiver CLI built next to the module."""
import os
import shutil

import pytest

ROOT = os.environ.get("QV_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))


@pytest.fixture
def root():
    return ROOT


@pytest.fixture
def cli():
    path = os.environ.get("QV_CLI") or shutil.which("quiver")
    if not path:
        pytest.skip("the quiver CLI is not built (QV_CLI unset)")
    return path
