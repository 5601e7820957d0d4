//! `pare http` where a peer misbehaves (issue 30): an upstream that stalls mid-body or
//! frames its reply ambiguously, a client that trickles its body, oversized heads,
//! `OPTIONS *`, forged `X-Forwarded-*`, redirects to the upstream's own address, and errors
//! that named it. The upstream is a raw socket doing each fault on purpose, so these run
//! everywhere (no peers). `bench/http_faults.py` prints the same faults as a table.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::rest_support::{Pare, free_port, repo, request};

/// What `/entities/reused` says; changed by one test only.
static REUSED_VERSION: AtomicU64 = AtomicU64::new(1);

/// A raw HTTP/1.1 upstream: the path picks the fault. Keeps each request head it read and
/// when each connection arrived.
struct Upstream {
    port: u16,
    heads: Arc<Mutex<Vec<String>>>,
    accepted: Arc<Mutex<Vec<Instant>>>,
}

impl Upstream {
    fn start() -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let accepted = Arc::new(Mutex::new(Vec::new()));
        let (h, a) = (heads.clone(), accepted.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming().map_while(Result::ok) {
                a.lock().unwrap().push(Instant::now());
                let h = h.clone();
                std::thread::spawn(move || serve(conn, port, &h));
            }
        });
        Upstream {
            port,
            heads,
            accepted,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn last_head(&self) -> String {
        self.heads
            .lock()
            .unwrap()
            .last()
            .cloned()
            .unwrap_or_default()
    }
}

fn serve(mut c: TcpStream, port: u16, heads: &Mutex<Vec<String>>) {
    let mut data = Vec::new();
    let mut buf = [0u8; 65536];
    let end = loop {
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        match c.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&data[..end]).into_owned();
    heads.lock().unwrap().push(head.clone());
    let path = head.split(' ').nth(1).unwrap_or("").to_owned();
    let up = format!("http://127.0.0.1:{port}");
    let reply = if path.starts_with("/stall") {
        let mut r =
            b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000000\r\n\r\n"
                .to_vec();
        r.extend(std::iter::repeat_n(b'x', 5000));
        let _ = c.write_all(&r);
        std::thread::sleep(Duration::from_secs(120));
        return;
    } else if path == "/entities?stall=1" {
        let head =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n";
        let _ = c.write_all(format!("{head}{{\"entities\": [").as_bytes());
        std::thread::sleep(Duration::from_secs(120));
        return;
    } else if path.starts_with("/clte") {
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\nb\r\nhello world\r\n0\r\n\r\n".to_vec()
    } else if path == "/entities" {
        let json = std::fs::read(repo().join("examples/payloads/entities.json")).unwrap();
        let mut r = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            json.len()
        )
        .into_bytes();
        r.extend_from_slice(&json);
        r
    } else if path.starts_with("/entities/reused") {
        // The same bytes until the test changes REUSED_VERSION.
        let v = REUSED_VERSION.load(Ordering::SeqCst);
        let json = format!(
            "{{\"id\": \"reused\", \"name\": \"api-gateway\", \"version_seen\": {v}, \"tags\": [], \"created_at\": \"2024-01-01T00:00:00Z\"}}"
        );
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{json}",
            json.len()
        )
        .into_bytes()
    } else if path == "/entities?large=1" {
        // 12 MB of entities, over release::LARGE.
        let entity = r#"{"id":"e-N","name":"service N","entity_type":"System","created_at":"2024-01-01T00:00:00Z","tags":["a","b"],"owner":null,"description":"a service that does something useful for someone"}"#;
        let items: Vec<String> = (0..60_000)
            .map(|i| entity.replace('N', &i.to_string()))
            .collect();
        let json = format!("{{\"entities\": [{}]}}", items.join(","));
        let mut r = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            json.len()
        )
        .into_bytes();
        r.extend_from_slice(json.as_bytes());
        r
    } else if path.starts_with("/http10") {
        b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok".to_vec()
    } else if path.starts_with("/redirect") {
        format!(
            "HTTP/1.1 302 Found\r\nLocation: {up}/next\r\nContent-Location: {up}/here\r\nLink: <{up}/page2>; rel=\"next\", <https://elsewhere.example/x>; rel=\"other\"\r\nContent-Length: 0\r\n\r\n"
        )
        .into_bytes()
    } else {
        // Echo the head, once the body (Content-Length) is in.
        let length: usize = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().parse().unwrap_or(0))
            })
            .unwrap_or(0);
        let mut body = data[end + 4..].to_vec();
        while body.len() < length {
            match c.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => body.extend_from_slice(&buf[..n]),
            }
        }
        let mut r = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
            head.len()
        )
        .into_bytes();
        r.extend_from_slice(head.as_bytes());
        r
    };
    // One response per connection, and it says so: a connection closed without
    // `Connection: close` could be taken from pare's pool for the next request just as it
    // closes (the race every keep-alive client has), which is not what these tests are about.
    let at = reply
        .windows(2)
        .position(|w| w == b"\r\n")
        .map_or(reply.len(), |i| i + 2);
    let mut closing = reply[..at].to_vec();
    closing.extend_from_slice(b"Connection: close\r\n");
    closing.extend_from_slice(&reply[at..]);
    let _ = c.write_all(&closing);
}

