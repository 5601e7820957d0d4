//! Criterion benches of the whole engine path `pare compact` takes: parse → shape → render,
//! with each example policy on its corpus file, plus the entities policy on a larger payload
//! made by repeating the corpus entities (so per-node costs dominate, as on big inputs).

#[path = "../tests/common/corpus.rs"]
mod corpus;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pare::encode::{Format, render};
use pare::policy::Policy;
use pare::shape::{ShapeOptions, shape};

fn corpus(name: &str) -> Option<String> {
    std::fs::read_to_string(corpus::corpus_file(name)).ok()
}

fn policy(name: &str) -> Policy {
    let path = format!(
        "{}/../../examples/policies/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    Policy::parse(&std::fs::read_to_string(path).expect("example policy")).expect("valid policy")
}

fn compact(c: &mut Criterion) {
    let cases = [
        ("entities_systems.json", "entities.toml"),
        ("search_memory.json", "meta_relations.toml"),
        ("narrative_day.json", "narrative.toml"),
        ("website_usage.json", "website_usage.toml"),
    ];
    let mut group = c.benchmark_group("compact");
    for (file, policy_file) in cases {
        let Some(text) = corpus(file) else {
            eprintln!("skipping {file}: corpus not found");
            continue;
        };
        let policy = policy(policy_file);
        let opts = ShapeOptions::new(&policy);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(file, |b| {
            b.iter(|| {
                let value = pare::json::parse(black_box(&text)).unwrap();
                let shaped = shape(value, &policy, &opts);
                render(&shaped.value, Format::Json, opts.tokenizer)
            })
        });
    }
    if let Some(text) = corpus("entities_systems.json") {
        // ~6 MB: the corpus entities 50 times over.
        let value = pare::json::parse(&text).unwrap();
        let entities = value
            .as_object()
            .unwrap()
            .get("entities")
            .unwrap()
            .as_array()
            .unwrap();
        let mut big = Vec::new();
        for _ in 0..50 {
            big.extend(entities.iter().cloned());
        }
        let mut root = pare::Map::new();
        root.insert("entities", pare::Value::Array(big));
        let big_text = pare::json::to_pretty(&pare::Value::Object(root));
        let policy = policy("entities.toml");
        let opts = ShapeOptions::new(&policy);
        group.throughput(Throughput::Bytes(big_text.len() as u64));
        group.sample_size(10);
        group.bench_function("entities_x50", |b| {
            b.iter(|| {
                let value = pare::json::parse(black_box(&big_text)).unwrap();
                let shaped = shape(value, &policy, &opts);
                render(&shaped.value, Format::Json, opts.tokenizer)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, compact);
criterion_main!(benches);
