//! `pare http` sends page 1 while the upstream's body is still arriving (issue 30): a JSON
//! array on a route whose level the stream can do, to a client that reads trailers. The
//! upstream is a raw socket that holds back the rest of its body until the client has read
//! the first item, so a proxy that waits for the whole body fails here, not slowly.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::rest_support::{Pare, request};

const POLICY: &str = r#"
[[ops]]
op = "drop"
paths = ["$..made_at"]
[[ops]]
op = "prune"
[http]
[[http.routes]]
match = ["GET /items", "GET /object", "GET /broken", "GET /stall", "GET /chunked", "GET /early", "GET /deep"]
"#;

fn items(n: usize) -> String {
    let items: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"id": {i}, "name": "item {i}", "made_at": "2024", "note": null}}"#))
        .collect();
    format!("[\n{}\n]", items.join(",\n"))
}

/// Lets the upstream send the rest of its body.
#[derive(Clone, Default)]
struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    fn open(&self) {
        *self.0.0.lock().unwrap() = true;
        self.0.1.notify_all();
    }

    /// Wait until open, at most `limit`.
    fn wait(&self, limit: Duration) {
        let (lock, cv) = &*self.0;
        let open = lock.lock().unwrap();
        let _ = cv.wait_timeout_while(open, limit, |open| !*open).unwrap();
    }
}

/// A raw upstream (one response per connection, saying `Connection: close`): the path
/// picks the body; `/items` sends its first item, then waits
/// for the gate before the rest.
fn upstream(gate: Gate) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming().map_while(Result::ok) {
            let gate = gate.clone();
            std::thread::spawn(move || serve(conn, &gate));
        }
    });
    port
}

fn serve(mut c: TcpStream, gate: &Gate) {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    while !data.windows(4).any(|w| w == b"\r\n\r\n") {
        match c.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
    }
    let head = String::from_utf8_lossy(&data).into_owned();
    let path = head.split(' ').nth(1).unwrap_or("").to_owned();
    // `wait`: hold the rest until the gate opens (else a moment, so the first part is read
    // on its own).
    let send = |c: &mut TcpStream, body: &[u8], first: usize, wait: bool| {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let _ = c.write_all(head.as_bytes());
        let _ = c.write_all(&body[..first]);
        let _ = c.flush();
        if wait {
            gate.wait(Duration::from_secs(20));
        } else {
            std::thread::sleep(Duration::from_millis(300));
        }
        let _ = c.write_all(&body[first..]);
    };
    if path.starts_with("/items") {
        let body = items(50);
        let first = body.find("},").unwrap() + 2;
        send(&mut c, body.as_bytes(), first, true);
    } else if path.starts_with("/object") {
        send(&mut c, br#"{"rows": [{"id": 1, "note": null}]}"#, 5, false);
    } else if path.starts_with("/early") {
        send(&mut c, b"[nope, {\"id\": 1}]", 2, false);
    } else if path.starts_with("/deep") {
        let deep = format!("[{}{}, 1]", "[".repeat(300), "]".repeat(300));
        send(&mut c, deep.as_bytes(), 1, false);
    } else if path.starts_with("/broken") {
        send(
            &mut c,
            br#"[{"id": 1, "note": null}, {"id": nope}]"#,
            26,
            true,
        );
    } else if path.starts_with("/stall") {
        // Declares more than it sends, then says nothing.
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[{\"id\": 1},";
        let _ = c.write_all(head.as_bytes());
        std::thread::sleep(Duration::from_secs(30));
    } else if path.starts_with("/chunked") {
        let body = items(3);
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
            body.len()
        );
        let _ = c.write_all(head.as_bytes());
    }
    let _ = c.flush();
}

/// A response read off the wire: head lines, the chunked body decoded, its trailers, and
/// whether the body ended properly (its last chunk came).
struct Wire {
    head: Vec<String>,
    body: String,
    trailers: Vec<String>,
    ended: bool,
}

impl Wire {
    fn header(&self, name: &str) -> Option<&str> {
        find(&self.head, name)
    }
    fn trailer(&self, name: &str) -> Option<&str> {
        find(&self.trailers, name)
    }
}

fn find<'a>(lines: &'a [String], name: &str) -> Option<&'a str> {
    lines.iter().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// GET `path` with `TE: trailers`; `on_first` runs once the body's first item has come.
fn get_streamed(port: u16, path: &str, on_first: &dyn Fn()) -> Wire {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nTE: trailers\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let mut fired = false;
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
        }
        // The first item (`"id":0` of /items, `"id":1` of /broken) has come.
        if !fired && String::from_utf8_lossy(&raw).contains(r#""id":"#) {
            fired = true;
            on_first();
        }
    }
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, mut rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let head: Vec<String> = head.lines().map(str::to_owned).collect();
    if find(&head, "content-length").is_some() {
        return Wire {
            head,
            body: rest.to_owned(),
            trailers: Vec::new(),
            ended: true,
        };
    }
    let mut body = String::new();
    let mut trailers = Vec::new();
    let mut ended = false;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 {
            let (t, _) = after.split_once("\r\n\r\n").unwrap_or((after, ""));
            trailers = t.lines().map(str::to_owned).collect();
            ended = after.contains("\r\n");
            break;
        }
        if after.len() < n + 2 {
            break;
        }
        body.push_str(&after[..n]);
        rest = &after[n + 2..];
    }
    Wire {
        head,
        body,
        trailers,
        ended,
    }
}

