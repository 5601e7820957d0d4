//! Shared helpers of the `pare mcp` tests: running `pare mcp` and talking JSON-RPC to it,
//! finding the peers (python3, node and the reference servers, the `mcp` SDK).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any one reply may take before the test fails (a hang is a failure, not a wait).
const REPLY_TIMEOUT: Duration = Duration::from_secs(60);

pub fn mcp_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp")
}

pub fn fake_server() -> String {
    mcp_dir().join("fake_server.py").display().to_string()
}

/// What a test needs, or a failure that names it. The tests that need the reference servers
/// or the SDK are `#[ignore = "needs MCP peers: …"]`, so they run only when asked for
/// (`scripts/test` asks where `.ci/run` installed the peers, and always with `CI=true`);
/// python3 alone is needed by the stand-in server tests, which always run.
pub fn require(what: &str, found: Option<String>) -> String {
    found.unwrap_or_else(|| panic!("this test needs {what}, which is missing"))
}

fn works(cmd: &str, args: &[&str]) -> bool {
    Command::new(cmd)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// python3 (plain: the stand-in server needs nothing else).
pub fn python() -> String {
    require(
        "python3 on PATH (the stand-in MCP servers in tests/mcp are Python scripts)",
        works("python3", &["--version"]).then(|| "python3".to_owned()),
    )
}

/// The Python with the official `mcp` SDK: `$PARE_MCP_PYTHON`, default the venv `.ci/run` makes.
pub fn sdk_python() -> String {
    let py =
        std::env::var("PARE_MCP_PYTHON").unwrap_or_else(|_| "/tmp/pare-mcp-venv/bin/python".into());
    require(
        &format!("the Python MCP SDK (`import mcp` in {py}; .ci/run installs it)"),
        works(&py, &["-c", "import mcp"]).then_some(py),
    )
}

/// The entry script of a reference server under `$PARE_MCP_PEERS` (default /tmp/pare-mcp-peers).
pub fn node_server(package: &str) -> String {
    let dir = std::env::var("PARE_MCP_PEERS").unwrap_or_else(|_| "/tmp/pare-mcp-peers".into());
    let script = Path::new(&dir)
        .join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    let found =
        (script.is_file() && works("node", &["--version"])).then(|| script.display().to_string());
    require(
        &format!("node and {} (.ci/run installs it)", script.display()),
        found,
    )
}

pub fn pare_bin() -> &'static str {
    env!("CARGO_BIN_EXE_pare")
}

