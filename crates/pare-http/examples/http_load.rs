//! A closed-loop load generator for `pare http`: N keep-alive clients, each sending its next
//! request when the last one's body has arrived, for a fixed time; first straight to the
//! upstream, then through pare, so the difference is what pare adds.
//!
//! ```text
//! cargo run --release -p pare-http --example http_load -- \
//!     --direct http://127.0.0.1:8001/data.json --via http://127.0.0.1:8002/data.json \
//!     --clients 50 --seconds 60 --pid $(pgrep -f 'pare http')
//! ```
//!
//! Prints one JSON object: for each phase the requests, throughput, p50/p99/max latency
//! and errors (a status other than 200, or a broken exchange), the added p50/p99, and
//! the RSS of `--pid` (pare) at the start and end of its phase and six times during it.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::Uri;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use serde_json::json;

struct Args {
    direct: Uri,
    via: Uri,
    clients: usize,
    seconds: u64,
    pid: Option<u32>,
}

fn args() -> Args {
    let mut a = Args {
        direct: Uri::from_static("http://127.0.0.1:8001/"),
        via: Uri::from_static("http://127.0.0.1:8002/"),
        clients: 50,
        seconds: 60,
        pid: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--direct" => a.direct = value.parse().expect("--direct URL"),
            "--via" => a.via = value.parse().expect("--via URL"),
            "--clients" => a.clients = value.parse().expect("--clients N"),
            "--seconds" => a.seconds = value.parse().expect("--seconds N"),
            "--pid" => a.pid = Some(value.parse().expect("--pid N")),
            other => panic!("unknown flag {other}"),
        }
    }
    a
}

fn rss_kib(pid: Option<u32>) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", pid?)).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

struct Phase {
    latencies: Vec<Duration>,
    errors: usize,
    bytes: u64,
    took: Duration,
}

async fn phase(uri: &Uri, clients: usize, seconds: u64) -> Phase {
    let mut http = HttpConnector::new();
    http.set_nodelay(true);
    let client: Client<HttpConnector, Empty<Bytes>> = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(clients)
        .build(http);
    let start = Instant::now();
    let end = start + Duration::from_secs(seconds);
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let client = client.clone();
            let uri = uri.clone();
            tokio::spawn(async move {
                let (mut lat, mut errors, mut bytes) = (Vec::new(), 0usize, 0u64);
                while Instant::now() < end {
                    let t = Instant::now();
                    match client.get(uri.clone()).await {
                        Ok(resp) => {
                            let ok = resp.status() == 200;
                            match resp.into_body().collect().await {
                                Ok(body) if ok => {
                                    bytes += body.to_bytes().len() as u64;
                                    lat.push(t.elapsed());
                                }
                                _ => errors += 1,
                            }
                        }
                        Err(_) => errors += 1,
                    }
                }
                (lat, errors, bytes)
            })
        })
        .collect();
    let mut p = Phase {
        latencies: Vec::new(),
        errors: 0,
        bytes: 0,
        took: Duration::ZERO,
    };
    for t in tasks {
        let (lat, errors, bytes) = t.await.expect("a client task");
        p.latencies.extend(lat);
        p.errors += errors;
        p.bytes += bytes;
    }
    p.took = start.elapsed();
    p.latencies.sort_unstable();
    p
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e5).round() / 100.0
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn report(p: &Phase) -> serde_json::Value {
    json!({
        "requests": p.latencies.len(),
        "errors": p.errors,
        "per_second": (p.latencies.len() as f64 / p.took.as_secs_f64()).round(),
        "mib_per_second": ((p.bytes as f64 / p.took.as_secs_f64() / 1048576.0) * 10.0).round() / 10.0,
        "p50_ms": ms(quantile(&p.latencies, 0.5)),
        "p99_ms": ms(quantile(&p.latencies, 0.99)),
        "max_ms": ms(p.latencies.last().copied().unwrap_or_default()),
    })
}

#[tokio::main]
async fn main() {
    let a = args();
    let direct = phase(&a.direct, a.clients, a.seconds).await;
    let rss_start = rss_kib(a.pid);
    // pare's RSS through its phase, six samples: flat, or growing?
    let (pid, seconds) = (a.pid, a.seconds);
    let sampler = tokio::spawn(async move {
        let mut samples = Vec::new();
        for _ in 0..6 {
            tokio::time::sleep(Duration::from_secs_f64(seconds as f64 / 6.0)).await;
            samples.extend(rss_kib(pid));
        }
        samples
    });
    let via = phase(&a.via, a.clients, a.seconds).await;
    let rss_end = rss_kib(a.pid);
    let rss_samples = sampler.await.unwrap_or_default();
    let added = |q| ms(quantile(&via.latencies, q)) - ms(quantile(&direct.latencies, q));
    let out = json!({
        "clients": a.clients,
        "seconds": a.seconds,
        "direct": report(&direct),
        "via_pare": report(&via),
        "added_p50_ms": (added(0.5) * 100.0).round() / 100.0,
        "added_p99_ms": (added(0.99) * 100.0).round() / 100.0,
        "pare_rss_kib_start": rss_start,
        "pare_rss_kib_end": rss_end,
        "pare_rss_kib_samples": rss_samples,
    });
    println!("{}", serde_json::to_string_pretty(&out).unwrap());
}
