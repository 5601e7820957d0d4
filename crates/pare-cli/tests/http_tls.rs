//! `pare http` and TLS (issue 30): an upstream signed by a private CA, one that asks for a
//! client certificate, one whose certificate names a host the URL does not, and pare's own
//! TLS listener, read by curl and reloaded on SIGHUP. Real tools: the certificates are made
//! by the `openssl` CLI, the TLS upstream is `openssl s_server`, the client is curl (all
//! installed by `scripts/http_peers.sh`).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::rest_support::{Pare, free_port, pare_bin, repo, request};

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

/// A private CA and certificates it signs, made with `openssl` in a directory of their own.
struct Pki {
    dir: PathBuf,
}

impl Pki {
    fn new(name: &str) -> Pki {
        let dir = std::env::temp_dir().join(format!("pare-tls-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        run(Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            ])
            .args([
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-subj",
                "/CN=pare test CA",
            ])
            .current_dir(&dir));
        Pki { dir }
    }

    fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }

    /// `NAME.pem` and `NAME.key`: a certificate for `subject` with `san` (the
    /// subjectAltName), signed by the CA.
    fn issue(&self, name: &str, subject: &str, san: &str) -> (PathBuf, PathBuf) {
        let (key, csr, pem, ext) = (
            format!("{name}.key"),
            format!("{name}.csr"),
            format!("{name}.pem"),
            format!("{name}.ext"),
        );
        std::fs::write(self.path(&ext), format!("subjectAltName={san}\n")).unwrap();
        run(Command::new("openssl")
            .args([
                "req", "-newkey", "rsa:2048", "-nodes", "-keyout", &key, "-out", &csr,
            ])
            .args(["-subj", subject])
            .current_dir(&self.dir));
        run(Command::new("openssl")
            .args([
                "x509", "-req", "-in", &csr, "-CA", "ca.pem", "-CAkey", "ca.key",
            ])
            .args([
                "-CAcreateserial",
                "-days",
                "2",
                "-out",
                &pem,
                "-extfile",
                &ext,
            ])
            .current_dir(&self.dir));
        (self.path(&pem), self.path(&key))
    }
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `openssl s_server -www` on a port of its own: an HTTPS upstream answering `GET /` with
/// its status page.
struct TlsUpstream {
    port: u16,
    child: Child,
}

impl TlsUpstream {
    fn start(cert: &Path, key: &Path, more: &[&str]) -> TlsUpstream {
        let port = free_port();
        let child = Command::new("openssl")
            .args(["s_server", "-www", "-quiet", "-accept"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("-cert")
            .arg(cert)
            .arg("-key")
            .arg(key)
            .args(more)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("openssl s_server runs");
        let start = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "s_server did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        TlsUpstream { port, child }
    }

    fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }
}

impl Drop for TlsUpstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn policy() -> PathBuf {
    repo().join("examples/policies/http.toml")
}

/// Status of `GET /` through `pare http --upstream URL ARGS…`, and pare's log.
fn through(url: &str, args: &[&str]) -> (u16, String) {
    let p = Pare::spawn(url, &policy(), args);
    let r = request(p.port, "GET", "/", &[], b"");
    let log = p.log_with(&["\"status\""]);
    (r.status, log)
}

#[test]
#[ignore = "needs HTTP peers: scripts/http_peers.sh install (.ci/run runs it)"]
fn regression_an_upstream_signed_by_a_private_ca_got_502_invalid_peer_certificate() {
    let pki = Pki::new("ca");
    let (cert, key) = pki.issue("up", "/CN=localhost", "DNS:localhost,IP:127.0.0.1");
    let up = TlsUpstream::start(&cert, &key, &[]);
    let (status, log) = through(&up.url(), &[]);
    assert_eq!(status, 502, "{log}");
    assert!(log.to_lowercase().contains("certificate"), "{log}");
    let ca = pki.path("ca.pem");
    let (status, log) = through(&up.url(), &["--upstream-ca", ca.to_str().unwrap()]);
    assert_eq!(status, 200, "{log}");
    // Only the private CA: the upstream is still trusted.
    let (status, log) = through(
        &up.url(),
        &["--upstream-ca", ca.to_str().unwrap(), "--upstream-ca-only"],
    );
    assert_eq!(status, 200, "{log}");
}

#[test]
#[ignore = "needs HTTP peers: scripts/http_peers.sh install (.ci/run runs it)"]
fn upstream_server_name_is_the_name_checked_when_the_url_names_an_address() {
    let pki = Pki::new("sni");
    let (cert, key) = pki.issue("up", "/CN=api.internal", "DNS:api.internal");
    let up = TlsUpstream::start(&cert, &key, &[]);
    let ca = pki.path("ca.pem");
    let ca = ca.to_str().unwrap();
    // The certificate names api.internal, not 127.0.0.1.
    assert_eq!(through(&up.url(), &["--upstream-ca", ca]).0, 502);
    let named = [
        "--upstream-ca",
        ca,
        "--upstream-server-name",
        "api.internal",
    ];
    assert_eq!(through(&up.url(), &named).0, 200);
    let wrong = [
        "--upstream-ca",
        ca,
        "--upstream-server-name",
        "other.internal",
    ];
    assert_eq!(through(&up.url(), &wrong).0, 502);
}

#[test]
#[ignore = "needs HTTP peers: scripts/http_peers.sh install (.ci/run runs it)"]
fn an_upstream_that_asks_for_a_client_certificate_gets_upstream_client_cert() {
    let pki = Pki::new("mtls");
    let (cert, key) = pki.issue("up", "/CN=localhost", "DNS:localhost,IP:127.0.0.1");
    let (client_cert, client_key) = pki.issue("client", "/CN=pare", "DNS:pare.client");
    let ca = pki.path("ca.pem");
    let ca_arg = ca.to_str().unwrap();
    let up = TlsUpstream::start(&cert, &key, &["-Verify", "1", "-CAfile", ca_arg]);
    let (status, log) = through(&up.url(), &["--upstream-ca", ca_arg]);
    assert_eq!(
        status, 502,
        "no client certificate: refused by the upstream; {log}"
    );
    let with_cert = [
        "--upstream-ca",
        ca_arg,
        "--upstream-client-cert",
        client_cert.to_str().unwrap(),
        "--upstream-client-key",
        client_key.to_str().unwrap(),
    ];
    let (status, log) = through(&up.url(), &with_cert);
    assert_eq!(status, 200, "{log}");
}

/// A plain upstream that echoes each request's head as its body.
fn echo_upstream() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut c in listener.incoming().map_while(Result::ok) {
            std::thread::spawn(move || {
                let mut data = Vec::new();
                let mut buf = [0u8; 8192];
                while !data.windows(4).any(|w| w == b"\r\n\r\n") {
                    match c.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => data.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&data).into_owned();
                let reply = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{head}",
                    head.len()
                );
                let _ = c.write_all(reply.as_bytes());
            });
        }
    });
    port
}

