//! The checked-in policy JSON Schema must be what the code generates: editors read the file,
//! and a stale schema would accept or reject the wrong policies.

#[test]
fn checked_in_schema_is_current() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../schemas/policy.schema.json"
    );
    let on_disk = std::fs::read_to_string(path).expect("schemas/policy.schema.json exists");
    let generated = pare::schema::json_schema();
    assert!(
        on_disk == generated,
        "schemas/policy.schema.json is stale: run `cargo run -- policy schema > schemas/policy.schema.json`"
    );
}

#[test]
fn example_policies_compile() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/policies");
    let mut n = 0;
    for entry in std::fs::read_dir(dir).expect("examples/policies exists") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml" || e == "json") {
            let text = std::fs::read_to_string(&path).unwrap();
            pare::policy::Policy::parse(&text)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            n += 1;
        }
    }
    assert!(n >= 4, "expected the example policies, found {n}");
}
