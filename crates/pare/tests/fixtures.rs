//! Data-driven fixtures: `give(input, policy, level, expected)` for every op and scenario.
//!
//! A case is a directory `fixtures/<group>/<case>/` holding
//!
//! - `input.json`
//! - `policy.toml`, or `policy`: a path relative to the workspace root, so the scenario
//!   cases run the real `examples/policies/*.toml`
//! - `level` (optional): a level name; default: the policy's default level
//! - `params` (optional): lines `name=value`
//! - `omitted` (optional): its presence switches the `_omitted` note on
//! - `expected.json`: minified on one line. The output must equal it as a value, and its
//!   compact rendering must equal the file byte for byte, so key order is checked too.
//!
//! Groups are op names (plus `scenarios`); every op must have one. A case named
//! `regression_<what>` pins a known bug: it fails until the op is fixed. `tokens/` belongs to
//! `tokens_vs_reference.rs`, not here. The other tests check
//! what a fixture cannot say exactly: the `truncate` budget (its cut depends on the
//! tokenizer), note membership, and the acceptance promises over the benchmark corpus.

use crate::common::corpus;

use std::fs;
use std::path::{Path, PathBuf};

use pare::json::{parse, to_compact};
use pare::manifest::Kind;
use pare::policy::Policy;
use pare::shape::{ShapeOptions, Shaped, shape};
use pare::tokens::{self, Tokenizer};
use pare::value::{Map, Value};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Fixture groups that are not shaping cases.
const NOT_CASES: &[&str] = &["tokens"];

fn o200k() -> &'static dyn Tokenizer {
    tokens::builtin("o200k_base").expect("o200k_base is built in")
}

/// One shaping request, as the CLI would make it.
struct Request<'a> {
    policy: &'a Policy,
    level: Option<&'a str>,
    params: Vec<(String, String)>,
    notes: Option<bool>,
}

impl<'a> Request<'a> {
    fn new(policy: &'a Policy) -> Request<'a> {
        Request {
            policy,
            level: None,
            params: Vec::new(),
            notes: None,
        }
    }

    fn run(&self, input: Value) -> Result<Shaped, String> {
        let policy = self.policy;
        let level = match self.level {
            Some(name) => policy.level_index(name).map_err(|e| e.to_string())?,
            None => policy
                .level_index(policy.default_level())
                .map_err(|e| e.to_string())?,
        };
        let opts = ShapeOptions {
            level,
            params: policy.params(&self.params).map_err(|e| e.to_string())?,
            tokenizer: o200k(),
            track_paths: true,
            op_limit: None,
            notes: self.notes,
            count_matches: false,
            query: None,
        };
        Ok(shape(input, policy, &opts))
    }
}

fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

fn read_json(path: &Path) -> Result<Value, String> {
    parse(&read(path)?).map_err(|e| format!("{}: {e}", path.display()))
}

fn load_policy(path: &Path) -> Result<Policy, String> {
    Policy::parse(&read(path)?).map_err(|e| format!("{}: {e}", path.display()))
}

/// The case's policy: `policy.toml` in the case, or the file `policy` points to.
fn case_policy(dir: &Path) -> Result<Policy, String> {
    let inline = dir.join("policy.toml");
    if inline.exists() {
        return load_policy(&inline);
    }
    let reference = read(&dir.join("policy"))
        .map_err(|e| format!("{e} (a case needs policy.toml or policy)"))?;
    load_policy(&workspace_root().join(reference.trim()))
}

fn case_params(dir: &Path) -> Result<Vec<(String, String)>, String> {
    let path = dir.join("params");
    if !path.exists() {
        return Ok(Vec::new());
    }
    read(&path)?
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_once('=') {
            Some((k, v)) => Ok((k.trim().to_owned(), v.trim().to_owned())),
            None => Err(format!("{}: `{l}` is not name=value", path.display())),
        })
        .collect()
}

