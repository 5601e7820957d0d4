//! Shared helpers of the `pare http` tests: the real servers pare is put in front of
//! (a FastAPI app under uvicorn, json-server, nginx) and Redis, `pare http` itself, and a
//! small HTTP/1.1 client that shows the bytes as they came (no decoding, no redirects).
//!
//! The servers are installed by `scripts/http_peers.sh install` (`.ci/run` runs it); the
//! tests that need them are `#[ignore = "needs HTTP peers: …"]`, and a missing one fails
//! naming what is missing and how to install it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

pub fn pare_bin() -> &'static str {
    env!("CARGO_BIN_EXE_pare")
}

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn rest_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/rest")
}

/// The checked-in payload every upstream serves.
pub fn entities_path() -> PathBuf {
    repo().join("examples/payloads/entities_systems.json")
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn missing(what: &str) -> ! {
    panic!(
        "this test needs {what}, which is missing here (scripts/http_peers.sh install, or .ci/run, installs it)"
    )
}

fn found(path: PathBuf, what: &str) -> PathBuf {
    if path.exists() { path } else { missing(what) }
}

fn program(names: &[&str], what: &str) -> String {
    for n in names {
        if Command::new(n)
            .arg("-v")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
        {
            return (*n).to_owned();
        }
    }
    missing(what)
}

/// A server process, stopped when dropped.
pub struct Server {
    pub port: u16,
    child: Child,
    _dir: Option<tempfile::TempDir>,
}

impl Server {
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn start(
        mut cmd: Command,
        port: u16,
        dir: Option<tempfile::TempDir>,
        ready_path: Option<&str>,
    ) -> Server {
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
        let server = Server {
            port,
            child,
            _dir: dir,
        };
        let start = Instant::now();
        loop {
            let up = match ready_path {
                Some(p) => try_request(port, "GET", p, &[], b"").is_some_and(|r| r.status < 500),
                None => TcpStream::connect(("127.0.0.1", port)).is_ok(),
            };
            if up {
                return server;
            }
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{cmd:?} did not come up on port {port} within 30 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Stop it now (a test that takes a server away mid-run).
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The FastAPI app (tests/rest/upstream_app.py) under uvicorn.
pub fn fastapi() -> Server {
    let python = http_python();
    let port = free_port();
    let mut cmd = Command::new(python);
    cmd.arg(rest_dir().join("upstream_app.py"))
        .arg(port.to_string());
    Server::start(cmd, port, None, Some("/api/entities/sys-0000"))
}

/// The HTTP peers' Python (the FastAPI app's venv, with python-requests).
pub fn http_python() -> PathBuf {
    let venv = std::env::var("PARE_HTTP_VENV").unwrap_or_else(|_| "/tmp/pare-http-venv".into());
    found(
        Path::new(&venv).join("bin/python"),
        &format!("the FastAPI upstream's venv ({venv})"),
    )
}

/// The node_modules holding Octokit (@octokit/core, @octokit/plugin-paginate-rest).
pub fn octokit_modules() -> PathBuf {
    let peers = std::env::var("PARE_HTTP_PEERS").unwrap_or_else(|_| "/tmp/pare-http-peers".into());
    let modules = Path::new(&peers).join("node_modules");
    found(
        modules.join("@octokit/plugin-paginate-rest/package.json"),
        &format!(
            "Octokit in {} (scripts/http_peers.sh install)",
            modules.display()
        ),
    );
    modules
}

/// json-server 0.17.4 serving the payload's collections under /api.
pub fn json_server() -> Server {
    let peers = std::env::var("PARE_HTTP_PEERS").unwrap_or_else(|_| "/tmp/pare-http-peers".into());
    let bin = found(
        Path::new(&peers).join("node_modules/json-server/lib/cli/bin.js"),
        &format!("json-server 0.17.4 (in {peers})"),
    );
    let dir = tempfile::tempdir().unwrap();
    let payload: Value = serde_json::from_slice(&std::fs::read(entities_path()).unwrap()).unwrap();
    let db = serde_json::json!({
        "entities": payload["entities"],
        "relationships": payload["relationships"],
    });
    std::fs::write(
        dir.path().join("db.json"),
        serde_json::to_vec_pretty(&db).unwrap(),
    )
    .unwrap();
    std::fs::write(dir.path().join("routes.json"), r#"{"/api/*": "/$1"}"#).unwrap();
    let port = free_port();
    let mut cmd = Command::new("node");
    cmd.arg(bin)
        .args([
            "--quiet",
            "--read-only",
            "--port",
            &port.to_string(),
            "--host",
            "127.0.0.1",
        ])
        .arg("--routes")
        .arg(dir.path().join("routes.json"))
        .arg(dir.path().join("db.json"))
        .current_dir(dir.path());
    Server::start(cmd, port, Some(dir), Some("/api/entities/sys-0000"))
}

/// nginx serving `files` (name, bytes) from a temporary directory: gzip for JSON on the
/// fly, byte ranges.
pub fn nginx(files: &[(&str, &[u8])]) -> Server {
    let bin = program(&["nginx", "/usr/sbin/nginx"], "nginx");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("www")).unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.path().join("www").join(name), bytes).unwrap();
    }
    let port = free_port();
    let conf = std::fs::read_to_string(rest_dir().join("nginx.conf.in"))
        .unwrap()
        .replace("@DIR@", &dir.path().display().to_string())
        .replace("@PORT@", &port.to_string());
    std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
    let mut cmd = Command::new(bin);
    cmd.arg("-p")
        .arg(dir.path())
        .arg("-c")
        .arg(dir.path().join("nginx.conf"));
    Server::start(cmd, port, Some(dir), None)
}

/// A throwaway redis-server (no persistence) on `port` (0: a free one).
pub fn redis(port: u16) -> Server {
    let bin = program(&["redis-server", "/usr/bin/redis-server"], "redis-server");
    let port = if port == 0 { free_port() } else { port };
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(bin);
    cmd.args([
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
    ])
    .arg("--dir")
    .arg(dir.path());
    Server::start(cmd, port, Some(dir), None)
}

/// A running `pare http`, its access log collected.
pub struct Pare {
    pub port: u16,
    child: Child,
    pub log: Arc<Mutex<Vec<String>>>,
}

impl Pare {
    /// `pare http --upstream UPSTREAM --policy POLICY --listen PORT ARGS…`.
    pub fn spawn(upstream: &str, policy: &Path, args: &[&str]) -> Pare {
        let port = free_port();
        let mut child = Command::new(pare_bin())
            .args([
                "http",
                "--upstream",
                upstream,
                "--listen",
                &port.to_string(),
            ])
            .arg("--policy")
            .arg(policy)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("pare runs");
        let log = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().unwrap();
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("pare http exited ({status}): {:?}", log.lock().unwrap());
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "pare http did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Pare { port, child, log }
    }

    pub fn get(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        request(self.port, "GET", path, headers, b"")
    }

    /// The log once it contains each of `needles`, or as it is after 10 s. pare writes a
    /// line after the response it is about, so a client can read the response first.
    pub fn log_with(&self, needles: &[&str]) -> String {
        let start = Instant::now();
        loop {
            let log = self.log.lock().unwrap().join("\n");
            if needles.iter().all(|n| log.contains(n)) || start.elapsed() > Duration::from_secs(10)
            {
                return log;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Its process id (to signal it).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Pare {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A response as it came.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    /// Names in lower case, in order, repeats kept.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.body).expect("a UTF-8 body")
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    /// The `Link: <…>; rel="next"` target, of every `Link` header and link-value.
    pub fn next(&self) -> Option<String> {
        self.headers
            .iter()
            .filter(|(n, _)| n == "link")
            .flat_map(|(_, v)| v.split(", <"))
            .find(|value| value.contains("rel=\"next\"") || value.contains("rel=next"))
            .and_then(|value| {
                let value = value.trim_start_matches('<');
                Some(value[..value.find('>')?].to_owned())
            })
    }

    /// Every `Set-Cookie` value.
    pub fn cookies(&self) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == "set-cookie")
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// One request on a fresh connection (`Connection: close`); panics if none comes back.
pub fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    try_request(port, method, path, headers, body)
        .unwrap_or_else(|| panic!("no response to {method} {path} on port {port}"))
}

pub fn try_request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Option<Reply> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head += &format!("Host: 127.0.0.1:{port}\r\n");
    }
    for (k, v) in headers {
        head += &format!("{k}: {v}\r\n");
    }
    if !body.is_empty() || method == "POST" {
        head += &format!("Content-Length: {}\r\n", body.len());
    }
    head += "Connection: close\r\n\r\n";
    s.write_all(head.as_bytes()).ok()?;
    s.write_all(body).ok()?;
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    parse(&raw, method == "HEAD")
}

fn parse(raw: &[u8], head_only: bool) -> Option<Reply> {
    let end = raw.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = std::str::from_utf8(&raw[..end]).ok()?;
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let rest = &raw[end + 4..];
    let chunked = headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if head_only {
        rest.to_vec()
    } else if chunked {
        dechunk(rest)
    } else {
        rest.to_vec()
    };
    Some(Reply {
        status,
        headers,
        body,
    })
}

pub fn dechunk(mut s: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = s.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&s[..eol])
            .unwrap_or("0")
            .split(';')
            .next()
            .unwrap_or("0");
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            break;
        }
        out.extend_from_slice(&s[eol + 2..eol + 2 + n]);
        s = &s[eol + 2 + n + 2..];
    }
    out
}

/// `pare compact FILE --policy POLICY ARGS…` of `body`: what a shaped response must equal.
/// What `cmd` printed on stdout; panics with its stderr unless it succeeded.
pub fn stdout_of(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

pub fn compact(body: &[u8], policy: &Path, args: &[&str]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("body.json");
    std::fs::write(&input, body).unwrap();
    let mut text = stdout_of(
        Command::new(pare_bin())
            .arg("compact")
            .arg(&input)
            .arg("--policy")
            .arg(policy)
            .args(args),
    );
    if text.last() == Some(&b'\n') {
        text.pop();
    }
    text
}

/// `promtool check metrics` accepts `text` (a Prometheus text exposition) without a word.
pub fn assert_promtool_accepts(text: &str) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool runs (Debian: apt-get install prometheus; scripts/http_peers.sh does)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && said.trim().is_empty(),
        "{said}\n{text}"
    );
}
