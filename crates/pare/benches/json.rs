//! Throughput of `pare::json` parse and write, with `serde_json::Value` alongside as a
//! yardstick.
//!
//! Why: the parser and writer are most of the time of a `pare` run on big payloads, so
//! regressions here show up directly in the end-to-end comparison with `jq` and Python.
//! Inputs: the six corpus files (checked in, see `testdata/README.md`) and a synthetic ~20 MB
//! document shaped like a tool response (records with strings, numbers, nulls, nesting,
//! some escapes and non-ASCII).
//!
//! ```text
//! cargo bench -p pare-engine --bench json              # all
//! cargo bench -p pare-engine --bench json -- synthetic # just the big document
//! ```

#[path = "../tests/common/corpus.rs"]
mod corpus;

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pare::json::{parse, to_compact, to_pretty};

/// Deterministic pseudo-random numbers (an LCG is plenty for shaping test data).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A pretty-printed array of records, about `target` bytes.
fn synthetic(target: usize) -> String {
    const WORDS: &[&str] = &[
        "report",
        "index",
        "région",
        "snapshot",
        "stream",
        "search",
        "export",
        "billing",
        "retry",
        "graph",
        "gateway",
        "cluster",
        "naïve",
        "日本",
        "tab\\there",
        "say \\\"hi\\\"",
        "path/to/file",
        "line\\nbreak",
        "😀",
    ];
    let mut rng = Lcg(42);
    let mut out = String::with_capacity(target + 4096);
    out.push_str("{\n  \"results\": [\n");
    let mut i = 0u64;
    while out.len() < target {
        if i > 0 {
            out.push_str(",\n");
        }
        let mut sentence = String::new();
        for w in 0..(5 + rng.below(20)) {
            if w > 0 {
                sentence.push(' ');
            }
            sentence.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
        }
        let tags: Vec<String> = (0..rng.below(5))
            .map(|_| format!("\"{}\"", WORDS[rng.below(WORDS.len() as u64) as usize]))
            .collect();
        out.push_str(&format!(
            "    {{\n      \"id\": \"rec-{i:08}\",\n      \"score\": 0.{:04},\n      \
             \"count\": {},\n      \"active\": {},\n      \"owner\": null,\n      \
             \"description\": \"{sentence}\",\n      \"tags\": [{}],\n      \
             \"meta\": {{\"created_at\": \"2025-0{}-1{}T10:2{}:00Z\", \"size\": {}, \"ratio\": {}e-3}}\n    }}",
            rng.below(10_000),
            rng.below(1_000_000),
            rng.below(2) == 1,
            tags.join(", "),
            1 + rng.below(9),
            rng.below(10),
            rng.below(10),
            rng.below(1 << 40),
            rng.below(100_000),
        ));
        i += 1;
    }
    out.push_str("\n  ],\n  \"total\": ");
    out.push_str(&i.to_string());
    out.push_str("\n}\n");
    out
}

fn inputs() -> Vec<(String, String)> {
    let mut inputs = Vec::new();
    for p in corpus::corpus_files() {
        let text = std::fs::read_to_string(&p).expect("read corpus file");
        let name = p
            .file_stem()
            .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        inputs.push((name, text));
    }
    inputs.push(("synthetic_20MB".to_owned(), synthetic(20 << 20)));
    inputs
}

fn bench_json(c: &mut Criterion) {
    for (name, text) in inputs() {
        let big = text.len() > 1 << 20;
        let value = parse(&text).expect("benchmark input parses");
        let serde_value: serde_json::Value =
            serde_json::from_str(&text).expect("serde_json parses");

        let mut group = c.benchmark_group(format!("parse/{name}"));
        group.throughput(Throughput::Bytes(text.len() as u64));
        if big {
            group
                .sample_size(10)
                .measurement_time(Duration::from_secs(8));
        }
        group.bench_with_input(BenchmarkId::from_parameter("pare"), &text, |b, t| {
            b.iter(|| parse(black_box(t)))
        });
        group.bench_with_input(BenchmarkId::from_parameter("serde_json"), &text, |b, t| {
            b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(t)))
        });
        group.finish();

        // Throughput counted in bytes of compact output, the same for both.
        let compact_len = to_compact(&value).len();
        let mut group = c.benchmark_group(format!("write_compact/{name}"));
        group.throughput(Throughput::Bytes(compact_len as u64));
        if big {
            group
                .sample_size(10)
                .measurement_time(Duration::from_secs(5));
        }
        group.bench_function("pare", |b| b.iter(|| to_compact(black_box(&value))));
        group.bench_function("serde_json", |b| {
            b.iter(|| serde_json::to_string(black_box(&serde_value)))
        });
        group.finish();

        let pretty_len = to_pretty(&value).len();
        let mut group = c.benchmark_group(format!("write_pretty/{name}"));
        group.throughput(Throughput::Bytes(pretty_len as u64));
        if big {
            group
                .sample_size(10)
                .measurement_time(Duration::from_secs(5));
        }
        group.bench_function("pare", |b| b.iter(|| to_pretty(black_box(&value))));
        group.bench_function("serde_json", |b| {
            b.iter(|| serde_json::to_string_pretty(black_box(&serde_value)))
        });
        group.finish();
    }
}

criterion_group!(benches, bench_json);
criterion_main!(benches);