/// Run one case directory; `Err` says what went wrong.
fn check_case(dir: &Path) -> Result<(), String> {
    let policy = case_policy(dir)?;
    let level = match dir.join("level") {
        p if p.exists() => Some(read(&p)?.trim().to_owned()),
        _ => None,
    };
    let request = Request {
        policy: &policy,
        level: level.as_deref(),
        params: case_params(dir)?,
        notes: dir.join("omitted").exists().then_some(true),
    };
    let input = read_json(&dir.join("input.json"))?;
    let expected_text = read(&dir.join("expected.json"))?;
    let expected = parse(&expected_text).map_err(|e| format!("expected.json: {e}"))?;
    let actual = request.run(input)?.value;
    if actual != expected {
        let at = first_difference(&expected, &actual, "$".into()).unwrap_or_default();
        return Err(format!(
            "first difference {at}\n    expected: {}\n    actual:   {}",
            clip(&to_compact(&expected)),
            clip(&to_compact(&actual)),
        ));
    }
    // Equal values with different text means the fixture file is not minified.
    if to_compact(&actual) != expected_text.trim() {
        return Err("expected.json is not minified on one line".into());
    }
    Ok(())
}

/// Where two values first differ, as `at <path>: <what>`.
fn first_difference(expected: &Value, actual: &Value, path: String) -> Option<String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            let (ek, ak): (Vec<_>, Vec<_>) = (e.keys().collect(), a.keys().collect());
            if ek != ak {
                return Some(format!("at {path}: keys {ek:?}, got {ak:?}"));
            }
            e.iter()
                .zip(a.values())
                .find_map(|((k, ev), av)| first_difference(ev, av, format!("{path}.{k}")))
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => e
            .iter()
            .zip(a)
            .enumerate()
            .find_map(|(i, (ev, av))| first_difference(ev, av, format!("{path}[{i}]"))),
        (e, a) if e == a => None,
        (e, a) => Some(format!(
            "at {path}: expected {}, got {}",
            clip(&to_compact(e)),
            clip(&to_compact(a))
        )),
    }
}

fn clip(s: &str) -> String {
    const MAX: usize = 1500;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}… ({} bytes)", &s[..i], s.len()),
        None => s.to_owned(),
    }
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Every case directory, grouped: `(group name, case dirs)`.
fn groups() -> Vec<(String, Vec<PathBuf>)> {
    sorted_dirs(&fixtures_dir())
        .into_iter()
        .filter_map(|g| {
            let name = g.file_name()?.to_str()?.to_owned();
            (!NOT_CASES.contains(&name.as_str())).then(|| (name, sorted_dirs(&g)))
        })
        .collect()
}

