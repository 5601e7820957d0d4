//! Lossy shaping never says anything false: properties over random documents, each output
//! checked against its input by an independent reading (serde_json, not pare's value type).
//!
//! * `merge`: every block covers consecutive input items (found by their start times) that
//!   share the key and the `split_on` fields, with gaps within the limit; its end is the
//!   latest end and its duration the span; `collect` fields hold exactly the distinct values
//!   (or the one value every item had); `sum` fields the sum; `first` and `coalesce` the
//!   first (non-null) value, and every value they left out is counted as `collapsed`.
//! * the shipped `narrative.toml`: a block's `isIdle`, project, category, website and title
//!   are true of every segment it covers, and `summary.segmentCount` counts the blocks.
//! * the shipped `website_usage.toml` at any `minMinutes`: the echoed `minMinutes` is the one
//!   applied, `websites_filtered` counts the visits removed, and every kept visit is an input
//!   visit at or over the threshold, in order.
//! * `filter`, `limit`, `prune`, `drop`, `keep` over generic trees: the output is the input
//!   less members and items (nothing rewritten), and a written count equals what was cut.
//! * `round`, `tier`, `truncate`: a rounded number is within half a unit of the last decimal
//!   kept, a label is the band its number falls in, a cut string is the input's own head and
//!   tail around a marker that counts what is missing.
//!
//! ```text
//! cargo test -p pare-engine --test integration truth::
//! PROPTEST_CASES=2000 cargo test -p pare-engine --test integration truth:: --release   # longer soak
//! ```

use crate::common;

use pare::json;
use pare::manifest::Kind;
use pare::policy::Policy;
use pare::shape::{ShapeOptions, shape};
use proptest::prelude::*;
use serde_json::{Value as J, json};

/// Shape `input` with `policy` (default level, `params` overridden): the output and the
/// manifest with paths.
fn run(policy: &Policy, params: &[(String, String)], input: &J) -> (J, pare::manifest::Manifest) {
    let mut opts = ShapeOptions::new(policy);
    opts.params = policy.params(params).expect("params are valid");
    opts.level = policy.level_index(policy.default_level()).unwrap();
    opts.track_paths = true;
    let value = json::parse(&input.to_string()).expect("input is JSON");
    let out = shape(value, policy, &opts);
    let text = json::to_compact(&out.value);
    (
        serde_json::from_str(&text).expect("output is JSON"),
        out.manifest,
    )
}

fn collapsed(manifest: &pare::manifest::Manifest, path: &str) -> u64 {
    let hits = manifest.entries.iter();
    let hits = hits.filter(|e| e.kind == Kind::Collapsed && e.path == path);
    hits.map(|e| e.count).sum()
}

fn stamp(minutes: u32) -> String {
    format!("2026-02-17T{:02}:{:02}:00Z", 8 + minutes / 60, minutes % 60)
}

fn minutes_of(stamp: &str) -> f64 {
    let h: f64 = stamp[11..13].parse().unwrap();
    let m: f64 = stamp[14..16].parse().unwrap();
    h * 60.0 + m
}

fn non_null(v: Option<&J>) -> Option<&J> {
    v.filter(|v| !v.is_null())
}

/// What a `collect` field must say for the items `covered`: the value every item has, the
/// first item's (absent or null) when no item has one, else the distinct values (their
/// distinct elements when all are lists).
fn expected_collect(covered: &[&J], field: &str) -> Option<J> {
    let values: Vec<Option<&J>> = covered.iter().map(|i| i.get(field)).collect();
    let first = non_null(values[0]);
    if first.is_some() && values.iter().all(|v| non_null(*v) == first) {
        return first.cloned();
    }
    let present: Vec<&J> = values.iter().filter_map(|v| non_null(*v)).collect();
    if present.is_empty() {
        return values[0].cloned();
    }
    let elements: Vec<&J> = if present.iter().all(|v| v.is_array()) {
        present.iter().flat_map(|v| v.as_array().unwrap()).collect()
    } else {
        present
    };
    let mut distinct: Vec<J> = Vec::new();
    for e in elements {
        if !distinct.contains(e) {
            distinct.push(e.clone());
        }
    }
    Some(J::Array(distinct))
}

