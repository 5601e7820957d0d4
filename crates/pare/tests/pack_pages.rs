//! `pare pack`'s progressive-disclosure parts (scenario S5): the opt-in envelope, pages and
//! their cursors, fields said once for all chunks, and same-file chunks with overlapping
//! lines merged into one.

use crate::common;

use pare::pack::cache::PreviewCache;
use pare::pack::chunks::{self, Chunk};
use pare::pack::{PackSettings, Packed, Tier, pack, pack_from_cursor};
use pare::schema::pack::PackOptions;
use pare::tokens::Tokenizer;
use proptest::prelude::*;

fn tok() -> &'static dyn Tokenizer {
    pare::tokens::builtin("o200k_base").expect("o200k_base")
}

/// The corpus's search response as chunks, and its `total_found`.
fn corpus(opts: &PackOptions) -> (Vec<Chunk>, Option<usize>) {
    let v = common::search_response();
    (
        chunks::from_response(&v, opts).expect("chunks"),
        chunks::total(&v, opts),
    )
}

fn settings<'a>(opts: &'a PackOptions, budget: usize, total: Option<usize>) -> PackSettings<'a> {
    PackSettings {
        options: opts,
        budget,
        tokenizer: tok(),
        max_tier: Tier::Full,
        level: "full",
        total,
        cursor_in_text: true,
        query: None,
    }
}

fn envelope(packed: &Packed) -> serde_json::Value {
    let line = packed.text.lines().next().expect("an envelope line");
    serde_json::from_str(line).expect("the envelope is JSON")
}

#[test]
fn envelope_states_the_exact_tokens_and_what_was_cut() {
    let mut opts = common::search_pack_options();
    opts.envelope = true;
    let (list, total) = corpus(&opts);
    for budget in [300, 800, 1500, 4000, 20_000] {
        let packed = pack(
            &list,
            &settings(&opts, budget, total),
            &mut PreviewCache::new(64),
        );
        let env = envelope(&packed);
        let tokens = tok().count(&packed.text);
        assert!(tokens <= budget, "{tokens} > {budget}");
        assert_eq!(env["tokens"], tokens, "budget {budget}: {env}");
        assert_eq!(env["budget"], budget);
        assert_eq!(env["mode"], "full");
        assert_eq!(env["tokenizer"], "o200k_base");
        assert_eq!(env["total"], 60, "total_found of the response");
        let left_out = packed
            .metrics
            .items
            .iter()
            .filter(|m| m.tier == "left-out")
            .count();
        assert_eq!(env["left_out"], left_out);
        assert_eq!(env["has_more"], left_out > 0);
        assert_eq!(env["next_cursor"].is_string(), left_out > 0);
        if let Some(cursor) = env["next_cursor"].as_str() {
            assert!(cursor.len() <= 11, "short cursor: {cursor}");
            assert!(
                packed
                    .text
                    .contains(&format!("; next page: --cursor {cursor}")),
                "the left-out note names the cursor"
            );
        }
        assert_eq!(
            env["cut"],
            left_out > 0 || env["degraded"].as_u64() > Some(0)
        );
    }
}

#[test]
fn pages_show_every_chunk_once_each_within_the_budget() {
    let mut opts = common::search_pack_options();
    opts.envelope = true;
    let (list, total) = corpus(&opts);
    let budget = 700;
    let s = settings(&opts, budget, total);
    let mut cache = PreviewCache::new(64);
    let mut packed = pack(&list, &s, &mut cache);
    let mut seen: Vec<String> = Vec::new();
    let mut pages = 0;
    loop {
        pages += 1;
        assert!(tok().count(&packed.text) <= budget, "page {pages}");
        assert_eq!(envelope(&packed)["page"], pages);
        for m in &packed.metrics.items {
            if !["left-out", "earlier-page", "merged"].contains(&m.tier) {
                assert!(!seen.contains(&m.id), "chunk {} shown twice", m.id);
                seen.push(m.id.clone());
            }
        }
        let Some(cursor) = envelope(&packed)["next_cursor"].as_str().map(str::to_owned) else {
            break;
        };
        packed = pack_from_cursor(&list, &s, &mut cache, &cursor).expect("our own cursor");
        assert!(pages < 30, "paging must end");
    }
    assert!(pages > 1, "budget {budget} needs more than one page");
    assert_eq!(seen.len(), list.len(), "every chunk is shown on some page");
}

#[test]
fn a_cursor_for_other_settings_is_refused() {
    let mut opts = common::search_pack_options();
    opts.envelope = true;
    let (list, total) = corpus(&opts);
    let mut cache = PreviewCache::new(64);
    let first = pack(&list, &settings(&opts, 800, total), &mut cache);
    let cursor = envelope(&first)["next_cursor"]
        .as_str()
        .expect("800 tokens leave chunks out")
        .to_owned();
    let err = pack_from_cursor(&list, &settings(&opts, 900, total), &mut cache, &cursor)
        .err()
        .expect("another budget");
    assert!(
        err.to_string().contains("does not fit this response"),
        "{err}"
    );
    let err = pack_from_cursor(&list, &settings(&opts, 800, total), &mut cache, "#!")
        .err()
        .expect("garbage");
    assert!(err.to_string().contains("not a pare pack cursor"), "{err}");
}