/// The process ids in the `pids-*` files the stand-in servers write into `dir`, once there
/// are `servers` of them.
pub fn pids(dir: &Path, servers: usize) -> Vec<u32> {
    let start = Instant::now();
    loop {
        let files: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_none_or(|x| x != "tmp"))
            .collect();
        if files.len() >= servers {
            return files
                .iter()
                .flat_map(|f| {
                    std::fs::read_to_string(f)
                        .unwrap()
                        .split_whitespace()
                        .map(|p| p.parse().unwrap())
                        .collect::<Vec<u32>>()
                })
                .collect();
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the servers did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A running `pare mcp`, spoken to line by line.
pub struct Proxy {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Vec<u8>>,
    stderr: mpsc::Receiver<String>,
}

impl Proxy {
    /// `pare mcp ARGS` (ARGS include `-- server…`), with extra environment.
    pub fn spawn(args: &[&str], env: &[(&str, &str)]) -> Proxy {
        let mut child = Command::new(pare_bin())
            .arg("mcp")
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("pare runs");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut out = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match out.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if line.last() == Some(&b'\n') {
                    line.pop();
                }
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut err = child.stderr.take().unwrap();
        let (etx, stderr) = mpsc::channel();
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = err.read_to_string(&mut s);
            let _ = etx.send(s);
        });
        Proxy {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
        }
    }

    /// Send one line as it is (it need not be strict JSON).
    pub fn send_raw(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, msg: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next line on pare's stdout as it is, without its newline.
    pub fn recv_raw(&mut self) -> Vec<u8> {
        self.lines
            .recv_timeout(REPLY_TIMEOUT)
            .expect("a reply from pare")
    }

    /// The next line on pare's stdout, if there is one before pare closes it.
    pub fn try_recv_raw(&mut self) -> Option<Vec<u8>> {
        self.lines.recv_timeout(REPLY_TIMEOUT).ok()
    }

    /// The next line on pare's stdout, which must be a JSON-RPC 2.0 message.
    pub fn recv(&mut self) -> Value {
        let raw = self.recv_raw();
        let line = String::from_utf8(raw).expect("stdout carried a line that is not UTF-8");
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line:.200}"));
        assert_eq!(
            v["jsonrpc"], "2.0",
            "stdout carried a non-JSON-RPC line: {line:.200}"
        );
        v
    }

    /// Send a request and return its response (messages before it must be notifications).
    pub fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let v = self.recv();
            if v.get("id") == Some(&json!(id)) {
                return v;
            }
            assert!(v.get("id").is_none(), "unexpected message {v}");
        }
    }

    pub fn initialize(&mut self) {
        let r = self.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
        );
        assert!(r.get("result").is_some(), "{r}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// pare's peak resident memory so far (Linux `VmHWM`), in kB.
    pub fn peak_rss_kb(&self) -> Option<u64> {
        peak_rss_kb(self.child.id())
    }

    /// pare's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Wait for pare to exit: its status and everything it wrote on stderr.
    pub fn finish(mut self) -> (ExitStatus, String) {
        let status = self.child.wait().unwrap();
        let stderr = self.stderr.recv_timeout(REPLY_TIMEOUT).unwrap_or_default();
        (status, stderr)
    }
}

/// A memory graph file of `n` entities (the generator's default seed) in `dir`.
pub fn graph_file(dir: &Path, name: &str, n: usize) -> String {
    let path = dir.join(name);
    let py = python();
    let ok = Command::new(py)
        .arg(mcp_dir().join("memory_graph.py"))
        .arg(&path)
        .arg(n.to_string())
        .status()
        .unwrap()
        .success();
    assert!(ok, "memory_graph.py failed");
    path.display().to_string()
}

