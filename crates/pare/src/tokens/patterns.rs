// The pre-tokenizer patterns of the built-in encodings: gpt-tokenizer's, with `\s` spelled
// out as JavaScript's whitespace. Shared, word for word, by the engine (`tokens::splitter`)
// and by `build.rs`, which compiles them into the DFAs the binary embeds: so the two can
// never disagree. Plain `//` comments: `build.rs` takes this file in with `include!`.

/// JavaScript's `\s` (WhiteSpace + LineTerminator), as a character-class body. The
/// reference counter is JavaScript, and its `\s` differs from Unicode `White_Space`.
pub(crate) const JS_WS: &str = r"\t\n\x{0B}\x{0C}\r\x{20}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// gpt-tokenizer's contraction suffix: explicit case pairs, because a Unicode
/// case-insensitive `'s` would also match `'ſ` (long s).
pub(crate) const CONTRACTION: &str = "'(?:[sS]|[dD]|[mM]|[tT]|[lL][lL]|[vV][eE]|[rR][eE])";

/// gpt-tokenizer's o200k pattern, minus its `\s+(?!\S)|\s+` tail.
pub(crate) fn o200k_pattern() -> String {
    let c = CONTRACTION;
    let w = JS_WS;
    [
        format!(
            r"[^\r\n\p{{L}}\p{{N}}]?[\p{{Lu}}\p{{Lt}}\p{{Lm}}\p{{Lo}}\p{{M}}]*[\p{{Ll}}\p{{Lm}}\p{{Lo}}\p{{M}}]+(?:{c})?"
        ),
        format!(
            r"[^\r\n\p{{L}}\p{{N}}]?[\p{{Lu}}\p{{Lt}}\p{{Lm}}\p{{Lo}}\p{{M}}]+[\p{{Ll}}\p{{Lm}}\p{{Lo}}\p{{M}}]*(?:{c})?"
        ),
        r"\p{N}{1,3}".to_owned(),
        format!(r" ?[^{w}\p{{L}}\p{{N}}]+[\r\n/]*"),
        format!(r"[{w}]*[\r\n]+"),
        format!(r"[{w}]+$"),
    ]
    .join("|")
}

/// gpt-tokenizer's cl100k pattern, minus its `\s+(?!\S)|\s` tail.
pub(crate) fn cl100k_pattern() -> String {
    let w = JS_WS;
    [
        CONTRACTION.to_owned(),
        r"[^\r\n\p{L}\p{N}]?\p{L}+".to_owned(),
        r"\p{N}{1,3}".to_owned(),
        format!(r" ?[^{w}\p{{L}}\p{{N}}]+[\r\n]*"),
        format!(r"[{w}]+$"),
        format!(r"[{w}]*[\r\n]"),
    ]
    .join("|")
}

/// The three patterns a splitter tries at each position, in order (leftmost-first): the
/// encoding's main alternation, then `\s+\s` standing in for `\s+(?!\S)` (the regex
/// crates have no look-ahead; the match gives back its last character, as bpe-openai
/// does: both forms take all but the last whitespace character before a non-space, and
/// where the run ends the text `\s+$` in the main pattern took it), then the tail's
/// fallback: `\s+` for o200k, `\s` for cl100k.
pub(crate) fn splitter_patterns(encoding: &str) -> [String; 3] {
    let (main, fallback) = match encoding {
        "o200k_base" => (o200k_pattern(), format!("[{JS_WS}]+")),
        "cl100k_base" => (cl100k_pattern(), format!("[{JS_WS}]")),
        other => panic!("no pre-tokenizer patterns for {other}"),
    };
    [main, format!("[{JS_WS}]+[{JS_WS}]"), fallback]
}