/// The input items each output block covers: blocks start at an input item's start and run
/// up to the next block's start (starts strictly increase in these inputs).
fn coverage<'a>(input: &'a [J], output: &[J], start: &str) -> Vec<Vec<&'a J>> {
    let starts: Vec<&str> = output.iter().map(|o| o[start].as_str().unwrap()).collect();
    let mut out = Vec::new();
    let mut i = 0;
    for (b, s) in starts.iter().enumerate() {
        assert_eq!(
            input[i][start].as_str(),
            Some(*s),
            "block {b} starts at an item"
        );
        let next = starts.get(b + 1).copied();
        let mut covered = Vec::new();
        while i < input.len()
            && (covered.is_empty() || Some(input[i][start].as_str().unwrap()) != next)
        {
            covered.push(&input[i]);
            i += 1;
        }
        out.push(covered);
    }
    assert_eq!(i, input.len(), "the blocks cover every item");
    out
}

// ---------------------------------------------------------------- merge

const MERGE_POLICY: &str = r#"
[[ops]]
op = "merge"
at = ["$.s"]
key = ["app"]
start = "start"
end = "end"
max_gap_minutes = 2.0
duration = "dur"
split_on = ["idle"]
collect = ["project", "tags"]
sum = ["n"]
first = ["title"]
coalesce = ["shot"]
"#;

fn pick<const N: usize>(options: [Option<J>; N]) -> impl Strategy<Value = Option<J>> {
    prop::sample::select(options.to_vec())
}

fn segment_list() -> impl Strategy<Value = J> {
    let item = (
        prop::sample::select(vec!["A", "B"]),
        prop::sample::select(vec![0u32, 0, 1, 2, 3, 5]),
        1u32..10,
        (
            pick([
                None,
                Some(J::Bool(false)),
                Some(J::Bool(true)),
                Some(J::Null),
            ]),
            pick([None, Some(J::Null), Some(json!("x")), Some(json!("y"))]),
            pick([
                None,
                Some(json!([])),
                Some(json!(["a"])),
                Some(json!(["a", "b"])),
                Some(json!("c")),
            ]),
            pick([
                None,
                Some(json!(1)),
                Some(json!(2.5)),
                Some(J::Null),
                Some(json!("many")),
            ]),
        ),
        (
            pick([None, Some(json!("t1")), Some(json!("t2"))]),
            pick([None, Some(J::Null), Some(json!("s1")), Some(json!("s2"))]),
            pick([
                None,
                Some(json!("w1")),
                Some(json!("w2")),
                Some(json!({"k": 1})),
            ]),
        ),
    );
    prop::collection::vec(item, 1..12).prop_map(|items| {
        let mut t = 0;
        let mut out = Vec::new();
        for (app, gap, len, (idle, project, tags, n), (title, shot, window)) in items {
            let start = t + gap;
            t = start + len;
            let mut o = serde_json::Map::new();
            o.insert("app".into(), json!(app));
            o.insert("start".into(), json!(stamp(start)));
            o.insert("end".into(), json!(stamp(t)));
            o.insert("dur".into(), json!(f64::from(len)));
            for (k, v) in [
                ("idle", idle),
                ("project", project),
                ("tags", tags),
                ("n", n),
            ]
            .into_iter()
            .chain([("title", title), ("shot", shot), ("window", window)])
            {
                if let Some(v) = v {
                    o.insert(k.into(), v);
                }
            }
            out.push(J::Object(o));
        }
        json!({ "s": out })
    })
}

