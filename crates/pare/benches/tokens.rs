//! Token counting speed: whole payloads (MB/s) and many small strings (time per string).
//!
//! Reads the corpus at bench time (checked in, see `testdata/README.md`; or
//! `$PARE_CORPUS_DIR`). `bpe_openai`'s own `count` (tiktoken's splitting,
//! same BPE) runs alongside as the tiktoken-like baseline.
//!
//!     cargo bench -p pare-engine --bench tokens

#[path = "../tests/common/corpus.rs"]
mod corpus;

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pare::tokens::{Tokenizer, by_name};
use serde_json::Value;

/// (name, text) of every corpus file.
fn corpus() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = corpus::corpus_files()
        .into_iter()
        .filter_map(|p| {
            let name = p.file_stem()?.to_string_lossy().into_owned();
            Some((name, std::fs::read_to_string(&p).ok()?))
        })
        .collect();
    files.sort();
    files
}

/// Every key and string value in the corpus: the many small strings ops count one by one.
fn small_strings(files: &[(String, String)]) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            Value::Object(o) => {
                for (k, v) in o {
                    out.push(k.clone());
                    walk(v, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (_, text) in files {
        if let Ok(v) = serde_json::from_str::<Value>(text) {
            walk(&v, &mut out);
        }
    }
    out
}

fn bench_count(c: &mut Criterion) {
    let files = corpus();
    let all: String = files
        .iter()
        .map(|(_, t)| t.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let tokenizers: Vec<Box<dyn Tokenizer>> = ["o200k_base", "cl100k_base", "chars4"]
        .iter()
        .map(|n| by_name(n).expect("built-in"))
        .collect();

    let mut group = c.benchmark_group("count");
    for (name, text) in files.iter().chain([&("all".to_owned(), all.clone())]) {
        group.throughput(Throughput::Bytes(text.len() as u64));
        for t in &tokenizers {
            group.bench_with_input(BenchmarkId::new(t.name(), name), text, |b, text| {
                b.iter(|| t.count(black_box(text)))
            });
        }
    }
    group.throughput(Throughput::Bytes(all.len() as u64));
    for (name, baseline) in [
        ("bpe_openai_o200k", bpe_openai::o200k_base()),
        ("bpe_openai_cl100k", bpe_openai::cl100k_base()),
    ] {
        group.bench_with_input(BenchmarkId::new(name, "all"), &all, |b, text| {
            b.iter(|| baseline.count(black_box(text.as_str())))
        });
    }
    group.finish();

    let small = small_strings(&files);
    let bytes: usize = small.iter().map(String::len).sum();
    eprintln!(
        "small strings: {} strings, {bytes} bytes, {:.1} bytes each",
        small.len(),
        bytes as f64 / small.len().max(1) as f64
    );
    let mut group = c.benchmark_group("count_small");
    group.throughput(Throughput::Elements(small.len() as u64));
    for t in &tokenizers {
        group.bench_function(t.name(), |b| {
            b.iter(|| small.iter().map(|s| t.count(black_box(s))).sum::<usize>())
        });
    }
    group.finish();

    // Cutting: a prefix and a suffix of half the tokens of the whole corpus.
    let mut group = c.benchmark_group("cut");
    group.throughput(Throughput::Bytes(all.len() as u64));
    let o200k = &tokenizers[0];
    let half = o200k.count(&all) / 2;
    group.bench_function("o200k_base/prefix_len", |b| {
        b.iter(|| o200k.prefix_len(black_box(&all), half))
    });
    group.bench_function("o200k_base/suffix_start", |b| {
        b.iter(|| o200k.suffix_start(black_box(&all), half))
    });
    group.bench_function("o200k_base/fits_small_limit", |b| {
        b.iter(|| o200k.fits(black_box(&all), 1000))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = bench_count
}
criterion_main!(benches);
