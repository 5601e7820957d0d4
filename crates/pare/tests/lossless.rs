//! Lossless is exact: 100,000 random values (more with `PARE_LOSSLESS_VALUES=N`) through
//! every lossless format and back through [`expand`], the reader `pare expand` uses.
//!
//! * `json`, `pretty` and `auto` read back as exactly the value: member order and number
//!   lexemes included;
//! * `toon` reads back equal in value (members in any order, numbers by value) unless
//!   [`inexact_numbers`] names a number it cannot carry — TOON's one loss is never silent.
//!
//! The values lean on what breaks readers: strings of every Unicode whitespace and control
//! character, astral characters (surrogate pairs in JSON), quotes, backslashes and TOON's
//! own syntax; numbers huge, tiny, negative zero, long and in exponent form; deep and wide
//! shapes. A small seeded generator, not proptest: a hundred thousand cases must stay a few
//! minute of CI (on every core). `auto` picks by `chars4` here (its choice is not what is
//! tested; that it reads back is), and by o200k_base for every 1000th value.

use pare::encode::toon::{self, inexact_numbers};
use pare::encode::{Format, Reader, expand, expand_from, render};
use pare::json;
use pare::tokens::{self, Tokenizer};
use pare::{Map, Number, Value};

/// xorshift64*: deterministic, fast, good enough to spread choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Every Unicode White_Space character, the C0 and C1 controls, and characters with a
/// meaning to JSON, TOON or pare's dialect.
fn palette() -> Vec<char> {
    let mut chars: Vec<char> = (0u32..=0x1f)
        .chain(0x7f..=0x9f)
        .filter_map(char::from_u32)
        .collect();
    chars.extend([
        '\u{a0}', '\u{1680}', '\u{2000}', '\u{2001}', '\u{2002}', '\u{2003}', '\u{2004}',
        '\u{2005}', '\u{2006}', '\u{2007}', '\u{2008}', '\u{2009}', '\u{200a}', '\u{2028}',
        '\u{2029}', '\u{202f}', '\u{205f}', '\u{3000}', '\u{feff}', '\u{200b}', '\u{fffd}', '😀',
        '𝄞', '日', 'é', ' ', '"', '\\', ':', ',', '|', '[', ']', '{', '}', '-', '#', '.', 'e', 'E',
        '0', '1', '9', 'a', 'z', 't', 'n', 'u', 'l', '\'', '/',
    ]);
    chars
}

const WORDS: &[&str] = &[
    "",
    "true",
    "false",
    "null",
    "-",
    "- a",
    "0",
    "-0",
    "012",
    "1e5",
    "1.50",
    "[2]: a,b",
    "a: b",
    "# pare auto",
    "x,y",
    "[x]",
    "{y}",
    "key:",
    " pad",
    "pad ",
    "…",
    "\u{a0}",
    "\u{3000}",
    "\u{2028}",
    "2026-02-17",
    "https://x.org/a?b=c",
];

const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "-0.0",
    "0.0",
    "1",
    "-1",
    "1.5",
    "1.50",
    "20.0",
    "1e5",
    "1E+5",
    "1e-7",
    "2.5e-400",
    "1e400",
    "-1e999",
    "1e308",
    "4.9e-324",
    "9007199254740993",
    "9007199254740992",
    "1234567890123456789",
    "123456789012345678901234567890",
    "0.30000000000000004",
    "123456789012345.6789",
    "-123.456e-78",
    "5e-324",
];

fn string(rng: &mut Rng, palette: &[char]) -> String {
    match rng.below(4) {
        0 => (*rng.pick(WORDS)).to_owned(),
        1 => (0..1 + rng.below(3)).map(|_| *rng.pick(palette)).collect(),
        _ => (0..rng.below(8)).map(|_| *rng.pick(palette)).collect(),
    }
}

fn number(rng: &mut Rng) -> Number {
    let lexeme = match rng.below(3) {
        0 => (*rng.pick(NUMBERS)).to_owned(),
        1 => (rng.next() as i64 >> rng.below(64)).to_string(),
        _ => format!("{}.{}", rng.below(1000), rng.below(100_000)),
    };
    Number::from_lexeme(&lexeme).expect("a JSON number")
}

fn value(rng: &mut Rng, palette: &[char], depth: usize) -> Value {
    let leaf = depth == 0 || rng.below(3) == 0;
    if leaf {
        return match rng.below(6) {
            0 => Value::Null,
            1 => Value::Bool(rng.below(2) == 0),
            2 | 3 => Value::Number(number(rng)),
            _ => Value::from(string(rng, palette)),
        };
    }
    let wide = if rng.below(50) == 0 { 40 } else { 5 };
    let n = rng.below(wide);
    match rng.below(3) {
        0 => Value::Array((0..n).map(|_| value(rng, palette, depth - 1)).collect()),
        1 => {
            // A table: rows sharing keys, some missing, some nested.
            let keys: Vec<String> = (0..1 + rng.below(4))
                .map(|_| string(rng, palette))
                .collect();
            let rows = (0..n)
                .map(|_| {
                    let mut m = Map::new();
                    for k in &keys {
                        if rng.below(6) != 0 {
                            m.insert(k.clone(), value(rng, palette, depth.saturating_sub(2)));
                        }
                    }
                    Value::Object(m)
                })
                .collect();
            Value::Array(rows)
        }
        _ => {
            let mut m = Map::new();
            for _ in 0..n {
                m.insert(string(rng, palette), value(rng, palette, depth - 1));
            }
            Value::Object(m)
        }
    }
}