/// Run a client.py scenario against `server` (a command line, or one streamable-HTTP URL) and return what it saw.
pub fn client(
    py: &str,
    scenario: &str,
    opts: &[&str],
    server: &[&str],
    env: &[(&str, &str)],
) -> Value {
    let out = Command::new(py)
        .arg(mcp_dir().join("client.py"))
        .arg(scenario)
        .args(opts)
        .arg("--")
        .args(server)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "client.py {scenario} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A port nothing listens on right now (the OS picks it).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The everything server over streamable HTTP on a free port; killed on drop.
pub struct HttpServer {
    child: Child,
    pub url: String,
}

impl HttpServer {
    pub fn everything(script: &str) -> HttpServer {
        let port = free_port();
        let child = Command::new("node")
            .arg(script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs");
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the everything server did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The everything server's results (from `tests/mcp/client.py everything`) through pare
/// match the direct ones, `how` naming the route. Sampling, roots and elicitation are
/// requests from the server to the client: their answers show in these results only if the
/// requests and the client's responses crossed pare.
pub fn assert_everything_results_match(direct: &Value, through: &Value, how: &str) {
    for results in [direct, through] {
        assert!(
            results["sampling"]
                .to_string()
                .contains("sampled by the test client"),
            "{}",
            results["sampling"]
        );
        assert!(
            results["roots"]
                .to_string()
                .contains("file:///tmp/pare-root")
        );
        assert!(results["elicitation"].to_string().contains("declined"));
    }
    for key in [
        "server",
        "ping",
        "echo",
        "sum",
        "image",
        "sampling",
        "roots",
        "elicitation",
        "resources",
        "prompts",
    ] {
        assert_same_result(&direct[key], &through[key], &format!("{key} {how}"));
    }
}

/// `through` is `direct` as pare passes it on: equal, or a tool result whose texts holding
/// a value (JSON after a caption, `LLM sampling result: \n{…}`) were shaped, each giving
/// back exactly the server's value (`pare expand`), caption and trailer kept as written,
/// and `_meta.pare` added.
pub fn assert_same_result(direct: &Value, through: &Value, what: &str) {
    if direct == through {
        return;
    }
    let mut through = through.clone();
    let meta = through.get_mut("_meta").and_then(Value::as_object_mut);
    let meta_emptied = meta.is_some_and(|m| m.remove("pare").is_some() && m.is_empty());
    if meta_emptied && direct.get("_meta").is_none() {
        through.as_object_mut().unwrap().remove("_meta");
    }
    let (Some(d), Some(t)) = (direct["content"].as_array(), through["content"].as_array()) else {
        panic!("{what} differs:\n{direct}\n{through}");
    };
    assert_eq!(
        d.len(),
        t.len(),
        "{what}: content items\n{direct}\n{through}"
    );
    for (d, t) in d.iter().zip(t) {
        let (Some(dt), Some(tt)) = (d["text"].as_str(), t["text"].as_str()) else {
            assert_eq!(d, t, "{what}");
            continue;
        };
        if dt == tt {
            continue;
        }
        let e = pare::embedded::find(dt)
            .unwrap_or_else(|| panic!("{what}: a text changed that holds no value:\n{dt}\n{tt}"));
        let body = tt
            .strip_prefix(e.prefix)
            .and_then(|b| b.strip_suffix(e.suffix))
            .unwrap_or_else(|| panic!("{what}: caption or trailer changed:\n{dt}\n{tt}"));
        let (value, _) = pare::encode::expand(body).expect("the shaped text expands");
        assert_eq!(
            pare::json::to_compact(&value),
            pare::json::to_compact(&e.value),
            "{what}: the value differs"
        );
    }
    let (mut d, mut t) = (direct.clone(), through.clone());
    d.as_object_mut().unwrap().remove("content");
    t.as_object_mut().unwrap().remove("content");
    assert_eq!(d, t, "{what}: besides content");
}

/// The peak resident memory so far of process `pid` (Linux `VmHWM`), in kB.
pub fn peak_rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `scripts/pg_fixture.sh` (a throwaway PostgreSQL cluster with the `orders` fixture).
fn pg_fixture_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg_fixture.sh")
}

/// A PostgreSQL cluster of its own in a temporary directory, on a free loopback port,
/// holding the `orders` fixture (2,000 rows); stopped and removed on drop. The tests that
/// need one are `#[ignore = "… PostgreSQL: …"]`; `scripts/test` runs the same
/// `pg_fixture.sh check` to decide whether they can run.
pub struct PgCluster {
    dir: tempfile::TempDir,
    pub url: String,
}

impl PgCluster {
    pub fn start() -> PgCluster {
        let script = pg_fixture_script();
        let check = Command::new("bash").arg(&script).arg("check").output();
        let why = match &check {
            Ok(out) if out.status.success() => {
                String::from_utf8_lossy(&out.stdout).trim().to_owned()
            }
            Ok(out) => String::from_utf8_lossy(&out.stderr).trim().to_owned(),
            Err(e) => format!("bash {}: {e}", script.display()),
        };
        require(
            &format!("PostgreSQL ({why})"),
            why.is_empty().then(String::new),
        );
        let dir = tempfile::Builder::new()
            .prefix("pare-pg-")
            .tempdir_in("/tmp")
            .unwrap();
        let out = Command::new("bash")
            .arg(&script)
            .arg("start")
            .arg(dir.path())
            .arg(free_port().to_string())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pg_fixture.sh start failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let url = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        PgCluster { dir, url }
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(pg_fixture_script())
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}