#[test]
fn fixtures() {
    let mut failures = Vec::new();
    let mut count = 0;
    for (_, cases) in groups() {
        for dir in cases {
            count += 1;
            if let Err(message) = check_case(&dir) {
                let name = dir.strip_prefix(fixtures_dir()).unwrap_or(&dir);
                failures.push(format!("{}: {message}", name.display()));
            }
        }
    }
    assert!(
        count > 0,
        "no fixture cases under {}",
        fixtures_dir().display()
    );
    assert!(
        failures.is_empty(),
        "{} of {count} fixture cases failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_op_has_fixtures() {
    let groups = groups();
    let missing: Vec<&str> = pare::ops::NAMES
        .iter()
        .copied()
        .filter(|op| {
            !groups
                .iter()
                .any(|(g, cases)| g.as_str() == *op && !cases.is_empty())
        })
        .collect();
    assert!(
        missing.is_empty(),
        "ops without fixtures under tests/fixtures/<op>/: {missing:?}"
    );
}

// ---------------------------------------------------------------------------------------
// What a fixture cannot say exactly.

/// Names listed under `kind` in an `_omitted` note (a list of names, or `{name: count}`).
fn note_names(note: &Map, kind: &str) -> Vec<String> {
    match note.get(kind) {
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(|n| n.as_str().map(str::to_owned))
            .collect(),
        Some(Value::Object(counts)) => counts.keys().map(|k| k.to_string()).collect(),
        _ => Vec::new(),
    }
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn strings(names: &[&str]) -> Vec<String> {
    sorted(names.iter().map(|s| (*s).to_owned()).collect())
}

/// S1 with the note on: empty and stripped names are told apart; the order within a kind
/// is incidental (walk order), so membership is what is checked.
#[test]
fn s1_omitted_note_names_empty_and_stripped() {
    let dir = fixtures_dir().join("scenarios/s1_standard");
    let policy = case_policy(&dir).unwrap();
    let input = read_json(&dir.join("input.json")).unwrap();
    let standard = read_json(&dir.join("expected.json")).unwrap();
    let mut request = Request::new(&policy);
    request.notes = Some(true);
    let Value::Object(mut out) = request.run(input).unwrap().value else {
        panic!("S1 output is an object");
    };
    let Some(Value::Object(note)) = out.remove("_omitted") else {
        panic!("no _omitted note in {}", to_compact(&Value::Object(out)));
    };
    assert_eq!(
        Value::Object(out),
        standard,
        "the note is the only addition"
    );
    assert_eq!(
        sorted(note_names(&note, "empty")),
        strings(&["owner", "vendor", "tags", "valid_until"])
    );
    assert_eq!(
        sorted(note_names(&note, "stripped")),
        strings(&[
            "created_at",
            "updated_at",
            "valid_from",
            "version",
            "metadata"
        ])
    );
    let kinds: Vec<&str> = note.keys().map(|k| k.as_str()).collect();
    assert_eq!(kinds, ["empty", "stripped"], "nothing else was removed");
    // Names, never values.
    let text = to_compact(&Value::Object(note));
    for value in ["2026-02-21T14:30:00Z", "auto-kg", "0.82"] {
        assert!(!text.contains(value), "the note leaks `{value}`: {text}");
    }
}

/// S3: "the number dropped is reported".
#[test]
fn s3_website_usage_reports_how_many_were_dropped() {
    let dir = fixtures_dir().join("scenarios/s3_website_usage_default");
    let policy = case_policy(&dir).unwrap();
    let shaped = Request::new(&policy)
        .run(read_json(&dir.join("input.json")).unwrap())
        .unwrap();
    assert_eq!(shaped.manifest.totals().get(&Kind::Filtered), Some(&3));
}

/// `truncate`: the result, marker included, never exceeds `max_tokens`; it is a head of the
/// text, the marker with the true number of tokens cut, and a tail of the text.
#[test]
fn truncate_stays_within_budget() {
    let tok = o200k();
    let texts = [
        "word ".repeat(400),
        "Double-entry ledger. ".repeat(120) + "Stack trace: at Ledger.post (ledger.ts:42)",
        "日本語のテキストと emoji 🎉🎉 mixed, ".repeat(80),
        "x".repeat(5000),
        (0..600).map(|i| format!("{i},")).collect(),
    ];
    for max_tokens in [16, 17, 40, 200] {
        for head in [0.0, 0.7, 1.0] {
            let policy = Policy::parse(&format!(
                "[[ops]]\nop = \"truncate\"\nat = [\"$.t\"]\nmax_tokens = {max_tokens}\nhead = {head:?}"
            ))
            .unwrap();
            for text in &texts {
                let mut input = Map::new();
                input.insert("t", Value::from(text.as_str()));
                let out = Request::new(&policy)
                    .run(Value::Object(input))
                    .unwrap()
                    .value;
                let cut = out.as_object().unwrap().get("t").unwrap().as_str().unwrap();
                let start: String = text.chars().take(20).collect();
                let what = format!("max_tokens {max_tokens}, head {head}, text {start:?}…");
                assert!(
                    tok.count(cut) <= max_tokens,
                    "{what}: {} tokens: {cut:?}",
                    tok.count(cut)
                );
                let (before, rest) = cut
                    .split_once(" …[")
                    .unwrap_or_else(|| panic!("{what}: no marker in {cut:?}"));
                let (n, after) = rest.split_once(" tokens cut]… ").expect("marker end");
                assert!(
                    text.starts_with(before) && text.ends_with(after),
                    "{what}: {cut:?}"
                );
                let n: usize = n.parse().expect("a count");
                assert_eq!(
                    n,
                    tok.count(text) - tok.count(before) - tok.count(after),
                    "{what}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The acceptance promises over the benchmark corpus: no entity, field value, relation, tag,
// similar id, artifact or visit over the threshold lost; totals unchanged.

/// The checked-in corpus file `name` (`entities_systems`), parsed.
fn corpus(name: &str) -> Value {
    read_json(&corpus::corpus_file(&format!("{name}.json"))).unwrap()
}

fn shape_corpus(input: &Value, policy: &str) -> Value {
    let policy = load_policy(&workspace_root().join("examples/policies").join(policy)).unwrap();
    Request::new(&policy).run(input.clone()).unwrap().value
}

/// `v` as `prune` leaves it: empty object members removed, bottom-up; array items kept.
fn pruned(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), pruned(v)))
                .filter(|(_, v)| !v.is_empty_like())
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(pruned).collect()),
        other => other.clone(),
    }
}

fn obj(v: &Value) -> &Map {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {}", clip(&to_compact(v))))
}

fn arr<'v>(v: &'v Value, key: &str) -> &'v [Value] {
    obj(v)
        .get(key)
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no array `{key}`"))
}

