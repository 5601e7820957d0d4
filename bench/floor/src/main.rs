//! `parse-floor PARSER FILE`: read FILE and parse it into the parser's own tree, then exit
//! (the tree is not freed, as `pare` does not free its own). PARSER: `sonic-rs`,
//! `simd-json` or `serde_json`. Prints the tree's top-level member count to stdout, so
//! the parse cannot be skipped; with `PARSE_FLOOR_TIMES=1`, `read_ms parse_ms` to stderr.
//!
//! Why: `bench/compare.sh --floor` times this as a whole process beside `pare compact`, so
//! the figure says how close pare is to what reading and parsing alone cost.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(parser), Some(path)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: parse-floor sonic-rs|simd-json|serde_json FILE");
        std::process::exit(2);
    };
    let t0 = Instant::now();
    let mut bytes = std::fs::read(path).unwrap_or_else(|e| {
        eprintln!("parse-floor: {path}: {e}");
        std::process::exit(2);
    });
    let t1 = Instant::now();
    let members = match parser.as_str() {
        "sonic-rs" => {
            use sonic_rs::JsonContainerTrait;
            let v: sonic_rs::Value = sonic_rs::from_slice(&bytes).expect("valid JSON");
            let n = v.as_object().map_or(0, |o| o.len());
            std::mem::forget(v);
            n
        }
        "simd-json" => {
            use simd_json::prelude::ValueAsObject;
            let v = simd_json::to_borrowed_value(&mut bytes).expect("valid JSON");
            let n = v.as_object().map_or(0, |o| o.len());
            std::mem::forget(v);
            n
        }
        "serde_json" => {
            let v: serde_json::Value = serde_json::from_slice(&bytes).expect("valid JSON");
            let n = v.as_object().map_or(0, |o| o.len());
            std::mem::forget(v);
            n
        }
        other => {
            eprintln!("parse-floor: unknown parser {other} (sonic-rs, simd-json, serde_json)");
            std::process::exit(2);
        }
    };
    let t2 = Instant::now();
    println!("{members}");
    if std::env::var_os("PARSE_FLOOR_TIMES").is_some() {
        eprintln!(
            "{:.1} {:.1}",
            (t1 - t0).as_secs_f64() * 1e3,
            (t2 - t1).as_secs_f64() * 1e3
        );
    }
    std::mem::forget(bytes);
}