fn check_merge(input: &J, output: &J, manifest: &pare::manifest::Manifest) -> Result<(), String> {
    let items = input["s"].as_array().unwrap();
    let blocks = output["s"].as_array().unwrap();
    let mut title_lost = 0u64;
    let mut shot_lost = 0u64;
    for (block, covered) in blocks.iter().zip(coverage(items, blocks, "start")) {
        if covered.len() == 1 {
            prop_assert_eq_str(block, covered[0], "an unmerged item is unchanged")?;
            continue;
        }
        let first = covered[0];
        let mut end = minutes_of(first["end"].as_str().unwrap());
        for item in &covered[1..] {
            if item["app"] != first["app"]
                || non_null(item.get("idle")) != non_null(first.get("idle"))
            {
                return Err(format!(
                    "block {block} covers items whose app or idle differ"
                ));
            }
            if minutes_of(item["start"].as_str().unwrap()) - end > 2.0 {
                return Err(format!("block {block} spans a gap over the limit"));
            }
            end = end.max(minutes_of(item["end"].as_str().unwrap()));
        }
        let span = end - minutes_of(first["start"].as_str().unwrap());
        if minutes_of(block["end"].as_str().unwrap()) != end {
            return Err(format!("block {block} does not end at the latest end"));
        }
        if (block["dur"].as_f64().unwrap() - span).abs() > 1e-9 {
            return Err(format!("block {block}: duration is not the span {span}"));
        }
        for field in ["project", "tags", "window"] {
            if block.get(field).cloned() != expected_collect(&covered, field) {
                return Err(format!(
                    "block {block}: `{field}` is not what its items had"
                ));
            }
        }
        let numbers: Vec<f64> = covered
            .iter()
            .filter_map(|i| i.get("n")?.as_f64())
            .collect();
        match block.get("n").and_then(J::as_f64) {
            Some(n) if (n - numbers.iter().sum::<f64>()).abs() < 1e-9 => {}
            None if numbers.is_empty() => {}
            other => {
                return Err(format!(
                    "block {block}: n {other:?} is not the sum of {numbers:?}"
                ));
            }
        }
        if block.get("title") != first.get("title") {
            return Err(format!("block {block}: title is not the first item's"));
        }
        title_lost += covered[1..]
            .iter()
            .filter(|i| i.get("title") != first.get("title"))
            .count() as u64;
        let shot = covered.iter().find_map(|i| non_null(i.get("shot")));
        if non_null(block.get("shot")) != shot {
            return Err(format!("block {block}: shot is not the first non-null"));
        }
        let others = covered.iter().filter_map(|i| non_null(i.get("shot")));
        shot_lost += others.filter(|s| Some(*s) != shot).count() as u64;
    }
    let merged: u64 = manifest.totals().get(&Kind::Merged).copied().unwrap_or(0);
    if merged != (items.len() - blocks.len()) as u64 {
        return Err(format!(
            "merged {merged} recorded, {} folded",
            items.len() - blocks.len()
        ));
    }
    if collapsed(manifest, "$.s[*].title") != title_lost
        || collapsed(manifest, "$.s[*].shot") != shot_lost
    {
        return Err(format!(
            "collapsed counts: title {title_lost}, shot {shot_lost}; manifest {:?}",
            manifest.entries
        ));
    }
    Ok(())
}

fn prop_assert_eq_str(a: &J, b: &J, what: &str) -> Result<(), String> {
    if a == b {
        Ok(())
    } else {
        Err(format!("{what}: {a} != {b}"))
    }
}

// ---------------------------------------------------------------- the shipped narrative

fn shipped(name: &str) -> Policy {
    common::example_policies()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("{name} is shipped"))
        .1
}

fn narrative() -> impl Strategy<Value = J> {
    let seg = (
        prop::sample::select(vec!["Google Chrome", "Slack"]),
        prop::sample::select(vec![0u32, 1, 2, 4]),
        1u32..15,
        any::<bool>(),
        pick([None, Some(json!("billing")), Some(json!("ledger"))]),
        pick([None, Some(json!("coding")), Some(json!("planning"))]),
        pick([
            None,
            Some(json!("github.com")),
            Some(json!("jira.com")),
            Some(json!("youtube.com")),
        ]),
        pick([None, Some(json!("Inbox")), Some(json!("PR #7"))]),
    );
    prop::collection::vec(seg, 1..14).prop_map(|segs| {
        let mut t = 0;
        let mut out = Vec::new();
        for (i, (app, gap, len, idle, project, category, website, title)) in segs.into_iter().enumerate() {
            let start = t + gap;
            t = start + len;
            out.push(json!({
                "startTime": stamp(start), "endTime": stamp(t), "durationMinutes": f64::from(len),
                "application": app, "applicationColor": "#4285F4",
                "windowTitle": title, "website": website, "category": category,
                "isIdle": idle, "projectName": project,
                "refs": {"timelineRef": format!("timeline:{i}"), "activityRef": format!("activity:{i}"), "screenshotRef": null},
                "tags": []
            }));
        }
        let n = out.len();
        json!({"date": "2026-02-17", "totalActiveMinutes": 1.0, "segments": out,
               "summary": {"totalActiveMinutes": 1.0, "segmentCount": n}})
    })
}

