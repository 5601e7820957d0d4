//! `pare count`: exact tokens of any text, per file, with a total for several.
//!
//! Why lossy decoding: the count must equal what a model's client counts for the same file,
//! and JavaScript clients read files with `fs.readFileSync(f, 'utf8')`, which turns each
//! invalid UTF-8 sequence into one U+FFFD (the WHATWG decoder's "maximal subparts") and
//! keeps a byte order mark as U+FEFF. Rust's `String::from_utf8_lossy` replaces by the same
//! rule, so pare counts exactly the text those clients see — and says on stderr how many
//! bytes it replaced, since the count is then of a text that differs from the file.
//!
//! ```text
//! $ pare count a.json src/main.rs
//!    5398  a.json
//!     871  src/main.rs
//!    6269  total
//! ```

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args as ClapArgs;
use rayon::prelude::*;

use crate::io::{input_name, read_bytes, tokenizer, write_output};

#[derive(ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub input: crate::io::InputArgs,
    /// Files to count (any text, not only JSON); `-` or nothing for stdin.
    pub files: Vec<PathBuf>,
    /// Print JSON: `{"tokenizer", "files": [{"file", "tokens", "bytes",
    /// "invalid_utf8_bytes"}], "total"}`.
    #[arg(long)]
    pub json: bool,
    /// Tokenizer: o200k_base, cl100k_base, chars4.
    #[arg(long, default_value = "o200k_base")]
    pub tokenizer: String,
    /// A HuggingFace tokenizer.json to count with instead (offline).
    #[arg(long, value_name = "PATH")]
    pub tokenizer_file: Option<PathBuf>,
}

/// One input's count.
struct Counted {
    file: String,
    tokens: usize,
    bytes: usize,
    /// Bytes that were not UTF-8, each maximal invalid sequence counted as one U+FFFD.
    invalid_utf8_bytes: usize,
    /// How many U+FFFD they became.
    replacements: usize,
}

pub fn run(args: Args) -> Result<()> {
    args.input.apply();
    let tok = tokenizer(&args.tokenizer, args.tokenizer_file.as_deref())?;
    let files: Vec<Option<&Path>> = if args.files.is_empty() {
        vec![None]
    } else {
        args.files.iter().map(|p| Some(p.as_path())).collect()
    };
    // Read in order, so a missing file fails before any count is printed.
    let texts = files
        .iter()
        .map(|f| Ok((input_name(*f), read_bytes(*f)?)))
        .collect::<Result<Vec<_>>>()?;
    let counted: Vec<Counted> = texts
        .par_iter()
        .map(|(name, bytes)| {
            let (text, invalid, replacements) = decode_lossy(bytes);
            Counted {
                file: name.clone(),
                // Each file once: nothing of it is worth remembering.
                tokens: tok.count_once(&text),
                bytes: bytes.len(),
                invalid_utf8_bytes: invalid,
                replacements,
            }
        })
        .collect();
    for c in counted.iter().filter(|c| c.invalid_utf8_bytes > 0) {
        eprintln!(
            "pare: note: {}: {} invalid UTF-8 bytes counted as {} U+FFFD (as a UTF-8 decoder \
             such as node's reads them)",
            c.file, c.invalid_utf8_bytes, c.replacements
        );
    }
    let total = counted.iter().map(|c| c.tokens).sum();
    let out = if args.json {
        let files: Vec<serde_json::Value> = counted
            .iter()
            .map(|c| {
                serde_json::json!({
                    "file": c.file,
                    "tokens": c.tokens,
                    "bytes": c.bytes,
                    "invalid_utf8_bytes": c.invalid_utf8_bytes,
                    "replacements": c.replacements,
                })
            })
            .collect();
        let counts = serde_json::json!({"tokenizer": tok.name(), "files": files, "total": total});
        let mut s = serde_json::to_string_pretty(&counts)?;
        s.push('\n');
        s
    } else {
        table(&counted, total)
    };
    write_output(None, &out)
}

/// `tokens  file` lines, right-aligned, and a total line for more than one input.
fn table(counted: &[Counted], total: usize) -> String {
    let width = total.to_string().len().max(7);
    let mut out = String::new();
    for c in counted {
        out.push_str(&format!("{:>width$}  {}\n", c.tokens, c.file));
    }
    if counted.len() > 1 {
        out.push_str(&format!("{total:>width$}  total\n"));
    }
    out
}

/// `bytes` as text the way a WHATWG UTF-8 decoder reads it (each maximal invalid sequence
/// one U+FFFD, a BOM kept), how many bytes were invalid, and how many U+FFFD replaced them.
fn decode_lossy(bytes: &[u8]) -> (std::borrow::Cow<'_, str>, usize, usize) {
    let (mut invalid, mut replacements) = (0, 0);
    for chunk in bytes.utf8_chunks() {
        if !chunk.invalid().is_empty() {
            invalid += chunk.invalid().len();
            replacements += 1;
        }
    }
    (String::from_utf8_lossy(bytes), invalid, replacements)
}

#[cfg(test)]
mod tests {
    use super::decode_lossy;

    /// What the WHATWG decoder (and so node's `readFileSync(f, 'utf8')`) gives for each
    /// kind of bad sequence: one U+FFFD per maximal subpart of a valid sequence, else per
    /// byte. `String::from_utf8_lossy` must agree on every one.
    #[test]
    fn lossy_decoding_replaces_maximal_subparts_as_whatwg_does() {
        let cases: &[(&[u8], &str, usize, usize)] = &[
            (b"caf\xe9!", "caf\u{fffd}!", 1, 1),                 // Latin-1 é
            (b"\xe2\x82x", "\u{fffd}x", 2, 1),                   // cut 3-byte sequence: one
            (b"\xf0\x9f\x98", "\u{fffd}", 3, 1),                 // cut 4-byte sequence: one
            (b"\xed\xa0\x80", "\u{fffd}\u{fffd}\u{fffd}", 3, 3), // surrogate: per byte
            (b"\xc0\xaf", "\u{fffd}\u{fffd}", 2, 2),             // overlong: per byte
            (
                b"\xf4\x90\x80\x80",
                "\u{fffd}\u{fffd}\u{fffd}\u{fffd}",
                4,
                4,
            ), // > U+10FFFF
            (b"\x80\x80a", "\u{fffd}\u{fffd}a", 2, 2),           // lone continuations
            (b"\xef\xbb\xbfok", "\u{feff}ok", 0, 0),             // BOM kept
            (b"\xff", "\u{fffd}", 1, 1),
        ];
        for (bytes, want, invalid, replacements) in cases {
            let (text, i, r) = decode_lossy(bytes);
            assert_eq!(
                (text.as_ref(), i, r),
                (*want, *invalid, *replacements),
                "{bytes:?}"
            );
            assert_eq!(text.matches('\u{fffd}').count(), *replacements);
        }
    }
}
