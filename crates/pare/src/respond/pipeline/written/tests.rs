//! A door written here over the engine's own [`Value`] (as the Python package writes its
//! dicts) must give, through [`respond_omitted`], the page [`respond`] gives for the whole
//! text: the same text and the same record, counts included.

use proptest::prelude::*;

use super::*;
use crate::respond::{Budget, Input, respond};
use crate::value::{Map, Value};
use crate::{Policy, json};

/// `v` written as compact JSON following `omitting`; `dropped`: inside a member its key
/// drops, where nothing is left out. With `PASTE`, an array's items are written whole and
/// then left out of ([`Omitting::leave_out`]), as a library's own JSON of its objects is.
fn write<const PASTE: bool>(v: &Value, omitting: &mut Omitting, dropped: bool, out: &mut String) {
    match v {
        Value::Array(items) if PASTE && !dropped => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let whole = json::to_compact(item);
                out.push_str(&omitting.leave_out(&whole).expect("JSON, no repeated key"));
            }
            out.push(']');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write::<PASTE>(item, omitting, dropped, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            let mut kept = 0;
            for (key, item) in map.iter() {
                let member = out.len();
                if kept > 0 {
                    out.push(',');
                }
                json::write_string(key, out);
                out.push(':');
                let at = out.len();
                let mark = if dropped {
                    Mark(KEEP)
                } else {
                    omitting.mark(key)
                };
                write::<PASTE>(item, omitting, dropped || !mark.keeps(), out);
                if dropped || omitting.settle(mark, &out[at..], || key) {
                    kept += 1;
                } else {
                    out.truncate(member);
                }
            }
            out.push('}');
        }
        _ => json::write_compact(v, out),
    }
}

fn request<'a>(policy: &'a Policy, text: &'a str) -> Request<'a> {
    Request {
        measure: false,
        want_value: false,
        ..Request::new(Input::Json(text), policy)
    }
}

/// The door's page and the stream's, for `v` under `policy`; `None` when the request is not
/// planned for.
fn both(policy: &Policy, v: &Value, paste: bool) -> Option<(Response, Response)> {
    let text = json::to_compact(v);
    let req = request(policy, &text);
    let mut omitting = Omitting::plan(&req).unwrap()?;
    let mut out = String::new();
    match paste {
        true => write::<true>(v, &mut omitting, false, &mut out),
        false => write::<false>(v, &mut omitting, false, &mut out),
    }
    let door = respond_omitted(&req, omitting, out).expect("planned for");
    let stream = respond(request(policy, &text)).unwrap();
    Some((door, stream))
}

const POLICIES: &[&str] = &[
    "[[ops]]\nop = \"drop\"\npaths = [\"$..at\", \"$..b\"]\n[[ops]]\nop = \"prune\"\n",
    "[[ops]]\nop = \"prune\"\n[[ops]]\nop = \"drop\"\npaths = [\"$..a*\"]\n",
    "[[ops]]\nop = \"drop\"\npaths = [\"$..c\"]\n",
    "[[ops]]\nop = \"prune\"\nempty_array = false\nempty_string = false\n",
    // No op: the door's text is the response.
    "",
];

#[test]
fn the_doors_page_is_the_streams() {
    let text =
        r#"{"a":{"at":1,"b":null},"c":[{"at":2,"d":""},[],{}],"at":{"x":null},"e":"é\u0001"}"#;
    let v = json::parse(text).unwrap();
    for p in POLICIES {
        let policy = Policy::parse(p).unwrap();
        for paste in [false, true] {
            let (door, stream) = both(&policy, &v, paste).expect("planned");
            assert_eq!(door.page, stream.page, "policy {p:?}");
        }
    }
}

#[test]
fn not_planned_for_what_the_stream_does_not_do_whole() {
    let scoped = "[[ops]]\nop = \"drop\"\npaths = [\"$['a']\"]\n";
    let walked = "[[ops]]\nop = \"drop\"\npaths = [\"$.a.b\"]\n";
    let conditional = "[[ops]]\nop = \"prune\"\nwhere = \"kind == 'x'\"\n";
    for p in [scoped, walked, conditional] {
        let policy = Policy::parse(p).unwrap();
        let req = request(&policy, "");
        assert!(Omitting::plan(&req).unwrap().is_none(), "policy {p:?}");
    }
    let policy = Policy::parse(POLICIES[0]).unwrap();
    let refused = [
        Request {
            measure: true,
            ..request(&policy, "")
        },
        Request {
            budget: Some(Budget::tokens(1000)),
            ..request(&policy, "")
        },
        Request {
            want_value: true,
            ..request(&policy, "")
        },
        Request {
            format: crate::Format::Toon,
            ..request(&policy, "")
        },
        Request {
            keep_input_text: true,
            ..request(&policy, "")
        },
    ];
    for req in refused {
        assert!(Omitting::plan(&req).unwrap().is_none());
    }
    // A level the policy does not have: the error `respond` gives.
    let req = Request {
        level: Some("nope"),
        ..request(&policy, "")
    };
    assert!(matches!(
        Omitting::plan(&req),
        Err(RespondError::Level { .. })
    ));
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i16>().prop_map(|n| json::parse(&n.to_string()).unwrap()),
        "[a-z\"é\u{1}]{0,3}".prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(5, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("(a|at|b|c|d)", inner), 0..5).prop_map(|m| {
                let mut map = Map::new();
                for (k, v) in m {
                    map.insert(k.as_str(), v);
                }
                Value::Object(map)
            }),
        ]
    })
}

proptest! {
    #[test]
    fn the_doors_page_is_the_streams_for_any_value(
        v in value(),
        p in 0..POLICIES.len(),
        paste in any::<bool>(),
    ) {
        let policy = Policy::parse(POLICIES[p]).unwrap();
        let (door, stream) = both(&policy, &v, paste).expect("planned");
        prop_assert_eq!(door.page, stream.page);
    }
}