#[test]
fn envelope_warns_over_a_clients_limit() {
    let mut opts = common::search_pack_options();
    opts.envelope = true;
    opts.client_limit = 1000;
    let (list, total) = corpus(&opts);
    let packed = pack(
        &list,
        &settings(&opts, 5000, total),
        &mut PreviewCache::new(64),
    );
    let env = envelope(&packed);
    let warnings: Vec<&str> = env["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("this response is") && w.contains("1000-token limit")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w.starts_with("unpacked")),
        "{warnings:?}"
    );
    opts.client_limit = 25_000;
    let packed = pack(
        &list,
        &settings(&opts, 800, total),
        &mut PreviewCache::new(64),
    );
    assert!(
        envelope(&packed).get("warnings").is_none(),
        "no warning under the limit"
    );
}

#[test]
fn a_field_equal_on_every_chunk_is_said_once() {
    let opts = common::search_pack_options();
    let (list, total) = corpus(&opts);
    let packed = pack(
        &list,
        &settings(&opts, 4000, total),
        &mut PreviewCache::new(64),
    );
    assert!(
        packed
            .text
            .starts_with("all results: score_type hybrid\n\n"),
        "{}",
        &packed.text[..200]
    );
    assert_eq!(packed.text.matches("score_type").count(), 1);
    assert!(
        packed.text.contains("· source_category "),
        "fields that vary stay per chunk"
    );
}

fn code_chunk(id: &str, score: f64, start: usize, lines: std::ops::RangeInclusive<usize>) -> Chunk {
    let text: Vec<String> = lines
        .map(|n| format!("    total_{n} = compute_{n}(values)"))
        .collect();
    Chunk {
        index: 0,
        id: id.into(),
        also: Vec::new(),
        score,
        scored: true,
        text: text.join("\n"),
        path: "src/ledger.py".into(),
        line_start: start,
        lines_known: true,
        header: None,
        lang: pare::pack::outline::Lang::Python,
        fields: Vec::new(),
        from_source: false,
    }
}

#[test]
fn same_file_chunks_with_overlapping_lines_merge() {
    let opts = PackOptions::default();
    let list = vec![
        code_chunk("b", 0.6, 20, 20..=45),
        code_chunk("a", 0.9, 1, 1..=30),
        code_chunk("c", 0.8, 100, 100..=110),
    ];
    let packed = pack(
        &list,
        &settings(&opts, 4000, None),
        &mut PreviewCache::new(64),
    );
    let text = &packed.text;
    assert!(
        text.contains("[1] src/ledger.py · score 0.9 · ids a+b · L1–45\n"),
        "{text}"
    );
    for n in 1..=45 {
        assert_eq!(
            text.matches(&format!("total_{n} = compute_{n}(values)\n"))
                .count(),
            1,
            "line {n} once"
        );
    }
    assert!(text.contains("[2] src/ledger.py · score 0.8 · id c · L100–110"));
    let b = packed.metrics.items.iter().find(|m| m.id == "b").unwrap();
    assert_eq!((b.tier, b.rank), ("merged", 1));
    assert_eq!(packed.metrics.total_chunks, 3);
}

#[test]
fn overlapping_chunks_that_disagree_stay_apart() {
    let opts = PackOptions::default();
    let mut other_version = code_chunk("b", 0.6, 20, 20..=45);
    other_version.text = other_version.text.replace("total_25", "sum_25");
    let list = vec![code_chunk("a", 0.9, 1, 1..=30), other_version];
    let packed = pack(
        &list,
        &settings(&opts, 4000, None),
        &mut PreviewCache::new(64),
    );
    assert!(packed.text.contains("· id a ·"), "{}", packed.text);
    assert!(
        packed
            .text
            .contains("[2] src/ledger.py · score 0.6 · id b · near-duplicate of [1]"),
        "{}",
        packed.text
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// With the envelope on, every page of every budget is within it.
    #[test]
    fn pages_never_over_budget(budgets in prop::collection::vec(0usize..3000, 10), page in 1u16..4) {
        let mut opts = common::search_pack_options();
        opts.envelope = true;
        let (list, total) = corpus(&opts);
        let mut cache = PreviewCache::new(256);
        for budget in budgets {
            let s = settings(&opts, budget, total);
            let first = pack(&list, &s, &mut cache);
            prop_assert!(tok().count(&first.text) <= budget);
            let cursor = pare::respond::cursor::Cursor { check: 0, page }.encode();
            // A made-up cursor is refused; a real one pages.
            prop_assert!(pack_from_cursor(&list, &s, &mut cache, &cursor).is_err());
            if let Some(line) = first.text.lines().next()
                && let Ok(env) = serde_json::from_str::<serde_json::Value>(line)
                && let Some(c) = env["next_cursor"].as_str()
            {
                let next = pack_from_cursor(&list, &s, &mut cache, c).expect("our cursor");
                prop_assert!(tok().count(&next.text) <= budget);
                prop_assert_eq!(next.tokens, tok().count(&next.text));
            }
        }
    }
}

#[test]
fn breadth_shows_every_chunk_before_detail() {
    let mut opts = common::search_pack_options();
    let (list, total) = corpus(&opts);
    let budget = 1500;
    let best_first = pack(
        &list,
        &settings(&opts, budget, total),
        &mut PreviewCache::new(64),
    );
    opts.breadth = true;
    let breadth = pack(
        &list,
        &settings(&opts, budget, total),
        &mut PreviewCache::new(64),
    );
    let left_out = |p: &Packed| {
        p.metrics
            .items
            .iter()
            .filter(|m| m.tier == "left-out")
            .count()
    };
    assert!(
        left_out(&best_first) > 0,
        "best first leaves chunks out at {budget}"
    );
    assert_eq!(left_out(&breadth), 0, "{}", breadth.text);
    assert!(tok().count(&breadth.text) <= budget);
    assert!(
        ["full", "preview"].contains(&breadth.metrics.items[0].tier),
        "the best chunk still gets detail first: {:?}",
        breadth.metrics.items[0]
    );
}