fn policy() -> std::path::PathBuf {
    repo().join("examples/policies/http.toml")
}

/// `pare http` in front of `up`, with 2-second body timeouts.
fn pare(up: &Upstream, more: &[&str]) -> Pare {
    let mut args = vec![
        "--upstream-idle-timeout",
        "2",
        "--client-body-timeout",
        "2",
        "--quiet",
    ];
    args.extend_from_slice(more);
    Pare::spawn(&up.url(), &policy(), &args)
}

/// Send `raw` (then `later`, a piece a second); everything that came back, and how long
/// until the connection ended.
fn exchange(port: u16, raw: &[u8], later: &[&[u8]]) -> (Vec<u8>, Duration) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let start = Instant::now();
    s.write_all(raw).unwrap();
    for piece in later {
        std::thread::sleep(Duration::from_secs(1));
        if s.write_all(piece).is_err() {
            break;
        }
    }
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    (got, start.elapsed())
}

fn status_line(got: &[u8]) -> String {
    String::from_utf8_lossy(got)
        .lines()
        .next()
        .unwrap_or("")
        .to_owned()
}

#[test]
fn regression_an_upstream_stalling_mid_body_held_the_client_forever() {
    let up = Upstream::start();
    let pare = pare(&up, &[]);
    let (got, took) = exchange(
        pare.port,
        b"GET /stall HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        &[],
    );
    assert!(status_line(&got).contains("200"), "{}", status_line(&got));
    // Cut off after the idle timeout, short of the length it declared.
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(got.len() < 1_000_000);
    let log = pare.log_with(&["the upstream sent nothing for 2 s"]);
    assert!(
        log.contains("the response to GET /stall was cut off"),
        "{log}"
    );
}

#[test]
fn regression_an_upstream_stalling_a_body_pare_shapes_was_answered_502_not_504() {
    let up = Upstream::start();
    let pare = pare(&up, &[]);
    let start = Instant::now();
    let r = request(pare.port, "GET", "/entities?stall=1", &[], b"");
    assert_eq!(r.status, 504, "{}", r.text());
    assert!(
        r.text().contains("the upstream sent nothing for 2 s"),
        "{}",
        r.text()
    );
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn regression_a_client_trickling_its_body_held_an_upstream_connection() {
    let up = Upstream::start();
    let pare = pare(&up, &[]);
    let before = up.accepted.lock().unwrap().len();
    let start = Instant::now();
    let (got, _) = exchange(
        pare.port,
        b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\nConnection: close\r\n\r\n",
        &[b"a", b"b", b"c"],
    );
    assert!(status_line(&got).contains("200"), "{}", status_line(&got));
    // The upstream heard of the request only once its body was whole.
    let first = up.accepted.lock().unwrap()[before..]
        .first()
        .copied()
        .unwrap();
    assert!(
        first - start >= Duration::from_millis(2500),
        "{:?}",
        first - start
    );
    // A body that stops is answered 408, and the upstream never hears of it.
    let before = up.accepted.lock().unwrap().len();
    let (got, took) = exchange(
        pare.port,
        b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 6\r\n\r\nab",
        &[],
    );
    assert!(status_line(&got).contains("408"), "{}", status_line(&got));
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_eq!(up.accepted.lock().unwrap().len(), before);
}

#[test]
fn request_bodies_longer_than_the_buffer_stream_on_whole() {
    let up = Upstream::start();
    let pare = pare(&up, &["--request-buffer", "1000"]);
    let body = vec![b'z'; 50_000];
    let r = request(pare.port, "POST", "/echo", &[], &body);
    assert_eq!(r.status, 200);
    assert!(r.text().contains("content-length: 50000"), "{}", r.text());
}

#[test]
fn regression_content_length_beside_chunked_cut_the_body_to_the_length() {
    let up = Upstream::start();
    let pare = pare(&up, &[]);
    let r = request(pare.port, "GET", "/clte", &[], b"");
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"hello world");
    assert_eq!(r.header("content-length"), None);
}

