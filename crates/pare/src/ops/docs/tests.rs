//! The docs cannot drift: every op is documented in full, and every example runs.

use super::{docs, parse};
use crate::json;
use crate::policy::Policy;
use crate::respond::{Input, Request, respond};

#[test]
fn every_op_is_documented() {
    let all = docs();
    assert_eq!(
        all.iter().map(|d| d.name).collect::<Vec<_>>(),
        super::super::NAMES,
        "docs() lists every op, in registry order"
    );
    for &(name, text, _) in super::super::DOCS {
        let d = parse(name, text).unwrap_or_else(|e| panic!("ops/{name}.rs: {e}"));
        assert!(!d.summary.is_empty(), "{name}: no summary");
        assert!(d.summary.len() < 120, "{name}: the summary is one line");
        assert!(!d.why.trim().is_empty(), "{name}: no `Why:`");
        assert!(!d.examples.is_empty(), "{name}: no example");
    }
    for d in &all {
        assert!(!d.options.is_empty(), "{}: no options", d.name);
        for o in &d.options {
            assert!(
                !o.description.is_empty(),
                "{}: option `{}` has no `///` description",
                d.name,
                o.name
            );
            assert!(o.ty != "any", "{}: option `{}` has no type", d.name, o.name);
        }
    }
}

/// Each example, parsed as a policy and run on its `In` at the default level through the
/// engine's entry point (as `pare compact --format json` does), gives its `Out` exactly.
#[test]
fn every_example_runs() {
    let mut failures = Vec::new();
    for d in docs() {
        for (i, ex) in d.examples.iter().enumerate() {
            let at = format!("ops/{}.rs example {}", d.name, i + 1);
            let policy = Policy::parse(&ex.policy).unwrap_or_else(|e| panic!("{at}: {e}"));
            assert!(
                policy.options().ops.iter().any(|o| o.name() == d.name),
                "{at}: the policy has no `{}` op",
                d.name
            );
            let input = json::parse(&ex.input).unwrap_or_else(|e| panic!("{at}: In: {e}"));
            assert_eq!(json::to_compact(&input), ex.input, "{at}: In is minified");
            let out = respond(Request::new(Input::Json(&ex.input), &policy))
                .unwrap_or_else(|e| panic!("{at}: {e}"));
            if out.page.text != ex.output {
                failures.push(format!(
                    "{at}:\n  In:       {}\n  Out:      {}\n  actually: {}",
                    ex.input, ex.output, out.page.text
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_block_out_of_format_is_an_error() {
    let ok = "//! `x`: does x.\n//!\n//! Why: because.\n//!\n//! ```toml\n//! [[ops]]\n//! op = \"x\"\n//! ```\n//!\n//! In: `1`\n//! Out: `2`\n//!\n//! More.\n";
    let d = parse("x", ok).unwrap();
    assert_eq!(d.summary, "does x.");
    assert_eq!(d.why, "because.");
    assert_eq!(d.examples[0].policy, "[[ops]]\nop = \"x\"\n");
    assert_eq!(
        (d.examples[0].input.as_str(), d.examples[0].output.as_str()),
        ("1", "2")
    );
    assert_eq!(d.notes, "More.");
    for (broken, why) in [
        (ok.replace("`x`: ", "x: "), "no name"),
        (ok.replace("Why: ", ""), "no why"),
        (ok.replace("Out: `2`", "Out: 2"), "no backticks"),
        (ok.replace("//! In: `1`\n", ""), "no In"),
        (ok.replace("```toml", "```"), "no example"),
    ] {
        assert!(parse("x", &broken).is_err(), "{why}: {broken}");
    }
    assert!(parse("y", ok).is_err(), "another op's name");
}

#[test]
fn only_the_doc_block_is_embedded() {
    for &(name, text, _) in super::super::DOCS {
        assert!(text.lines().all(|l| l.starts_with("//!")), "{name}");
    }
}

#[test]
fn options_have_types_and_defaults() {
    let limit = super::doc("limit").unwrap();
    let o = |n: &str| limit.options.iter().find(|o| o.name == n).unwrap().clone();
    assert_eq!(o("at").ty, "[string]");
    assert_eq!(o("at").default, None);
    assert_eq!(o("max").ty, "integer");
    assert_eq!(o("keep").default.as_deref(), Some("\"first\""));
    assert_eq!(limit.options.last().unwrap().name, "levels");
    let group = super::doc("group").unwrap();
    assert!(group.options.iter().any(|o| o.name == "rules[].when"));
    let merge = super::doc("merge").unwrap();
    let gap = merge
        .options
        .iter()
        .find(|o| o.name == "max_gap_minutes")
        .unwrap();
    assert_eq!(gap.ty, "number or \"$param\"");
    assert!(super::doc("nope").is_none());
}
