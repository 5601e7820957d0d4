//! What the tests marked `#[ignore = "needs …"]` need, checked when they run. They run only
//! when asked (`cargo test -- --include-ignored`, which `scripts/test` passes where the peers
//! are installed, and always with `CI=true`), so a missing peer fails the test and says what
//! is missing; it never passes without checking. `.ci/run` installs all of them. Used by
//! both crates' tests (the CLI's through `#[path]`), so it depends on std only.
#![allow(dead_code)] // each test file uses a different subset

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Where `.ci/run` installs the node reference peers (`gpt-tokenizer`, `@toon-format/toon`).
pub const PEERS: &str = "/tmp/pare-peers/node_modules";

const HOW: &str = ".ci/run installs it; scripts/test then runs this test";

/// Does `cmd args` run and succeed?
pub fn works(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// node on PATH.
pub fn node() {
    assert!(
        works("node", &["--version"]),
        "this test needs node on PATH, which is missing"
    );
}

/// python3 on PATH.
pub fn python3() {
    assert!(
        works("python3", &["--version"]),
        "this test needs python3 on PATH, which is missing"
    );
}

/// node and the reference peers under [`PEERS`]; returns [`PEERS`].
pub fn node_peers() -> &'static str {
    node();
    for peer in ["gpt-tokenizer", "@toon-format/toon"] {
        let dir = Path::new(PEERS).join(peer);
        assert!(
            dir.is_dir(),
            "this test needs the node peer {} ({HOW})",
            dir.display()
        );
    }
    PEERS
}

/// gpt-tokenizer's count of each file as node reads it (`fs.readFileSync(f, 'utf8')`: invalid
/// UTF-8 becomes U+FFFD, a BOM stays), as `peers.sh count` counts it, except that
/// `<|endoftext|>` and the like count as the ordinary text pare counts them as (countTokens
/// refuses them by default; a source file that mentions one is still text). Fails when node
/// or the peer is missing.
pub fn node_counts(files: &[PathBuf]) -> Vec<u64> {
    let script = "const fs = require('fs'); const { countTokens } = require('gpt-tokenizer');\n\
                  for (const f of process.argv.slice(1))\n\
                    console.log(countTokens(fs.readFileSync(f, 'utf8'), { disallowedSpecial: new Set() }));";
    let out = Command::new("node")
        .env("NODE_PATH", node_peers())
        .arg("-e")
        .arg(script)
        .args(files)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "node: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().expect("a count"))
        .collect()
}

/// The `real.sh` payloads (`scripts/real_payloads.sh`, which `.ci/run` runs):
/// `$PARE_REAL_DIR`, default `/tmp/pare-real`. At least one must be there.
pub fn real_files() -> Vec<PathBuf> {
    let dir = std::env::var_os("PARE_REAL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/pare-real"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "this test needs the real.sh payloads in {} (scripts/real_payloads.sh {}; {HOW})",
        dir.display(),
        dir.display()
    );
    files
}