fn check_narrative(input: &J, output: &J) -> Result<(), String> {
    let segs = input["segments"].as_array().unwrap();
    let blocks = output["segments"].as_array().unwrap();
    let common = output.get("segments_common").cloned().unwrap_or(json!({}));
    if output["summary"]["segmentCount"] != json!(blocks.len()) {
        return Err(format!(
            "segmentCount {} for {} blocks",
            output["summary"]["segmentCount"],
            blocks.len()
        ));
    }
    for (block, covered) in blocks.iter().zip(coverage(segs, blocks, "startTime")) {
        let field = |k: &str| block.get(k).or_else(|| common.get(k)).cloned();
        for item in &covered {
            if field("isIdle").as_ref() != item.get("isIdle")
                || field("application").as_ref() != item.get("application")
            {
                return Err(format!(
                    "block {block} covers a segment whose app or isIdle differ: {item}"
                ));
            }
        }
        for k in ["projectName", "category", "website", "windowTitle"] {
            let want = expected_collect(&covered, k).filter(|v| !v.is_null());
            if field(k) != want {
                return Err(format!(
                    "block {block}: `{k}` {:?} is not what its segments had ({want:?})",
                    field(k)
                ));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- the shipped website usage

fn websites() -> impl Strategy<Value = (J, String)> {
    let minutes = prop::sample::select(vec![
        json!(0),
        json!(0.1),
        json!(0.49),
        json!(0.5),
        json!(0.51),
        json!(3),
        J::Null,
    ]);
    let visits = prop::collection::vec((minutes, 0usize..3), 0..12);
    let threshold = prop::sample::select(vec!["0", "0.5", "1", "2.5"]);
    (visits, threshold).prop_map(|(visits, threshold)| {
        let list: Vec<J> = visits
            .into_iter()
            .enumerate()
            .map(|(i, (m, v))| json!({"domain": format!("d{i}.com"), "minutes": m, "visits": v}))
            .collect();
        (
            json!({"date": "2026-02-17", "minMinutes": 0, "websites": list}),
            threshold.to_owned(),
        )
    })
}

fn check_websites(input: &J, threshold: &str, output: &J) -> Result<(), String> {
    let applied: f64 = threshold.parse().unwrap();
    if output["minMinutes"].as_f64() != Some(applied) {
        return Err(format!(
            "minMinutes {} but {applied} ran",
            output["minMinutes"]
        ));
    }
    let all = input["websites"].as_array().unwrap();
    let kept = output["websites"].as_array().map_or(&[][..], Vec::as_slice);
    let removed = all.len() - kept.len();
    let said = output
        .get("websites_filtered")
        .and_then(J::as_u64)
        .unwrap_or(0);
    if said != removed as u64 {
        return Err(format!(
            "websites_filtered says {said}, {removed} were removed"
        ));
    }
    let mut rest = all.iter();
    for k in kept {
        if k["minutes"].as_f64().is_some_and(|m| m < applied) {
            return Err(format!("{k} is under the threshold"));
        }
        // Kept visits are input visits in order (less their nulls).
        if !rest.any(|i| i["domain"] == k["domain"]) {
            return Err(format!("{k} is not an input visit in order"));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- removal-only ops

/// Whether `out` is `input` less object members and array items (order kept), nothing
/// rewritten; `counts` names sibling members an op may add (`<key>_more`), which must hold
/// the number of items its array lost.
fn subsumed(out: &J, input: &J, counts: &[&str]) -> Result<(), String> {
    match (out, input) {
        (J::Object(o), J::Object(i)) => {
            let mut keys = i.keys();
            for (k, v) in o {
                if let Some(suffix) = counts.iter().find(|s| k.ends_with(*s)) {
                    let list = &k[..k.len() - suffix.len()];
                    if !i.contains_key(k) && i.contains_key(list) {
                        let lost = i[list].as_array().map(Vec::len).unwrap_or(0)
                            - o.get(list).and_then(J::as_array).map(Vec::len).unwrap_or(0);
                        if v.as_u64() != Some(lost as u64) {
                            return Err(format!("`{k}` says {v}, {lost} were cut"));
                        }
                        continue;
                    }
                }
                if !keys.any(|x| x == k) {
                    return Err(format!("member `{k}` is not in the input, in order"));
                }
                subsumed(v, &i[k], counts)?;
            }
            Ok(())
        }
        (J::Array(o), J::Array(i)) => {
            let mut rest = i.iter();
            for v in o {
                if !rest.any(|x| subsumed(v, x, counts).is_ok()) {
                    return Err(format!("item {v} is not an input item, in order"));
                }
            }
            Ok(())
        }
        (o, i) if o == i => Ok(()),
        (o, i) => Err(format!("{i} became {o}")),
    }
}

fn generic() -> impl Strategy<Value = J> {
    let leaf = prop_oneof![
        Just(J::Null),
        Just(json!("")),
        Just(json!([])),
        Just(json!({})),
        (0i64..100).prop_map(|n| json!(n)),
        prop::sample::select(vec!["x", "y", "z"]).prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        let key = prop::sample::select(vec!["id", "meta", "rels", "score", "created_at", "name"]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(J::Array),
            prop::collection::btree_map(key, inner, 0..5)
                .prop_map(|m| J::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())),
        ]
    })
}

const REMOVAL_POLICIES: &[&str] = &[
    "[[ops]]\nop = \"prune\"\n",
    "[[ops]]\nop = \"drop\"\npaths = [\"$..created_at\", \"$..meta.id\"]\n",
    "[[ops]]\nop = \"keep\"\nat = [\"$.doc\", \"$..rels[*]\"]\nfields = [\"id\", \"name\", \"rels\"]\n",
    "[[ops]]\nop = \"filter\"\nat = [\"$..rels\"]\nremove_where = \"score > 50\"\nremoved_key = \"{key}_filtered\"\n",
    "[[ops]]\nop = \"limit\"\nat = [\"$..rels\"]\nmax = 2\n",
    "[[ops]]\nop = \"limit\"\nat = [\"$..rels\"]\nmax = 1\nkeep = \"largest\"\nby = \"score\"\n",
];

proptest! {
    #![proptest_config(common::proptest_config(256))]

    #[test]
    fn merge_blocks_say_only_what_their_items_said(input in segment_list()) {
        let policy = Policy::parse(MERGE_POLICY).unwrap();
        let (output, manifest) = run(&policy, &[], &input);
        if let Err(why) = check_merge(&input, &output, &manifest) {
            prop_assert!(false, "{why}\n in: {input}\nout: {output}");
        }
    }

    #[test]
    fn shipped_narrative_blocks_are_true_of_every_segment(input in narrative(), gap in 0u32..4) {
        let (output, _) = run(&shipped("narrative.toml"), &[("maxGapMinutes".into(), gap.to_string())], &input);
        if let Err(why) = check_narrative(&input, &output) {
            prop_assert!(false, "{why}\n in: {input}\nout: {output}");
        }
    }

    #[test]
    fn shipped_website_usage_says_what_ran((input, threshold) in websites()) {
        let params = [("minMinutes".to_owned(), threshold.clone())];
        let (output, _) = run(&shipped("website_usage.toml"), &params, &input);
        if let Err(why) = check_websites(&input, &threshold, &output) {
            prop_assert!(false, "{why}\n in: {input}\nout: {output}");
        }
    }

    #[test]
    fn removing_ops_only_remove_and_count_what_they_cut(input in generic(), which in 0..REMOVAL_POLICIES.len()) {
        let wrapped = json!({ "rels": input.clone(), "doc": input });
        let policy = Policy::parse(REMOVAL_POLICIES[which]).unwrap();
        let (output, _) = run(&policy, &[], &wrapped);
        if let Err(why) = subsumed(&output, &wrapped, &["_more", "_filtered"]) {
            prop_assert!(false, "{why}\npolicy: {}\n in: {wrapped}\nout: {output}", REMOVAL_POLICIES[which]);
        }
    }
}

/// The generators reach what the checks are about: merged blocks with differing collected
/// values, a split on idle, and a count written beside a filtered list.
#[test]
fn generators_reach_the_cases() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let policy = Policy::parse(MERGE_POLICY).unwrap();
    let (mut lists, mut collapsed_seen) = (0, 0);
    for _ in 0..200 {
        let input = segment_list().new_tree(&mut runner).unwrap().current();
        let (output, manifest) = run(&policy, &[], &input);
        let blocks = output["s"].as_array().unwrap();
        lists += blocks
            .iter()
            .filter(|b| b.get("project").is_some_and(J::is_array))
            .count();
        collapsed_seen += manifest
            .entries
            .iter()
            .filter(|e| e.kind == Kind::Collapsed)
            .count();
    }
    assert!(
        lists > 10 && collapsed_seen > 10,
        "lists {lists}, collapsed {collapsed_seen}"
    );
}

// ---------------------------------------------------------------- ops that rewrite values

const VALUE_POLICY: &str = r#"
[[ops]]
op = "round"
at = ["$.results[*].score"]
decimals = 2

[[ops]]
op = "tier"
at = ["$.results[*].rank"]
tiers = [{ min = 0.8, label = "high" }, { min = 0.5, label = "medium" }]
below = "low"

[[ops]]
op = "truncate"
at = ["$.results[*].text"]
max_tokens = 16
"#;

fn results() -> impl Strategy<Value = J> {
    let score = prop_oneof![
        (-1_000_000i64..1_000_000).prop_map(|n| json!(n as f64 / 10_000.0)),
        (0i64..100).prop_map(|n| json!(n)),
        Just(json!(0.005)),
        Just(json!(-0.125)),
    ];
    let rank = (0i64..=100).prop_map(|n| json!(n as f64 / 100.0));
    let words = prop::collection::vec(
        prop::sample::select(vec![
            "Redis",
            "cache",
            "héllo",
            "日本語",
            "a",
            "session",
            "…",
            "🎉",
            " ",
        ]),
        0..60,
    );
    let item = (score, rank, words)
        .prop_map(|(s, r, w)| json!({"score": s, "rank": r, "text": w.join(" ")}));
    prop::collection::vec(item, 0..6).prop_map(|r| json!({ "results": r }))
}

/// A number's decimals as written.
fn decimals(n: &J) -> usize {
    let t = n.to_string();
    t.split_once('.').map_or(0, |(_, f)| {
        f.trim_end_matches(|c: char| !c.is_ascii_digit()).len()
    })
}

fn check_values(input: &J, output: &J) -> Result<(), String> {
    let ins = input["results"].as_array().unwrap();
    let outs = output["results"].as_array().unwrap();
    for (i, o) in ins.iter().zip(outs) {
        let (a, b) = (i["score"].as_f64().unwrap(), o["score"].as_f64().unwrap());
        if (a - b).abs() > 0.005 + 1e-9 || decimals(&o["score"]) > 2 {
            return Err(format!("score {} rounded to {}", i["score"], o["score"]));
        }
        let rank = i["rank"].as_f64().unwrap();
        let band = if rank >= 0.8 {
            "high"
        } else if rank >= 0.5 {
            "medium"
        } else {
            "low"
        };
        if o["rank"] != json!(band) {
            return Err(format!("rank {rank} labelled {}", o["rank"]));
        }
        let (text, cut) = (i["text"].as_str().unwrap(), o["text"].as_str().unwrap());
        if text != cut {
            let (head, rest) = cut
                .split_once("…[")
                .ok_or(format!("no marker in {cut:?}"))?;
            let (n, tail) = rest
                .split_once(" tokens cut]…")
                .ok_or(format!("no count in {cut:?}"))?;
            let n: usize = n.parse().map_err(|_| format!("count {n:?}"))?;
            let starts = text.starts_with(head) || text.starts_with(head.trim_end_matches(' '));
            let ends = text.ends_with(tail) || text.ends_with(tail.trim_start_matches(' '));
            if n == 0 || !starts || !ends || head.len() + tail.len() >= text.len() + 2 {
                return Err(format!("{text:?} cut to {cut:?}: not its head and tail"));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(common::proptest_config(256))]

    #[test]
    fn rewritten_values_stay_true_to_the_input(input in results()) {
        let (output, _) = run(&Policy::parse(VALUE_POLICY).unwrap(), &[], &input);
        if let Err(why) = check_values(&input, &output) {
            prop_assert!(false, "{why}\n in: {input}\nout: {output}");
        }
    }
}