fn pare(port: u16) -> (Pare, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, POLICY).unwrap();
    let pare = Pare::spawn(
        &format!("http://127.0.0.1:{port}"),
        &policy,
        &["--upstream-idle-timeout", "2"],
    );
    (pare, dir)
}

#[test]
fn page_1_streams_before_the_upstreams_body_is_whole() {
    let gate = Gate::default();
    let (pare, _dir) = pare(upstream(gate.clone()));
    let opened = gate.clone();
    let streamed = get_streamed(pare.port, "/items", &move || opened.open());
    // The upstream sent the rest only once the client had the first item: a pare that
    // waited for the whole body would have had nothing to show for 20 s.
    assert!(streamed.ended, "{}", streamed.body);
    assert_eq!(streamed.header("x-pare-level"), Some("standard"));
    assert_eq!(streamed.header("x-pare-pages"), Some("1"));
    assert!(streamed.header("trailer").unwrap().contains("X-Pare-Note"));
    assert!(streamed.header("x-pare-tokens-before").is_none());
    // Byte for byte the buffered answer, and its headers as trailers.
    let buffered = request(pare.port, "GET", "/items", &[], b"");
    assert_eq!(streamed.body, buffered.text());
    for name in ["x-pare-tokens-before", "x-pare-tokens-after", "x-pare-note"] {
        assert_eq!(streamed.trailer(name), buffered.header(name), "{name}");
    }
    assert!(streamed.trailer("x-pare-note").is_some());
    let log = pare.log_with(&[r#""streamed":true"#, r#""tokens_after""#]);
    assert!(log.contains(r#""streamed":true"#), "{log}");
}

#[test]
fn what_is_not_an_array_or_asks_for_a_budget_or_no_trailers_is_shaped_whole() {
    let gate = Gate::default();
    gate.open();
    let (pare, _dir) = pare(upstream(gate));
    let whole = |w: &Wire| w.header("content-length").is_some() && w.header("trailer").is_none();
    let object = get_streamed(pare.port, "/object", &|| {});
    assert!(whole(&object), "{:?}", object.head);
    assert_eq!(object.body, r#"{"rows":[{"id":1}]}"#);
    let budget = get_streamed(pare.port, "/items?pare_max_tokens=5000", &|| {});
    assert!(whole(&budget), "{:?}", budget.head);
    let chunked = get_streamed(pare.port, "/chunked", &|| {});
    assert!(whole(&chunked), "{:?}", chunked.head);
    let plain = request(pare.port, "GET", "/items", &[], b"");
    assert!(plain.header("x-pare-tokens-after").is_some());
}

#[test]
fn a_body_that_stops_being_json_after_page_1_began_is_broken_off_and_logged() {
    // The upstream sends its bad second item only once the client has the first.
    let gate = Gate::default();
    let (pare, _dir) = pare(upstream(gate.clone()));
    let opened = gate.clone();
    let broken = get_streamed(pare.port, "/broken", &move || opened.open());
    assert!(!broken.ended, "{:?} {}", broken.head, broken.body);
    assert!(broken.body.starts_with(r#"[{"id":1}"#), "{}", broken.body);
    let log = pare.log_with(&["stream_error"]);
    assert!(log.contains("is not JSON"), "{log}");
    assert!(log.contains(r#""pare":"broken off""#), "{log}");
}

#[test]
fn an_upstream_stalling_a_streamed_body_is_cut_off_at_the_idle_timeout() {
    let gate = Gate::default();
    let (pare, _dir) = pare(upstream(gate));
    let start = std::time::Instant::now();
    let stalled = get_streamed(pare.port, "/stall", &|| {});
    assert!(!stalled.ended);
    assert!(start.elapsed() < Duration::from_secs(10));
    let log = pare.log_with(&["stream_error"]);
    assert!(log.contains("the upstream sent nothing for 2 s"), "{log}");
}

#[test]
fn a_body_not_json_at_its_first_item_goes_on_untouched_as_a_whole_one_would() {
    let gate = Gate::default();
    gate.open();
    let (pare, _dir) = pare(upstream(gate));
    // Not JSON, and deeper than pare reads: nothing was shaped yet, so the upstream's bytes
    // go on as they came, as they do for a client that shapes whole.
    let deep = format!("[{}{}, 1]", "[".repeat(300), "]".repeat(300));
    for (path, body) in [
        ("/early", "[nope, {\"id\": 1}]".to_owned()),
        ("/deep", deep),
    ] {
        let w = get_streamed(pare.port, path, &|| {});
        assert!(w.ended, "{path}: {:?}", w.head);
        assert_eq!(w.body, body, "{path}");
        assert!(w.header("x-pare-level").is_none(), "{path}: {:?}", w.head);
        let whole = request(pare.port, "GET", path, &[], b"");
        assert_eq!(whole.text(), body, "{path}");
    }
    let log = pare.log_with(&[r#""path":"/deep""#]);
    assert!(log.contains(r#""why":"not JSON"#), "{log}");
}