/// The records of `out.<list>` as the input had them: `<list>_common` fields put back into
/// each, and a list partitioned by `by` (an object of kind → records) turned back into
/// records carrying their kind. Partitioned records are in kind order, not input order.
fn records(out: &Value, list: &str, by: &str) -> Vec<Map> {
    let common = obj(out).get(&format!("{list}_common")).map(obj);
    let with_common = |mut m: Map| {
        for (k, v) in common.into_iter().flat_map(Map::iter) {
            m.insert(k.clone(), v.clone());
        }
        m
    };
    match obj(out).get(list) {
        Some(Value::Array(items)) => items.iter().map(|i| with_common(obj(i).clone())).collect(),
        Some(Value::Object(kinds)) => kinds
            .iter()
            .flat_map(|(kind, items)| {
                let items = items.as_array().expect("a partition holds lists");
                items.iter().map(move |i| {
                    let mut m = obj(i).clone();
                    m.insert(by, Value::String(kind.clone()));
                    m
                })
            })
            .map(with_common)
            .collect(),
        _ => panic!("no list or partition `{list}`"),
    }
}

/// `item` as the entities policy promises to keep it: internal fields gone, empties pruned.
fn promised(item: &Value) -> Map {
    obj(item)
        .iter()
        .filter(|(k, _)| !INTERNAL.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), pruned(v)))
        .filter(|(_, v)| !v.is_empty_like())
        .collect()
}

/// A record's members in key order, so records compare regardless of where a field was said.
fn canon(m: &Map) -> Vec<(String, String)> {
    let mut v: Vec<_> = m
        .iter()
        .map(|(k, v)| (k.to_string(), to_compact(v)))
        .collect();
    v.sort();
    v
}

const INTERNAL: &[&str] = &[
    "created_at",
    "updated_at",
    "valid_from",
    "valid_until",
    "version",
    "metadata",
];

