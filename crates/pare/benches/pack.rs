//! `pare pack` speed: packing the corpus's semantic search response at the issue's budgets
//! with a cold cache (every preview and count made afresh) and a warm one (a repeat call, as
//! the MCP proxy makes them), and the structure-preserving preview of real source files.
//!
//! Reads the corpus's `semantic_search_full.json` (checked in; or `$PARE_CORPUS_DIR`) and Python's
//! standard library at bench time; without them, generated chunks stand in.
//!
//!     cargo bench -p pare-engine --bench pack

#[path = "../tests/common/corpus.rs"]
mod corpus;

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use pare::pack::cache::PreviewCache;
use pare::pack::chunks::{self, Chunk};
use pare::pack::outline::{self, Lang, PreviewOptions};
use pare::pack::{PackSettings, Tier, pack};
use pare::schema::pack::PackOptions;

fn search_chunks() -> (Vec<Chunk>, PackOptions) {
    let opts = PackOptions {
        id: "chunk_id".into(),
        score: "hybrid_score".into(),
        text: "chunk_text".into(),
        path: "source_file".into(),
        ..PackOptions::default()
    };
    let text = std::fs::read_to_string(corpus::corpus_file("semantic_search_full.json")).unwrap_or_else(|_| {
        eprintln!("note: no corpus; using generated chunks");
        let items: Vec<String> = (0..20)
            .map(|i| {
                let body: Vec<String> = (0..40)
                    .map(|k| format!("    v{k} = step_{k}(request, {i})"))
                    .collect();
                format!(
                    r#"{{"chunk_id":{i},"hybrid_score":0.{:02},"source_file":"src/m{i}.py","chunk_text":{}}}"#,
                    99 - i * 3,
                    serde_json::to_string(&format!("def handler_{i}(request):\n    \"\"\"Handle.\"\"\"\n{}\n    return v0", body.join("\n"))).unwrap()
                )
            })
            .collect();
        format!(r#"{{"results":[{}]}}"#, items.join(","))
    });
    let value = pare::json::parse(&text).expect("valid JSON");
    (chunks::from_response(&value, &opts).expect("chunks"), opts)
}

fn bench_pack(c: &mut Criterion) {
    let (list, opts) = search_chunks();
    let tok = pare::tokens::builtin("o200k_base").expect("o200k_base");
    let mut group = c.benchmark_group("pack");
    for budget in [800, 1500, 4000] {
        let settings = PackSettings {
            options: &opts,
            budget,
            tokenizer: tok,
            max_tier: Tier::Full,
            level: "full",
            total: None,
            cursor_in_text: true,
            query: None,
        };
        group.bench_with_input(BenchmarkId::new("cold", budget), &budget, |b, _| {
            b.iter(|| pack(black_box(&list), &settings, &mut PreviewCache::new(256)))
        });
        let mut cache = PreviewCache::new(256);
        group.bench_with_input(BenchmarkId::new("warm", budget), &budget, |b, _| {
            b.iter(|| pack(black_box(&list), &settings, &mut cache))
        });
    }
    group.finish();
}

fn bench_preview(c: &mut Criterion) {
    let lib = std::process::Command::new("python3")
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['stdlib'])",
        ])
        .output()
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    let files: Vec<String> = ["argparse.py", "textwrap.py", "heapq.py"]
        .iter()
        .filter_map(|f| std::fs::read_to_string(lib.as_ref()?.join(f)).ok())
        .collect();
    if files.is_empty() {
        eprintln!("note: no Python standard library found; skipping the preview bench");
        return;
    }
    let bytes: usize = files.iter().map(String::len).sum();
    let mut group = c.benchmark_group("preview");
    group.throughput(criterion::Throughput::Bytes(bytes as u64));
    group.bench_function("python_stdlib", |b| {
        b.iter(|| {
            for text in &files {
                black_box(outline::preview(
                    text,
                    Lang::Python,
                    1,
                    &PreviewOptions {
                        head: 0.15,
                        tail: 0.15,
                    },
                ));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, bench_pack, bench_preview);
criterion_main!(benches);