/// `curl -v --cacert CA https://localhost:PORT/hello`: the body and the certificate subject
/// curl saw.
fn curl(port: u16, ca: &Path) -> (String, String) {
    let out = Command::new("curl")
        .args(["-sS", "-v", "--max-time", "10", "--cacert"])
        .arg(ca)
        .arg(format!("https://localhost:{port}/hello"))
        .output()
        .expect("curl runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "curl failed: {err}");
    let subject = err
        .lines()
        .find_map(|l| l.trim_start_matches(['*', ' ']).strip_prefix("subject:"))
        .unwrap_or_else(|| panic!("no subject in curl -v: {err}"))
        .trim()
        .to_owned();
    (String::from_utf8_lossy(&out.stdout).into_owned(), subject)
}

#[test]
#[ignore = "needs HTTP peers: scripts/http_peers.sh install (.ci/run runs it)"]
fn tls_listener_answers_curl_and_reloads_its_certificate_on_sighup() {
    let pki = Pki::new("listener");
    let (first, first_key) = pki.issue("first", "/O=first/CN=localhost", "DNS:localhost");
    let (second, second_key) = pki.issue("second", "/O=second/CN=localhost", "DNS:localhost");
    let (cert, key) = (pki.path("serving.pem"), pki.path("serving.key"));
    std::fs::copy(&first, &cert).unwrap();
    std::fs::copy(&first_key, &key).unwrap();
    let p = tls_listener(&cert, &key, &[]);
    let ca = pki.path("ca.pem");
    let (body, subject) = curl(p.port, &ca);
    assert!(
        subject.contains("O=first") || subject.contains("O = first"),
        "{subject}"
    );
    // What the upstream was told: the client came over HTTPS.
    assert!(
        body.to_lowercase().contains("x-forwarded-proto: https"),
        "{body}"
    );
    assert!(
        p.log_with(&["listening on https://"])
            .contains("listening on https://")
    );

    // New files, SIGHUP: new connections see the new certificate.
    std::fs::copy(&second, &cert).unwrap();
    std::fs::copy(&second_key, &key).unwrap();
    hangup(&p);
    p.log_with(&["certificate reloaded"]);
    let (_, subject) = curl(p.port, &ca);
    assert!(subject.contains("second"), "{subject}");

    // A broken file and SIGHUP: the certificate in use stays, and the log says why.
    std::fs::write(&cert, "not a certificate").unwrap();
    hangup(&p);
    let log = p.log_with(&["certificate not reloaded"]);
    assert!(log.contains("serving.pem"), "{log}");
    let (_, subject) = curl(p.port, &ca);
    assert!(subject.contains("second"), "{subject}");
}

/// `pare http` serving HTTPS with `cert` and `key`, in front of an [`echo_upstream`].
fn tls_listener(cert: &Path, key: &Path, more: &[&str]) -> Pare {
    let up = echo_upstream();
    let mut args = vec![
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ];
    args.extend_from_slice(more);
    Pare::spawn(&format!("http://127.0.0.1:{up}"), &policy(), &args)
}

fn hangup(p: &Pare) {
    let status = Command::new("kill")
        .args(["-HUP", &p.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
#[ignore = "needs HTTP peers: scripts/http_peers.sh install (.ci/run runs it)"]
fn a_client_that_never_finishes_its_tls_handshake_frees_its_slot() {
    let pki = Pki::new("handshake");
    let (cert, key) = pki.issue("srv", "/CN=localhost", "DNS:localhost");
    let p = tls_listener(
        &cert,
        &key,
        &["--max-connections", "1", "--header-timeout", "1"],
    );
    // Holds the one slot, says nothing.
    let silent = TcpStream::connect(("127.0.0.1", p.port)).unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let (body, _) = curl(p.port, &pki.path("ca.pem"));
    assert!(body.starts_with("GET /hello"), "{body}");
    drop(silent);
}

#[test]
fn bad_tls_files_exit_2_naming_the_file_and_what_is_wrong() {
    let dir = std::env::temp_dir().join(format!("pare-tls-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let junk = dir.join("junk.pem");
    std::fs::write(&junk, "not PEM at all\n").unwrap();
    let missing = dir.join("missing.pem");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--upstream-ca".into(), junk.display().to_string()],
            "--upstream-ca",
        ),
        (
            vec![
                "--tls-cert".into(),
                missing.display().to_string(),
                "--tls-key".into(),
                junk.display().to_string(),
            ],
            "missing.pem",
        ),
        (
            vec!["--upstream-server-name".into(), "not a name!".into()],
            "--upstream-server-name",
        ),
        (
            vec!["--tls-cert".into(), junk.display().to_string()],
            "--tls-key",
        ),
    ];
    for (args, needle) in cases {
        let out = Command::new(pare_bin())
            .args(["http", "--upstream", "https://127.0.0.1:9", "--listen", "0"])
            .arg("--policy")
            .arg(policy())
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