#[test]
fn corpus_entities_keep_every_value() {
    let input = corpus("entities_systems");
    let out = shape_corpus(&input, "entities.toml");
    // Entities keep their order: each is compared with the one at its index.
    let entities = records(&out, "entities", "entity_type");
    let want: Vec<Map> = arr(&input, "entities").iter().map(promised).collect();
    assert_eq!(entities.len(), want.len(), "entities are never removed");
    for (i, (got, want)) in entities.iter().zip(&want).enumerate() {
        assert_eq!(
            canon(got),
            canon(want),
            "entities[{i}]: every kept value, nothing else"
        );
        for k in ["id", "name"] {
            assert_eq!(got.get(k), obj(&arr(&input, "entities")[i]).get(k));
        }
    }
    // Relationships are keyed by type, so they are matched as a multiset: each input
    // relationship takes one equal output record, and none is left over.
    let mut left: Vec<_> = records(&out, "relationships", "relationship_type")
        .iter()
        .map(canon)
        .collect();
    assert!(
        obj(&out)
            .get("relationships")
            .and_then(Value::as_object)
            .is_some(),
        "the corpus's relationships are partitioned by type"
    );
    for (i, r) in arr(&input, "relationships").iter().enumerate() {
        let want = promised(r);
        for k in ["source_id", "target_id", "relationship_type"] {
            assert_eq!(want.get(k), obj(r).get(k), "relationships[{i}].{k} is kept");
        }
        let want = canon(&want);
        let at = left
            .iter()
            .position(|m| m == &want)
            .unwrap_or_else(|| panic!("relationships[{i}] lost or changed: {}", to_compact(r)));
        left.swap_remove(at);
    }
    assert!(
        left.is_empty(),
        "records no input relationship accounts for: {left:?}"
    );
}

fn field<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    v.as_object()?.get(key)
}

fn list_has(v: Option<&Value>, want: &Value) -> bool {
    match v {
        Some(Value::Array(items)) => items.contains(want),
        Some(one) => one == want,
        None => false,
    }
}

#[test]
fn corpus_search_memory_keeps_every_relation() {
    let input = corpus("search_memory");
    let out = shape_corpus(&input, "meta_relations.toml");
    let results = arr(&out, "results");
    for (i, r) in arr(&input, "results").iter().enumerate() {
        for k in ["id", "memory", "category", "scope"] {
            assert_eq!(field(&results[i], k), field(r, k), "results[{i}].{k}");
        }
    }
    let mut lost = Vec::new();
    for (memory, relations) in obj(field(&input, "meta_relations").expect("meta_relations")).iter()
    {
        // Nested into its result, or left in meta_relations when it has none.
        let id = Value::from(memory.as_str());
        let grouped = results
            .iter()
            .find(|r| field(r, "id") == Some(&id))
            .and_then(|r| field(r, "meta_relations"))
            .or_else(|| field(&out, "meta_relations").and_then(|m| field(m, memory)))
            .unwrap_or_else(|| panic!("the relations of {memory} are gone"));
        assert!(
            grouped.as_object().is_some(),
            "{memory}: relations are an object, even {{}}"
        );
        for rel in relations.as_array().unwrap() {
            let target = field(rel, "target_value").unwrap();
            let kept = match field(rel, "type").and_then(Value::as_str) {
                Some("OM_REFERENCES_ARTIFACT") => {
                    list_has(field(grouped, "artifact"), target)
                        || list_has(field(grouped, "artifacts"), target)
                }
                Some("OM_SIMILAR") => field(grouped, "similar")
                    .and_then(Value::as_array)
                    .is_some_and(|s| s.iter().any(|x| field(x, "id") == Some(target))),
                Some("OM_ABOUT") => list_has(field(grouped, "entities"), target),
                Some("OM_HAS_EVIDENCE") => list_has(field(grouped, "evidence"), target),
                Some("OM_TAGGED") => {
                    let value = field(rel, "value").cloned().unwrap_or(Value::Bool(true));
                    let tag =
                        field(grouped, "tags").and_then(|t| field(t, target.as_str().unwrap()));
                    tag == Some(&value)
                }
                _ => true, // noise types are dropped by design
            };
            if !kept {
                lost.push(format!("{memory}: {}", to_compact(rel)));
            }
        }
    }
    assert!(lost.is_empty(), "relations lost: {lost:#?}");
}

