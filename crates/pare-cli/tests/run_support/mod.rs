//! Running the built `pare` from the repository root, for the CLI tests that read the
//! checked-in examples and test data by their repository paths.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The repository root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `pare ARGS` in the repository root with `stdin`: exit code, stdout, stderr.
pub fn run(args: &[&str], stdin: impl Into<Vec<u8>>) -> (i32, String, String) {
    let out = Command::cargo_bin("pare")
        .expect("the pare binary is built")
        .current_dir(root())
        .args(args)
        .write_stdin(stdin)
        .output()
        .expect("pare runs");
    (
        out.status.code().expect("exited"),
        String::from_utf8(out.stdout).expect("UTF-8"),
        String::from_utf8(out.stderr).expect("UTF-8"),
    )
}
