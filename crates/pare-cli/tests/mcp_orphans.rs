//! No orphans: when `pare mcp` ends — the client closes stdin, or SIGTERM, SIGINT or SIGHUP
//! reaches it — the server it started ends too, and so do the server's children, even when
//! the server ignores the end of its input or SIGTERM. The stand-in server
//! (`tests/mcp/fake_server.py`, modes orphan, stubborn, escape) starts a `sleep` child and
//! writes both process ids to a file. Needs python3.

use crate::mcp_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use mcp_support::{Proxy, fake_server, pare_bin, pids, python};

/// Whether `pid` is a live process (a zombie is not).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Every one of `pids` ends within 5 s (they are signalled before pare exits).
fn assert_gone(pids: &[u32], how: &str) {
    assert_gone_since(Instant::now(), pids, how);
}

/// Every one of `pids` ends within 5 s of `start` (when the client closed or signalled).
fn assert_gone_since(start: Instant, pids: &[u32], how: &str) {
    while pids.iter().any(|&p| alive(p)) {
        if start.elapsed() > Duration::from_secs(5) {
            let left: Vec<_> = pids.iter().filter(|&&p| alive(p)).collect();
            for p in &left {
                let _ = Command::new("kill")
                    .args(["-KILL", &p.to_string()])
                    .stderr(Stdio::null())
                    .status();
            }
            panic!("{how}: server processes {left:?} outlived pare");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal(pid: u32, name: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{name} {pid}");
}

/// pare over the stand-in server in `mode`, initialized, and the server's and its child's ids.
fn proxy(mode: &str, dir: &Path) -> (Proxy, Vec<u32>) {
    let (py, server) = (python(), fake_server());
    let mut p = Proxy::spawn(
        &["--", &py, &server, mode],
        &[("FAKE_PIDS", dir.to_str().unwrap())],
    );
    p.initialize();
    let pids = pids(dir, 1);
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|&p| alive(p)));
    (p, pids)
}

fn ends_by_signal(name: &str, code: i32) {
    let dir = tempfile::tempdir().unwrap();
    let (p, pids) = proxy("orphan", dir.path());
    let sent = Instant::now();
    signal(p.pid(), name);
    let (status, stderr) = p.finish();
    assert_eq!(status.code(), Some(code), "SIG{name}: {status}: {stderr}");
    assert!(stderr.contains("stopping 1 server"), "{stderr}");
    assert_gone_since(sent, &pids, &format!("SIG{name}"));
}

#[test]
fn sigterm_to_pare_ends_the_server_and_its_child() {
    ends_by_signal("TERM", 128 + 15);
}

#[test]
fn sigint_to_pare_ends_the_server_and_its_child() {
    ends_by_signal("INT", 128 + 2);
}

#[test]
fn sighup_to_pare_ends_the_server_and_its_child() {
    ends_by_signal("HUP", 128 + 1);
}

#[test]
fn client_eof_ends_a_server_that_ignores_its_input_closing() {
    let dir = tempfile::tempdir().unwrap();
    let (mut p, pids) = proxy("orphan", dir.path());
    let closed = Instant::now();
    p.close_stdin();
    let (status, stderr) = p.finish();
    assert!(status.success(), "{status}: {stderr}");
    // Counted from the client's EOF, not from pare's exit: nothing was open, so pare
    // has nothing to wait for before stopping the server.
    assert_gone_since(closed, &pids, "client EOF");
}

/// The client closes stdin, then loses patience during pare's drain and SIGTERMs it: the
/// server must not be left behind (one leaked per session before).
#[test]
fn sigterm_while_pare_waits_for_the_server_after_client_eof_leaves_no_server() {
    let dir = tempfile::tempdir().unwrap();
    let (mut p, pids) = proxy("orphan", dir.path());
    // A request the server never answers keeps pare draining after the EOF.
    p.send(serde_json::json!({"jsonrpc": "2.0", "id": 99, "method": "test/never"}));
    p.close_stdin();
    std::thread::sleep(Duration::from_secs(2));
    signal(p.pid(), "TERM");
    let (status, stderr) = p.finish();
    assert_eq!(status.code(), Some(143), "{status}: {stderr}");
    assert_gone(&pids, "SIGTERM after EOF");
}

#[test]
fn a_server_that_ignores_sigterm_is_killed_after_the_grace_period() {
    let dir = tempfile::tempdir().unwrap();
    let (p, pids) = proxy("stubborn", dir.path());
    signal(p.pid(), "TERM");
    let (status, stderr) = p.finish();
    assert_eq!(status.code(), Some(143), "{status}: {stderr}");
    assert_gone(&pids, "SIGTERM ignored");
}

/// The server's stderr goes through pare: a process that outlives pare (here one that left
/// the server's process group) does not hold the client's stderr pipe open.
#[test]
fn regression_the_clients_stderr_closes_when_pare_exits() {
    let dir = tempfile::tempdir().unwrap();
    let (py, server) = (python(), fake_server());
    let mut pare = Command::new(pare_bin())
        .args(["mcp", "--", &py, &server, "escape"])
        .env("FAKE_PIDS", dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pids = pids(dir.path(), 1);
    let mut stderr = pare.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        let _ = tx.send(s);
    });
    drop(pare.stdin.take());
    let status = pare.wait().unwrap();
    let closed = rx.recv_timeout(Duration::from_secs(30));
    for p in &pids {
        let _ = Command::new("kill")
            .args(["-KILL", &p.to_string()])
            .stderr(Stdio::null())
            .status();
    }
    assert!(status.success(), "{status}");
    assert!(
        closed.is_ok(),
        "pare exited but the client's stderr pipe stayed open (held by the server's child)"
    );
}

/// `pare mcp --listen` with its stderr read on a thread until it says where it listens.
fn listening(dir: &Path) -> (Child, String, mpsc::Receiver<String>) {
    let (py, server) = (python(), fake_server());
    let mut child = Command::new(pare_bin())
        .args([
            "mcp",
            "--listen",
            "127.0.0.1:0",
            "--",
            &py,
            &server,
            "orphan",
        ])
        .env("FAKE_PIDS", dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
            let _ = tx.send(String::from_utf8_lossy(&all).into_owned());
        }
    });
    let start = Instant::now();
    let addr = loop {
        let seen = rx.recv_timeout(Duration::from_secs(30)).expect("stderr");
        if let Some(rest) = seen.split("listening on http://").nth(1)
            && let Some((addr, _)) = rest.split_once("/mcp")
        {
            break addr.to_owned();
        }
        assert!(start.elapsed() < Duration::from_secs(30));
    };
    (child, addr, rx)
}

fn initialize_over_http(addr: &str) {
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
}

fn wait_exit(child: &mut Child) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("pare did not exit");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sigterm_to_pare_listen_ends_every_sessions_server() {
    let dir = tempfile::tempdir().unwrap();
    let (mut pare, addr, _stderr) = listening(dir.path());
    initialize_over_http(&addr);
    initialize_over_http(&addr);
    let pids = pids(dir.path(), 2);
    assert_eq!(pids.len(), 4);
    signal(pare.id(), "TERM");
    let status = wait_exit(&mut pare);
    assert_eq!(status.code(), Some(143), "{status}");
    assert_gone(&pids, "SIGTERM to --listen");
}