fn time(v: &Value, key: &str) -> f64 {
    let text = field(v, key).and_then(Value::as_str).expect("a time");
    // `YYYY-MM-DDTHH:MM:SS`, one day, no offset: seconds of the day are enough here.
    let hms: Vec<f64> = text[11..19]
        .split(':')
        .map(|p| p.parse().unwrap())
        .collect();
    hms[0] * 3600.0 + hms[1] * 60.0 + hms[2]
}

#[test]
fn corpus_narrative_keeps_totals_and_time() {
    let input = corpus("narrative_day");
    let out = shape_corpus(&input, "narrative.toml");
    assert_eq!(
        field(&out, "totalActiveMinutes"),
        field(&input, "totalActiveMinutes")
    );
    let (before, after) = (arr(&input, "segments"), arr(&out, "segments"));
    assert!(after.len() <= before.len());
    assert!(
        after.len() < before.len(),
        "the corpus has mergeable neighbours"
    );
    for seg in before {
        let app = field(seg, "application");
        let (start, end) = (time(seg, "startTime"), time(seg, "endTime"));
        // Every input segment lies inside one output block of its application.
        let block = after.iter().find(|b| {
            field(b, "application") == app
                && time(b, "startTime") <= start
                && end <= time(b, "endTime")
        });
        assert!(block.is_some(), "segment {} lost", to_compact(seg));
    }
    for b in after {
        let original = before
            .iter()
            .find(|s| field(s, "startTime") == field(b, "startTime"))
            .expect("a block starts where a segment did");
        let duration = field(b, "durationMinutes").and_then(Value::as_f64).unwrap();
        if field(original, "endTime") == field(b, "endTime") {
            // Not merged: the upstream duration is kept as it was.
            assert_eq!(
                field(b, "durationMinutes"),
                field(original, "durationMinutes")
            );
        } else {
            let span = (time(b, "endTime") - time(b, "startTime")) / 60.0;
            assert!(
                (duration - span).abs() <= 0.005,
                "{}: span {span}",
                to_compact(b)
            );
        }
        for gone in ["applicationColor", "refs", "timelineRef", "activityRef"] {
            assert!(field(b, gone).is_none(), "{gone} in {}", to_compact(b));
        }
    }
    assert_eq!(
        field(&out, "topApplications"),
        field(&input, "topApplications")
    );
}

#[test]
fn corpus_website_usage_keeps_every_visit_over_the_threshold() {
    let input = corpus("website_usage");
    let out = shape_corpus(&input, "website_usage.toml");
    let minutes = |v: &Value| field(v, "minutes").and_then(Value::as_f64).unwrap();
    let want: Vec<Value> = arr(&input, "websites")
        .iter()
        .filter(|v| minutes(v) >= 0.5)
        .map(pruned)
        .collect();
    assert!(
        want.len() < arr(&input, "websites").len(),
        "the corpus has short visits"
    );
    assert_eq!(arr(&out, "websites"), want.as_slice());
}

/// The token floors on the corpus, o200k against the minified input: entities ≥ 55%
/// fewer, search_memory ≥ 50%, narrative ≥ 60%. The counter equals the reference's (see
/// tokens_vs_reference.rs); the minified input keeps number lexemes as written (`99.90`), so it
/// can be a few tokens longer than the reference's `JSON.stringify`, whose numbers the closing
/// notes quote.
#[test]
fn corpus_rates_meet_the_acceptance_floors() {
    for (name, policy, floor) in [
        ("entities_systems", "entities.toml", 55.0),
        ("search_memory", "meta_relations.toml", 50.0),
        ("narrative_day", "narrative.toml", 60.0),
    ] {
        let input = corpus(name);
        let before = o200k().count(&to_compact(&input));
        let after = o200k().count(&to_compact(&shape_corpus(&input, policy)));
        let fewer = 100.0 * (1.0 - after as f64 / before as f64);
        eprintln!("{name}: {before} → {after} tokens, {fewer:.1}% fewer");
        assert!(
            fewer >= floor,
            "{name}: {fewer:.1}% fewer, below the {floor}% floor"
        );
    }
}
