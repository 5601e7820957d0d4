"""Shared fixtures: where the repository, the `pare` binary and the reference peers are.

A test whose peer is missing is skipped with the reason (pytest prints it with ``-rs``,
which ``scripts/test`` passes); with ``CI=true`` it fails instead.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
PAYLOADS = REPO / "examples" / "payloads"
POLICIES = REPO / "examples" / "policies"
CI = os.environ.get("CI", "") in ("true", "1")


def missing(what: str) -> None:
    """Skip, saying what is missing; in CI, fail."""
    if CI:
        pytest.fail(f"{what} (CI=true: a missing peer fails)")
    pytest.skip(what)


@pytest.fixture(scope="session")
def pare_bin() -> Path:
    """The `pare` command the package's output is compared with: $PARE_BIN, else the
    workspace's build (scripts/test builds it first)."""
    for candidate in (os.environ.get("PARE_BIN"), REPO / "target" / "debug" / "pare", REPO / "target" / "release" / "pare"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    missing("no pare binary: set PARE_BIN or run `cargo build` (scripts/test does)")
    raise AssertionError("unreachable")


def run_pare(pare_bin: Path, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(pare_bin), *args], input=input, capture_output=True, check=False)


@pytest.fixture(scope="session")
def node_peers() -> Path:
    """gpt-tokenizer (the reference o200k_base counter) under /tmp/pare-peers."""
    peers = Path(os.environ.get("PEERS_DIR", "/tmp/pare-peers")) / "node_modules"
    if not shutil.which("node") or not (peers / "gpt-tokenizer").is_dir():
        missing(f"the node peers: node and {peers}/gpt-tokenizer (.ci/run, or scripts/peers.sh install)")
    return peers


@pytest.fixture(scope="session")
def node_peers_mcp() -> Path:
    """The official TypeScript MCP SDK (@modelcontextprotocol/sdk) under /tmp/pare-mcp-peers."""
    peers = Path(os.environ.get("PARE_MCP_PEERS", "/tmp/pare-mcp-peers")) / "node_modules"
    if not shutil.which("node") or not (peers / "@modelcontextprotocol" / "sdk").is_dir():
        missing(f"node and {peers}/@modelcontextprotocol/sdk (.ci/run installs it)")
    return peers
