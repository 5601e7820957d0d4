//! `tools_compact::compact` on the tools/list of real servers (captured from the pinned
//! reference servers .ci/run installs: `tests/fixtures/*_tools_list.json`): every tool keeps
//! its name and every argument — name, type, enum, const, required, items, alternatives and
//! value constraints, at every depth — and the list costs fewer o200k tokens.

use pare_mcp::tools_compact::compact;
use serde_json::Value;

const SERVERS: [&str; 4] = ["memory", "everything", "filesystem", "postgres"];

fn fixture(server: &str) -> Vec<Value> {
    let path = format!(
        "{}/tests/fixtures/{server}_tools_list.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["tools"].as_array().unwrap().clone()
}

/// What a call must get right, as `path keyword=value` lines: every property name and every
/// keyword that constrains a value, walked through every place a JSON Schema nests one.
/// Descriptions, titles, defaults and examples are not in it (they may be shortened).
fn contract(schema: &Value, at: &str, out: &mut Vec<String>) {
    const KEEP: [&str; 20] = [
        "type",
        "enum",
        "const",
        "required",
        "format",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "$ref",
        "nullable",
    ];
    let Some(obj) = schema.as_object() else {
        return;
    };
    for (key, v) in obj {
        if KEEP.contains(&key.as_str()) {
            out.push(format!("{at} {key}={v}"));
        }
        match key.as_str() {
            "properties" | "patternProperties" | "$defs" | "definitions" => {
                for (name, s) in v.as_object().unwrap() {
                    out.push(format!("{at} {key}.{name}"));
                    contract(s, &format!("{at}/{name}"), out);
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                for (i, s) in v.as_array().unwrap().iter().enumerate() {
                    contract(s, &format!("{at}/{key}{i}"), out);
                }
            }
            "items" | "not" | "additionalProperties" if v.is_object() => {
                contract(v, &format!("{at}/{key}"), out)
            }
            _ => {}
        }
    }
}

fn tokens(tools: &[Value]) -> usize {
    pare::tokens::builtin("o200k_base")
        .unwrap()
        .count(&serde_json::to_string(tools).unwrap())
}

#[test]
fn every_tool_keeps_its_name_and_every_argument_exactly() {
    for server in SERVERS {
        let before = fixture(server);
        let mut after = before.clone();
        compact(&mut after);
        assert_eq!(after.len(), before.len(), "{server}");
        for (b, a) in before.iter().zip(&after) {
            assert_eq!(a["name"], b["name"], "{server}");
            let (mut cb, mut ca) = (Vec::new(), Vec::new());
            contract(&b["inputSchema"], "", &mut cb);
            contract(&a["inputSchema"], "", &mut ca);
            assert!(!cb.is_empty(), "{server} {}: no contract", b["name"]);
            assert_eq!(ca, cb, "{server} {}", b["name"]);
            let d = a["description"].as_str().unwrap_or("");
            assert!(
                !d.is_empty() || b["description"].as_str().unwrap_or("").is_empty(),
                "{server} {} lost its description",
                b["name"]
            );
        }
    }
}

#[test]
fn the_fixtures_have_what_the_contract_checks() {
    // A contract that never sees an enum or a nested required list would pass vacuously.
    let all: Vec<String> = SERVERS
        .iter()
        .flat_map(|s| fixture(s))
        .flat_map(|t| {
            let mut c = Vec::new();
            contract(&t["inputSchema"], "", &mut c);
            c
        })
        .collect();
    for needle in ["enum=", "/[]", "required=", "minimum=", "format="] {
        let needle = needle.replace("/[]", "/items");
        assert!(
            all.iter().any(|c| c.contains(&needle)),
            "no {needle} in the fixtures"
        );
    }
}

#[test]
fn hints_a_client_acts_on_stay() {
    for server in SERVERS {
        let before = fixture(server);
        let mut after = before.clone();
        compact(&mut after);
        for (b, a) in before.iter().zip(&after) {
            let name = &b["name"];
            // Annotations: each hint is the same or the spec's default when absent
            // (destructive and idempotent mean nothing on a read-only tool).
            let read_only = b["annotations"]["readOnlyHint"] == true;
            assert_eq!(a["annotations"]["readOnlyHint"] == true, read_only);
            for (hint, default) in [
                ("readOnlyHint", false),
                ("destructiveHint", true),
                ("idempotentHint", false),
                ("openWorldHint", true),
            ] {
                if read_only && hint != "readOnlyHint" && hint != "openWorldHint" {
                    continue;
                }
                let was = b["annotations"][hint].as_bool().unwrap_or(default);
                let is = a["annotations"][hint].as_bool().unwrap_or(default);
                assert_eq!(is, was, "{server} {name} {hint}");
            }
            let was = b["execution"]["taskSupport"]
                .as_str()
                .unwrap_or("forbidden");
            let is = a["execution"]["taskSupport"]
                .as_str()
                .unwrap_or("forbidden");
            assert_eq!(is, was, "{server} {name} taskSupport");
            assert_eq!(a.get("_meta"), b.get("_meta"), "{server} {name} _meta");
        }
    }
}

#[test]
fn every_servers_list_costs_fewer_tokens_or_as_few() {
    for server in SERVERS {
        let before = fixture(server);
        let mut after = before.clone();
        compact(&mut after);
        let (b, a) = (tokens(&before), tokens(&after));
        eprintln!("{server}: {b} → {a} o200k tokens");
        // postgres's one tool is a bare sentence and one untitled argument: nothing to drop.
        assert!(
            a < b || (server == "postgres" && a == b),
            "{server}: {b} → {a}"
        );
    }
    // The big lists lose at least 45%: long descriptions, output schemas and noise are that
    // much of them (everything's descriptions are one sentence already: 49% off).
    for server in ["memory", "everything", "filesystem"] {
        let before = fixture(server);
        let mut after = before.clone();
        compact(&mut after);
        let (b, a) = (tokens(&before), tokens(&after));
        assert!(a * 100 <= b * 55, "{server}: {b} → {a}, less than 45% off");
    }
}
