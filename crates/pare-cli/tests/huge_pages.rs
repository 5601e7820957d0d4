//! Transparent huge pages: none in a one-shot run, from before the runtime's first
//! allocation; the proxies and the servers they start keep the system's setting
//! (`src/huge_pages.rs`). Read from `/proc` while each process waits on its input. Linux
//! only; elsewhere these tests say so and check nothing.

use crate::mcp_support::{Proxy, fake_server, pare_bin, pids, python};

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A `/proc/<pid>/<file>` line's value (`THP_enabled`, `AnonHugePages`), trimmed.
fn proc_field(pid: u32, file: &str, field: &str) -> Option<String> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/{file}")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .map(|v| v.trim().to_owned())
}

/// Whether this kernel says where huge pages stand (`THP_enabled` in `/proc/self/status`,
/// Linux 5.0 on); a note where a user sees it when not.
fn kernel_says() -> bool {
    let says = proc_field(std::process::id(), "status", "THP_enabled").is_some();
    if !says {
        eprintln!("huge_pages: not run: no THP_enabled in /proc/self/status (not Linux 5.0+)");
    }
    says
}

/// Waits until `pid` sleeps (blocked on its input).
fn wait_until_asleep(pid: u32) {
    let start = Instant::now();
    while proc_field(pid, "status", "State").is_none_or(|s| !s.starts_with('S')) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "pid {pid} never waited"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Regression: the runtime allocates before `main`, where mimalloc's first memory was
/// advised for huge pages; every one-shot run (`pare --version` too) zeroed three 2 MB
/// pages there, about 0.3 ms of a 2.3 ms run, though `main` turned them off at once.
/// While `pare compact` waits on stdin it must hold none, and have them turned off.
#[test]
fn regression_a_one_shot_run_took_huge_pages_before_main() {
    if !kernel_says() {
        return;
    }
    let system =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    if system.contains("[never]") {
        eprintln!("huge_pages: the system allows none, so holding none proves little");
    }
    let mut pare = Command::new(pare_bin())
        .arg("compact")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = pare.id();
    wait_until_asleep(pid);
    let thp = proc_field(pid, "status", "THP_enabled");
    let held = proc_field(pid, "smaps_rollup", "AnonHugePages");
    drop(pare.stdin.take());
    pare.wait().unwrap();
    assert_eq!(thp.as_deref(), Some("0"), "huge pages still allowed");
    assert_eq!(
        held.as_deref(),
        Some("0 kB"),
        "huge pages held before any input"
    );
}

/// `pare mcp`, its server and the server's child keep the setting pare was started with.
#[test]
fn the_proxy_and_its_server_keep_the_systems_huge_pages() {
    if !kernel_says() {
        return;
    }
    let ours = proc_field(std::process::id(), "status", "THP_enabled");
    if ours.as_deref() != Some("1") {
        eprintln!("huge_pages: not run: this test process has huge pages off itself");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (py, server) = (python(), fake_server());
    let mut p = Proxy::spawn(
        &["--", &py, &server, "orphan"],
        &[("FAKE_PIDS", dir.path().to_str().unwrap())],
    );
    p.initialize();
    let pids = pids(dir.path(), 1);
    assert_eq!(pids.len(), 2, "the server's and its child's ids: {pids:?}");
    let seen: Vec<(u32, Option<String>)> = std::iter::once(p.pid())
        .chain(pids)
        .map(|pid| (pid, proc_field(pid, "status", "THP_enabled")))
        .collect();
    p.close_stdin();
    p.finish();
    for (pid, thp) in seen {
        assert_eq!(thp.as_deref(), Some("1"), "pid {pid}");
    }
}
