//! The server processes pare starts, and how they end: no orphans.
//!
//! Each server runs in its own process group, so that the server and whatever it starts
//! (a `node` under `npx`, a worker) can be signalled together, and so that a Ctrl-C at a
//! terminal reaches pare, not the server behind its back. Stopping one is: SIGTERM to the
//! group, up to a grace period for the group to go, SIGKILL to the group, reap. Every live
//! server is registered here, so that a signal to pare ([`exit_on_signals`]) stops all of
//! them, with one grace period shared by all, before pare exits.
//!
//! The server's stderr is piped through pare (a copying thread), never handed over: a
//! process that outlives pare must not keep the client's stderr pipe open.
//!
//! What cannot be covered: SIGKILL to pare itself. The server then sees its stdin close.

use std::io::{self, BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};
use std::os::unix::process::CommandExt;

use crate::McpError;

/// How long a server's process group has between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);

/// A running server and its process group.
struct Proc {
    child: Mutex<Child>,
    group: Pid,
}

/// The servers that are running, and whether pare is shutting down (then none may start).
struct Registry {
    live: Vec<Arc<Proc>>,
    closing: bool,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    live: Vec::new(),
    closing: false,
});

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// A server process pare started; stopped (group and all) when stopped or dropped.
pub struct Server {
    proc: Option<Arc<Proc>>,
}

/// Start the server `command` in its own process group, with piped stdin and stdout; its
/// stderr is copied to pare's.
pub fn spawn(command: &[String]) -> Result<(Server, ChildStdin, ChildStdout), McpError> {
    let (program, args) = command.split_first().ok_or(McpError::NoCommand)?;
    let spawn_error = |source| McpError::Spawn {
        command: command.join(" "),
        source,
    };
    // Held across the spawn: a signal handled meanwhile either sees this server or keeps
    // it from starting.
    let mut reg = registry();
    if reg.closing {
        return Err(spawn_error(io::Error::other("pare is shutting down")));
    }
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(spawn_error)?;
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    thread::spawn(move || copy_lines(BufReader::new(stderr), io::stderr()));
    let proc = Arc::new(Proc {
        group: Pid::from_child(&child),
        child: Mutex::new(child),
    });
    reg.live.push(proc.clone());
    Ok((Server { proc: Some(proc) }, stdin, stdout))
}

impl Server {
    /// SIGTERM the server's group, wait up to `grace` for it to go, then SIGKILL it and
    /// reap the server. The server's exit status, if it exited before the SIGKILL.
    ///
    /// While a signal is being handled, this never returns: the signal thread stops the
    /// servers and exits pare with the signal's status, which must not race an exit here.
    pub fn stop(mut self, grace: Duration) -> Option<ExitStatus> {
        let proc = self.proc.take()?;
        let status = stop_all(&[proc], grace).into_iter().next().flatten();
        park_if_closing();
        status
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(proc) = self.proc.take() {
            stop_all(&[proc], GRACE);
        }
    }
}

fn park_if_closing() {
    if registry().closing {
        loop {
            thread::park();
        }
    }
}

/// Stop these servers together (one grace period for all) and forget them.
fn stop_all(procs: &[Arc<Proc>], grace: Duration) -> Vec<Option<ExitStatus>> {
    for p in procs {
        let _ = kill_process_group(p.group, Signal::TERM);
    }
    let deadline = Instant::now() + grace;
    let mut status: Vec<Option<ExitStatus>> = vec![None; procs.len()];
    let mut gone = vec![false; procs.len()];
    loop {
        for (i, p) in procs.iter().enumerate() {
            if gone[i] {
                continue;
            }
            if status[i].is_none() {
                status[i] = lock(&p.child).try_wait().ok().flatten();
            }
            // The leader is reaped and nothing else is left in its group.
            gone[i] = status[i].is_some() && test_kill_process_group(p.group).is_err();
        }
        if gone.iter().all(|g| *g) || Instant::now() >= deadline {
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    for (i, p) in procs.iter().enumerate() {
        if !gone[i] {
            let _ = kill_process_group(p.group, Signal::KILL);
            let _ = lock(&p.child).wait();
        }
    }
    registry()
        .live
        .retain(|live| !procs.iter().any(|p| Arc::ptr_eq(p, live)));
    status
}

fn lock(child: &Mutex<Child>) -> MutexGuard<'_, Child> {
    child.lock().unwrap_or_else(|e| e.into_inner())
}

/// On SIGTERM, SIGINT or SIGHUP: stop every server (one grace period for all) and exit with
/// 128 + the signal's number, saying so on stderr. Call before starting any server.
pub fn exit_on_signals() -> io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP])?;
    thread::Builder::new()
        .name("pare-signals".into())
        .spawn(move || {
            if let Some(signo) = signals.forever().next() {
                let procs = {
                    let mut reg = registry();
                    reg.closing = true;
                    reg.live.clone()
                };
                crate::proxy::log(&format!(
                    "signal {signo}: stopping {} server process(es), then exiting",
                    procs.len()
                ));
                stop_all(&procs, GRACE);
                std::process::exit(128 + signo);
            }
        })?;
    Ok(())
}

/// Copy `from` to `to` a line at a time (a long line in pieces), so a server's stderr lines
/// do not interleave with pare's own within a line.
fn copy_lines(mut from: impl BufRead, mut to: impl Write) {
    loop {
        let chunk = match from.fill_buf() {
            Ok([]) | Err(_) => return,
            Ok(chunk) => chunk,
        };
        let n = chunk
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(chunk.len(), |i| i + 1);
        if to.write_all(&chunk[..n]).is_err() {
            return;
        }
        from.consume(n);
    }
}