#[test]
fn regression_an_http_1_0_upstream_made_pare_answer_http_1_0() {
    let up = Upstream::start();
    let p = pare(&up, &[]);
    let (got, _) = exchange(
        p.port,
        b"GET /http10 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
        &[],
    );
    assert_eq!(status_line(&got), "HTTP/1.1 200 OK");
    assert!(got.ends_with(b"ok"), "{}", String::from_utf8_lossy(&got));
}

#[test]
fn regression_a_100000_byte_header_was_accepted_past_the_head_limit() {
    let up = Upstream::start();
    let pare = pare(&up, &[]);
    let big = "a".repeat(100_000);
    let r = request(pare.port, "GET", "/echo", &[("X-Big", &big)], b"");
    assert_eq!(r.status, 431);
    let fits = "a".repeat(50_000);
    assert_eq!(
        request(pare.port, "GET", "/echo", &[("X-Big", &fits)], b"").status,
        200
    );
}

#[test]
fn regression_options_star_went_upstream_as_a_glued_url() {
    let up = Upstream::start();
    let pare = pare(&up, &[]);
    let r = request(pare.port, "OPTIONS", "*", &[], b"");
    assert_eq!(r.status, 204);
    assert!(r.header("allow").unwrap().contains("GET"));
    assert!(up.heads.lock().unwrap().is_empty());
}

#[test]
fn regression_a_clients_forwarded_headers_were_trusted_as_given() {
    let up = Upstream::start();
    let forged = [
        ("X-Forwarded-For", "6.6.6.6"),
        ("X-Forwarded-Proto", "https"),
        ("X-Forwarded-Host", "bank.example"),
    ];
    let pare_ = pare(&up, &[]);
    assert_eq!(
        request(pare_.port, "GET", "/echo", &forged, b"").status,
        200
    );
    let head = up.last_head().to_ascii_lowercase() + "\r\n";
    assert!(head.contains("x-forwarded-for: 127.0.0.1\r\n"), "{head}");
    assert!(head.contains("x-forwarded-proto: http\r\n"), "{head}");
    assert!(
        !head.contains("6.6.6.6") && !head.contains("bank.example"),
        "{head}"
    );
    // From a trusted proxy they are believed, and pare adds its peer.
    let trusting = pare(&up, &["--trusted-proxy", "127.0.0.0/8"]);
    assert_eq!(
        request(trusting.port, "GET", "/echo", &forged, b"").status,
        200
    );
    let head = up.last_head().to_ascii_lowercase() + "\r\n";
    assert!(
        head.contains("x-forwarded-for: 6.6.6.6, 127.0.0.1\r\n"),
        "{head}"
    );
    assert!(head.contains("x-forwarded-proto: https\r\n"), "{head}");
    assert!(
        head.contains("x-forwarded-host: bank.example\r\n"),
        "{head}"
    );
}

#[test]
fn regression_upstream_urls_in_location_and_link_led_clients_around_pare() {
    let up = Upstream::start();
    let pare = pare(&up, &[]);
    let r = request(pare.port, "GET", "/redirect", &[], b"");
    let me = format!("http://127.0.0.1:{}", pare.port);
    assert_eq!(r.status, 302);
    assert_eq!(r.header("location"), Some(format!("{me}/next").as_str()));
    assert_eq!(
        r.header("content-location"),
        Some(format!("{me}/here").as_str())
    );
    assert_eq!(
        r.header("link"),
        Some(
            format!("<{me}/page2>; rel=\"next\", <https://elsewhere.example/x>; rel=\"other\"")
                .as_str()
        )
    );
}