/// `v` with objects' members sorted and numbers as doubles: equality in value, as TOON
/// promises it.
fn in_value(v: &Value) -> serde_json::Value {
    match v {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Number(n) => serde_json::json!(n.as_f64().unwrap_or(f64::NAN).to_bits()),
        Value::String(s) => serde_json::Value::String(s.to_string()),
        Value::Array(items) => serde_json::Value::Array(items.iter().map(in_value).collect()),
        Value::Object(map) => {
            let mut members: Vec<(String, serde_json::Value)> = map
                .iter()
                .map(|(k, v)| (k.to_string(), in_value(v)))
                .collect();
            members.sort_by(|a, b| a.0.cmp(&b.0));
            serde_json::Value::Object(members.into_iter().collect())
        }
    }
}

fn exact(format: &str, v: &Value, text: &str) -> Result<(), String> {
    match expand(text) {
        Ok((back, _)) if back == *v => Ok(()),
        Ok((back, _)) => Err(format!(
            "{format}: reads back as {}",
            json::to_compact(&back)
        )),
        Err(e) => Err(format!("{format}: does not read back: {e}")),
    }
}

fn check(v: &Value, chars4: &dyn Tokenizer, o200k: &dyn Tokenizer, i: usize) -> Result<(), String> {
    exact("json", v, &json::to_compact(v))?;
    exact("pretty", v, &json::to_pretty(v))?;
    let tok = if i.is_multiple_of(1000) {
        o200k
    } else {
        chars4
    };
    exact("auto", v, &render(v, Format::Auto, tok))?;
    let text = toon::encode(v, &toon::EncodeOptions::default());
    let back = expand_from(&text, Reader::Toon)
        .map_err(|e| format!("toon: {e}\n{text}"))?
        .0;
    if in_value(&back) != in_value(v) && inexact_numbers(v).is_empty() {
        return Err(format!(
            "toon lost something silently: reads back as {}\n{text}",
            json::to_compact(&back)
        ));
    }
    Ok(())
}

#[test]
fn every_lossless_format_reads_back_exactly() {
    let n: usize = std::env::var("PARE_LOSSLESS_VALUES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let chars4 = tokens::builtin("chars4").unwrap();
    let o200k = tokens::builtin("o200k_base").unwrap();
    let palette = palette();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    // Each worker draws its own share of the values from its own seed.
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let palette = &palette;
                scope.spawn(move || {
                    let mut rng =
                        Rng(0x9e37_79b9_7f4a_7c15
                            ^ (w as u64 + 1).wrapping_mul(0x1234_5678_9abc_def1));
                    let mut failures = Vec::new();
                    for i in (w..n).step_by(workers) {
                        let depth = if i.is_multiple_of(1000) { 12 } else { 3 };
                        let v = value(&mut rng, palette, depth);
                        if let Err(why) = check(&v, chars4, o200k, i) {
                            failures.push(format!("value {i}: {}\n  {why}", json::to_compact(&v)));
                            if failures.len() >= 5 {
                                break;
                            }
                        }
                    }
                    failures
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The issue-28 probe's cases, each a root string of one Unicode whitespace character:
/// `auto` wrote it bare and `expand` took it for a blank document (`{}`).
#[test]
fn regression_a_root_string_of_unicode_whitespace_read_back_as_an_empty_document() {
    let o200k = tokens::builtin("o200k_base").unwrap();
    for c in [
        '\u{85}', '\u{a0}', '\u{1680}', '\u{2000}', '\u{200a}', '\u{2028}', '\u{2029}', '\u{202f}',
        '\u{205f}', '\u{3000}',
    ] {
        let v = Value::from(c.to_string());
        exact("auto", &v, &render(&v, Format::Auto, o200k)).unwrap();
        let text = toon::encode(&v, &toon::EncodeOptions::default());
        assert_eq!(expand(&text).unwrap().0, v, "toon of U+{:04X}", c as u32);
    }
}

/// The probe's other case: broken JSON read as a one-line TOON string, exit 0.
#[test]
fn regression_broken_json_was_read_as_a_toon_string() {
    for text in ["[1]]", "[012]", "012", "1.2.3", "\"abc", "{\"a\":1"] {
        let err = expand(text).expect_err(text).to_string();
        assert!(
            err.contains("not valid JSON") && err.contains("line 1 column"),
            "{text}: {err}"
        );
        if !text.starts_with(['{', '"']) {
            assert!(expand_from(text, Reader::Toon).is_ok(), "{text} as TOON");
        }
    }
    for (text, want) in [
        ("[2]: a,b", r#"["a","b"]"#),
        ("2026-02-17", r#""2026-02-17""#),
        ("hello", r#""hello""#),
    ] {
        assert_eq!(json::to_compact(&expand(text).unwrap().0), want, "{text}");
    }
}

/// Found by `scripts/fuzz toon_expand`: a number whose exponent has more digits than an
/// `i128` holds (`0.4e0066999…9006`, +Infinity as a double) is written by TOON as `null`,
/// and `inexact_numbers` did not name it (it read both the exponent and `null` as "not a
/// number", so equal): TOON lost it without a warning.
#[test]
fn regression_a_number_whose_exponent_overflows_i128_was_lost_silently() {
    for lexeme in [
        format!("0.4e0066{}006", "9".repeat(120)),
        format!("1e-{}", "9".repeat(60)),
        format!("-7E+{}", "1".repeat(45)),
    ] {
        let v = json::parse(&format!("[{lexeme}]")).unwrap();
        let found = inexact_numbers(&v);
        assert_eq!(found.len(), 1, "{lexeme}: {found:?}");
        assert_eq!(found[0].lexeme, lexeme);
    }
    // Zero stays zero whatever its exponent: nothing to warn about.
    let zero = json::parse(&format!("[0e{}]", "9".repeat(60))).unwrap();
    assert!(inexact_numbers(&zero).is_empty());
}
