//! Criterion bench of what `pare mcp` does to one large `tools/call` result in process: the
//! reference memory server's `read_graph` (about 120 KB of text, its graph again as
//! `structuredContent`), shaped by `examples/policies/memory.toml` (lossless, `auto`) with
//! the proxy's default budget. `bench/mcp_latency.py` times the same result through the
//! whole proxy against the server called directly; this splits the engine's part of it.

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pare::mcp::config::Config;
use pare::mcp::originals::Originals;
use pare::mcp::result::{Budget, Call, Stores, shape_result};
use pare::mcp::store::{Limits, PageCache};
use serde_json::{Value as Json, json};

/// A graph shaped as `crates/pare-cli/tests/mcp/memory_graph.py` makes it (entities of a few
/// types with 1–4 observations, two relations per entity), from a fixed seed.
fn graph(entities: usize) -> Json {
    const TYPES: [&str; 6] = [
        "person",
        "project",
        "organization",
        "service",
        "document",
        "meeting",
    ];
    const VERBS: [&str; 7] = [
        "works_on",
        "owns",
        "depends_on",
        "reports_to",
        "mentions",
        "attended",
        "maintains",
    ];
    const WORDS: [&str; 22] = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "kafka",
        "postgres",
        "rust",
        "python",
        "deploy",
        "review",
        "budget",
        "quarterly",
        "latency",
        "migration",
        "onboarding",
        "incident",
        "roadmap",
        "design",
        "api",
        "cache",
        "index",
        "search",
    ];
    let mut seed = 7u64;
    let mut next = move |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    };
    let mut names = Vec::new();
    let mut list = Vec::new();
    for i in 0..entities {
        let kind = TYPES[next(TYPES.len())];
        let name = format!(
            "{}_{i:04}_{}",
            kind[..1].to_uppercase() + &kind[1..],
            WORDS[next(WORDS.len())]
        );
        let observations: Vec<String> = (0..1 + next(4))
            .map(|_| {
                let words: Vec<&str> = (0..3 + next(7)).map(|_| WORDS[next(WORDS.len())]).collect();
                let line = words.join(" ");
                line[..1].to_uppercase() + &line[1..] + "."
            })
            .collect();
        names.push(name.clone());
        list.push(json!({"name": name, "entityType": kind, "observations": observations}));
    }
    let relations: Vec<Json> = (0..entities * 2)
        .map(|_| {
            let from = &names[next(names.len())];
            let to = &names[next(names.len())];
            json!({"from": from, "to": to, "relationType": VERBS[next(VERBS.len())]})
        })
        .collect();
    json!({"entities": list, "relations": relations})
}

fn read_graph(c: &mut Criterion) {
    let graph = graph(250);
    // The server writes `JSON.stringify(graph, null, 2)` as the text and the graph again as
    // `structuredContent`.
    let text = serde_json::to_string_pretty(&graph).unwrap();
    let structured = serde_json::to_string(&graph).unwrap();
    let result = json!({"content": [{"type": "text", "text": text}]});
    let policy = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/policies/memory.toml"
    ))
    .expect("examples/policies/memory.toml");
    let policy = pare::Policy::parse(&policy).expect("a valid policy");
    let config = Config::from_policy(policy, &mut |_: &str| {
        Err::<pare::Policy, std::io::Error>(std::io::Error::other("no files"))
    })
    .expect("a valid [mcp] section");
    let tool: Arc<_> = config.tool("read_graph").expect("a shaped tool");
    let budget = Budget {
        max_tokens: 20_000,
        max_chars4: 25_000,
        tokenizer: pare::tokens::builtin("o200k_base").unwrap(),
    };
    let call = Call {
        tool_name: "read_graph",
        tool: &tool,
        level: None,
        detail_arg: "detail",
        params: &[],
        verbatim: false,
        error: false,
        query: None,
        fields: None,
    };
    let mut pages = PageCache::new(Limits::default());
    let mut originals = Originals::new(Limits::default());
    let mut group = c.benchmark_group("mcp");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("read_graph", |b| {
        b.iter(|| {
            let stores = Stores {
                pages: &mut pages,
                originals: &mut originals,
            };
            shape_result(black_box(&result), Some(&structured), &call, budget, stores)
        })
    });
    group.finish();
}

criterion_group!(benches, read_graph);
criterion_main!(benches);