#[test]
fn regression_error_bodies_named_the_upstreams_internal_address() {
    let dead = free_port();
    let pare = Pare::spawn(
        &format!("http://127.0.0.1:{dead}"),
        &policy(),
        &["--connect-timeout", "1"],
    );
    let r = request(pare.port, "GET", "/x", &[], b"");
    assert_eq!(r.status, 502);
    assert!(!r.text().contains(&dead.to_string()), "{}", r.text());
    assert!(
        r.text().contains("cannot connect to the upstream"),
        "{}",
        r.text()
    );
    // The log has it.
    let log = pare.log_with(&["upstream_error"]);
    assert!(log.contains(&format!("127.0.0.1:{dead}")), "{log}");
}

#[test]
fn regression_bodies_held_for_shaping_had_no_global_limit() {
    let up = Upstream::start();
    let json = std::fs::read(repo().join("examples/payloads/entities.json")).unwrap();
    // Room for it: shaped.
    let roomy = pare(&up, &[]);
    let r = request(roomy.port, "GET", "/entities", &[], b"");
    assert!(r.header("x-pare-tokens-after").is_some() && r.body != json);
    // A budget smaller than the body: it passes exactly as it came, and says why.
    let tight = pare(&up, &["--max-held-bytes", "4096"]);
    let r = request(tight.port, "GET", "/entities", &[], b"");
    assert_eq!(r.status, 200);
    assert_eq!(r.body, json);
    let note = r.header("x-pare-note").unwrap();
    assert!(note.contains("--max-held-bytes"), "{note}");
}

