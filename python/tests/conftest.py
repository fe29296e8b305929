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



# `make test` installs every peer these tests compare against (PyTorch,
# PyData Sparse, the apache-arrow npm package, ...) and sets
# QV_REQUIRE_PEERS=1: a test skipped there for a missing peer would pass
# ctest's python_pytest in silence, so it fails the run instead.
_PEER_SKIP_WORDS = ("could not import", "npm", "is not installed")


def _peer_skips(config):
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or not os.environ.get("QV_REQUIRE_PEERS"):
        return []
    found = []
    for rep in reporter.stats.get("skipped", []):
        reason = str(rep.longrepr[2]) if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        if any(w in reason for w in _PEER_SKIP_WORDS):
            found.append(f"{rep.nodeid}: {reason}")
    return found


def pytest_sessionfinish(session, exitstatus):
    if _peer_skips(session.config):
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    missing = _peer_skips(config)
    if missing:
        terminalreporter.write_line("QV_REQUIRE_PEERS: tests skipped for a missing peer:", red=True)
        for line in missing:
            terminalreporter.write_line("  " + line, red=True)