#[test]
fn a_body_shaped_once_is_reused_only_while_every_input_is_the_same() {
    let up = Upstream::start();
    let p = Pare::spawn(&up.url(), &policy(), &[]);
    let shaped = |path: &str| {
        let r = request(p.port, "GET", path, &[], b"");
        assert_eq!(r.status, 200, "{}", r.text());
        let pare_headers: Vec<(String, String)> = r
            .headers
            .iter()
            .filter(|(k, _)| k.starts_with("x-pare-"))
            .cloned()
            .collect();
        (r.body.clone(), pare_headers)
    };
    // What the log said of reuse, once it says it of `n` responses (or after 10 s).
    let reuses = |n: usize| {
        let start = Instant::now();
        loop {
            let log = p.log.lock().unwrap().join("\n");
            let said: Vec<String> = log
                .lines()
                .filter_map(|l| l.split("\"reuse\":\"").nth(1))
                .map(|rest| rest.split('"').next().unwrap_or("").to_owned())
                .collect();
            if said.len() >= n || start.elapsed() > Duration::from_secs(10) {
                return said;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let first = shaped("/entities/reused");
    let again = shaped("/entities/reused");
    assert_eq!(
        first, again,
        "a reused body is the bytes and headers shaping gave"
    );
    assert!(!String::from_utf8_lossy(&first.0).contains("created_at"));
    assert_eq!(reuses(2), ["miss", "hit"]);
    // Asked another way: shaped again.
    let toon = shaped("/entities/reused?pare_format=toon");
    assert_ne!(toon.0, first.0);
    assert_eq!(reuses(3), ["miss", "hit", "miss"]);
    // The upstream's bytes changed: shaped again, and the answer says the new value.
    REUSED_VERSION.store(2, Ordering::SeqCst);
    let changed = shaped("/entities/reused");
    assert!(String::from_utf8_lossy(&changed.0).contains("\"version_seen\":2"));
    assert_eq!(reuses(4), ["miss", "hit", "miss", "miss"]);
    // Off: nothing kept, nothing said.
    let off = Pare::spawn(&up.url(), &policy(), &["--reuse-mib", "0"]);
    for _ in 0..2 {
        assert_eq!(
            request(off.port, "GET", "/entities/reused", &[], b"").status,
            200
        );
    }
    let log = off.log_with(&["\"pare\":\"shaped\""]);
    assert!(!log.contains("\"reuse\""), "{log}");
}

#[test]
fn reused_pages_are_stored_for_each_caller_so_their_cursors_work() {
    let up = Upstream::start();
    let p = Pare::spawn(&up.url(), &policy(), &[]);
    let paged = "/entities?pare_max_tokens=400";
    let alice = [("authorization", "Bearer alice")];
    let bob = [("authorization", "Bearer bob")];
    let a1 = request(p.port, "GET", paged, &alice, b"");
    let b1 = request(p.port, "GET", paged, &bob, b"");
    assert_eq!(
        a1.body, b1.body,
        "the same upstream body, the same first page"
    );
    let next = b1.next().expect("paged");
    // Bob's page 2 comes from the cache under Bob's identity, though his page 1 was reused.
    let b2 = request(p.port, "GET", &next, &bob, b"");
    assert_eq!(b2.status, 200, "{}", b2.text());
    assert_eq!(b2.header("x-pare-cache"), Some("hit"));
    let log = p.log_with(&["\"reuse\":\"hit\""]);
    assert!(log.contains("\"reuse\":\"miss\""), "{log}");
}

#[test]
fn regression_memory_of_large_bodies_was_never_given_back() {
    let up = Upstream::start();
    let p = pare(&up, &["--reuse-mib", "0"]);
    let before = p.rss_kib();
    let r = request(p.port, "GET", "/entities?large=1", &[], b"");
    assert_eq!(r.status, 200);
    assert!(r.header("x-pare-tokens-after").is_some(), "shaped");
    let peak = p.rss_kib();
    // Given back a quiet second after the body was answered (the allocator alone, on an
    // idle process, took 10 s or never). Up to 8 s: on a loaded 2-core machine (a CI clone
    // building beside it) 4 s once passed before the give-back's timer ran; without the
    // give-back the test still fails.
    let start = Instant::now();
    let mut after = peak;
    while start.elapsed() < Duration::from_secs(8) {
        std::thread::sleep(Duration::from_millis(250));
        after = p.rss_kib();
        if after < before + (peak - before) / 2 {
            break;
        }
    }
    assert!(
        after < before + (peak - before) / 2,
        "RSS {before} KiB before, {peak} KiB after the answer, {after} KiB 8 s later"
    );
}

/// `pare http` with `--metrics`, after a shaped request, an untouched one and a stalled
/// one: its metrics text.
fn metrics_after_some_requests() -> String {
    let up = Upstream::start();
    let metrics = free_port();
    let pare = pare(&up, &["--metrics", &metrics.to_string()]);
    assert_eq!(request(pare.port, "GET", "/entities", &[], b"").status, 200);
    assert_eq!(request(pare.port, "GET", "/echo", &[], b"").status, 200);
    let _ = exchange(
        pare.port,
        b"GET /stall HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        &[],
    );
    let r = request(metrics, "GET", "/metrics", &[], b"");
    assert_eq!(r.status, 200);
    assert!(
        r.header("content-type")
            .unwrap()
            .starts_with("text/plain; version=0.0.4")
    );
    r.text().to_owned()
}

#[test]
fn metrics_count_requests_tokens_pages_and_idle_cuts() {
    let text = metrics_after_some_requests();
    let route = r#"route="GET /entities""#;
    for line in [
        format!(r#"pare_http_requests_total{{{route},status="200",outcome="shaped"}} 1"#),
        r#"pare_http_requests_total{route="none",status="200",outcome="untouched"} 2"#.into(),
        format!(r#"pare_http_pages_served_total{{{route},source="upstream"}} 1"#),
        format!(r#"pare_http_request_duration_seconds_count{{{route}}} 1"#),
        r#"pare_http_idle_timeouts_total{peer="upstream"} 1"#.into(),
        "pare_http_bodies_held 0".into(),
    ] {
        assert!(text.lines().any(|l| l == line), "{line}\n{text}");
    }
    let tokens = |name: &str| -> u64 {
        let prefix = format!("{name}{{{route}}} ");
        let line = text.lines().find(|l| l.starts_with(&prefix)).unwrap();
        line[prefix.len()..].parse().unwrap()
    };
    assert!(tokens("pare_http_tokens_before_total") > tokens("pare_http_tokens_after_total"));
}

#[test]
#[ignore = "needs HTTP peers: scripts/http_peers.sh install (.ci/run runs it)"]
fn metrics_text_passes_promtool_check_metrics() {
    crate::rest_support::assert_promtool_accepts(&metrics_after_some_requests());
}
