use super::*;

#[test]
fn a_floor_is_at_most_the_count_and_close_to_it() {
    for t in all() {
        for s in SAMPLES {
            assert!(t.count_floor(s) <= t.count(s), "{} {s:?}", t.name());
        }
    }
    let o200k = builtin("o200k_base").unwrap();
    let json = r#"{"name":"Organization_0001_kafka","observations":["Beta gamma design."]}"#;
    let (floor, count) = (o200k.count_floor(json), o200k.count(json));
    assert!(floor > 0 && floor * 10 >= count * 7, "{floor} of {count}");
}

#[test]
fn a_short_key_read_in_place_is_the_copied_key() {
    let text = "ab\0\0cdefghijklmnopqrstuvwxyz0123456789 é".as_bytes();
    for start in 0..text.len() {
        for len in 2..=SHORT_PIECE_BYTES.min(text.len() - start) {
            let range = start..start + len;
            assert_eq!(short_key_at(text, range.clone()), short_key(&text[range]));
        }
    }
}

fn all() -> Vec<Box<dyn Tokenizer>> {
    NAMES.iter().map(|n| by_name(n).unwrap()).collect()
}

const SAMPLES: &[&str] = &[
    "",
    "a",
    "hello world",
    "{\"id\": 12345678901234567890, \"name\": \"Zoë\", \"tags\": [\"x\", \"y\"]}",
    "héllo wörld — ünïcödé “quotes” ",
    "你好，世界！这是一个测试。日本語のテキストも少し。",
    "emoji 👩‍👩‍👧‍👦 🇫🇷 ✨✨✨ mixed with text",
    "مرحبا بالعالم שלום עולם",
    "   leading and trailing   \n\n\n\t\tindent\r\n",
    "they'll've it's WE'RE I'M",
    "a\u{85}b\u{FEFF}c \u{A0} d\u{2028}e",
];

#[test]
fn empty_text_is_zero_tokens() {
    for t in all() {
        assert_eq!(t.count(""), 0, "{}", t.name());
        assert_eq!(t.prefix_len("", 5), 0);
        assert_eq!(t.suffix_start("", 5), 0);
        assert!(t.fits("", 0));
    }
}

#[test]
fn known_counts() {
    let o = by_name("o200k_base").unwrap();
    let c = by_name("cl100k_base").unwrap();
    assert_eq!(o.count("hello world"), 2);
    assert_eq!(c.count("hello world"), 2);
    // Special-token text is ordinary text.
    assert!(o.count("<|endoftext|>") > 1);
    assert!(c.count("<|endoftext|>") > 1);
    // Aliases resolve to the same encodings.
    assert_eq!(by_name("o200k").unwrap().name(), "o200k_base");
    assert_eq!(by_name("cl100k").unwrap().name(), "cl100k_base");
}

#[test]
fn chars4_rounds_up_in_scalar_values() {
    let t = by_name("chars4").unwrap();
    assert_eq!(t.count("a"), 1);
    assert_eq!(t.count("abcd"), 1);
    assert_eq!(t.count("abcde"), 2);
    assert_eq!(t.count("abcdefgh"), 2);
    // Four chars, twelve bytes: one token.
    assert_eq!(t.count("你好世界"), 1);
    assert_eq!(t.count("你好世界!"), 2);
    assert_eq!(t.prefix_len("你好世界!", 1), "你好世界".len());
    assert_eq!(t.suffix_start("!你好世界", 1), 1);
    assert_eq!(t.suffix_start("abc", 1), 0);
    assert!(t.fits("abcd", 1));
    assert!(!t.fits("abcde", 1));
}

#[test]
fn unknown_name_lists_the_allowed_ones() {
    let err = by_name("gpt2").unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, TokenizerError::Unknown { .. }));
    for name in NAMES {
        assert!(msg.contains(name), "{msg}");
    }
    assert!(msg.contains("gpt2"), "{msg}");
}

/// Check the cut contracts for every `max` on every sample.
fn check_cuts(t: &dyn Tokenizer, text: &str) {
    let total = t.count(text);
    let mut last_prefix = 0;
    let mut last_suffix = text.len();
    for max in 0..=total + 1 {
        let p = t.prefix_len(text, max);
        let s = t.suffix_start(text, max);
        assert!(text.is_char_boundary(p), "{}: {text:?} max {max}", t.name());
        assert!(text.is_char_boundary(s), "{}: {text:?} max {max}", t.name());
        // Monotone: more tokens never keep less text.
        assert!(
            p >= last_prefix && s <= last_suffix,
            "{}: {text:?}",
            t.name()
        );
        last_prefix = p;
        last_suffix = s;
        assert!(
            t.count(&text[..p]) <= max,
            "{}: {text:?} prefix {max}",
            t.name()
        );
        assert!(
            t.count(&text[s..]) <= max,
            "{}: {text:?} suffix {max}",
            t.name()
        );
        assert_eq!(t.fits(text, max), total <= max);
        if max >= total {
            assert_eq!(p, text.len());
            assert_eq!(s, 0);
        }
    }
    assert_eq!(t.prefix_len(text, 0), 0);
    assert_eq!(t.suffix_start(text, 0), text.len());
    assert_eq!(t.prefix_len(text, usize::MAX), text.len());
    assert_eq!(t.suffix_start(text, usize::MAX), 0);
}

/// Proptest found it: the back-off doubled past the cut a smaller budget found, so
/// 3 tokens kept less text than 2 (a BOM before a tab and a ZWJ emoji sequence).
#[test]
fn cuts_stay_monotone_around_a_bom_and_a_zwj_sequence() {
    for t in all() {
        check_cuts(t.as_ref(), " \u{feff}\t👩\u{200d}👩");
    }
}

#[test]
fn cuts_respect_max_and_char_boundaries() {
    for t in all() {
        for text in SAMPLES {
            check_cuts(t.as_ref(), text);
        }
    }
}

#[test]
fn cuts_are_token_boundaries_for_bpe() {
    // Cutting "hello world" after one token gives "hello", and the last token " world".
    let o = by_name("o200k_base").unwrap();
    assert_eq!(o.prefix_len("hello world", 1), 5);
    assert_eq!(o.suffix_start("hello world", 1), 5);
    // A multi-byte char split across tokens is dropped from both cuts, never halved.
    let text = "🇫🇷🇫🇷";
    for max in 0..o.count(text) {
        let p = o.prefix_len(text, max);
        let s = o.suffix_start(text, max);
        assert!(text.is_char_boundary(p) && text.is_char_boundary(s));
    }
}

/// The plain sum of each piece's BPE count: what `count` computes, without the memo.
fn unremembered(bpe: &Bpe, text: &str) -> usize {
    let bom = text.contains(BOM);
    let ranges: Vec<Range<usize>> = bpe.pieces(text).collect();
    ranges
        .into_iter()
        .map(|r| bpe.piece_count(&text[r], bom))
        .sum()
}

#[test]
fn remembered_piece_counts_equal_fresh_ones() {
    // Enough distinct pieces to fill both memo tables more than once, repeated pieces,
    // pieces longer than it remembers, U+FEFF pieces; counted on several threads at once, so
    // texts share and swap the pooled scratch.
    let mut text: String = SAMPLES.concat();
    for i in 0..3 * MEMO_PIECES {
        text.push_str(&format!(" w{i}x{}:\u{FEFF}{i}", i % 7));
    }
    for i in 0..MEMO_PIECES + 100 {
        // Distinct pieces longer than a short key: " longerwordpiece" and `i` in letters.
        let letters: String = i
            .to_string()
            .bytes()
            .map(|d| char::from(d - b'0' + b'a'))
            .collect();
        text.push_str(&format!(" longerwordpiece{letters}"));
    }
    text.push_str(&"z".repeat(3 * MEMO_PIECE_BYTES));
    text.push_str("\u{FEFF}\u{FEFF}ab \u{FEFF}");
    for bpe in [&*O200K, &*CL100K] {
        let expected = unremembered(bpe, &text);
        std::thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    for sample in SAMPLES {
                        assert_eq!(bpe.count(sample), unremembered(bpe, sample));
                    }
                    assert_eq!(bpe.count(&text), expected);
                    assert_eq!(bpe.count(&text), expected);
                    assert!(bpe.fits(&text, expected) && !bpe.fits(&text, expected - 1));
                });
            }
        });
    }
}

/// o200k's pieces of `text` by the regex alone (no ASCII shortcut).
fn regex_pieces(text: &str) -> Vec<Range<usize>> {
    let mut cache = SplitCache::default();
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let end = O200K.regex_piece_end(&mut cache, text, at);
        pieces.push(at..end);
        at = end;
    }
    pieces
}

#[track_caller]
fn assert_ascii_split_is_the_regex(text: &str) {
    let fast: Vec<Range<usize>> = O200K.pieces(text).collect();
    assert_eq!(fast, regex_pieces(text), "{text:?}");
}

#[test]
fn ascii_split_is_the_regex_split() {
    for text in SAMPLES {
        assert_ascii_split_is_the_regex(text);
    }
    for text in [
        "don't DON'T they'll WE'VE you're I'd it'S O'Neil x'l x' 'sx 'll",
        "ABC ABCdef aBC Abc'S abc'Ll abc'vE  \tHello \x0Bworld\x0Cfoo",
        "12345 -1 3.14e10 \"a\":{\"b\":[1,2,3]},\n  \"c\": null}\n",
        "//comment\r\n  /* x */ a/b/c \n\n\n   \t\n x  ",
        "  \n\r\n\t y \t\t z   ",
        " {\"é\": \"x\u{A0}y\"}  \u{3000}a\u{85}b  \u{FEFF}\u{FEFF}c'ſ d\u{301}",
        "\x00\x01\x7F~`!@#$%^&*()_+=[]{}|\\;:'\",.<>?",
    ] {
        assert_ascii_split_is_the_regex(text);
        // Every suffix too: each start is a position the shortcut may be asked about.
        for (i, _) in text.char_indices() {
            assert_ascii_split_is_the_regex(&text[i..]);
        }
    }
    for path in corpus_texts() {
        let text = std::fs::read_to_string(&path).expect("read corpus file");
        assert_ascii_split_is_the_regex(&text);
    }
}

/// The benchmark corpus, checked in (`examples/payloads/`; see
/// `testdata/README.md`): every JSON file of both.
fn corpus_texts() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files: Vec<_> = ["examples/payloads"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).expect("checked-in corpus"))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "checked-in corpus: {files:?}");
    files
}

#[test]
fn pieces_cover_the_text() {
    for bpe in [&*O200K, &*CL100K] {
        for text in SAMPLES {
            let mut at = 0;
            for r in bpe.pieces(text) {
                assert_eq!(r.start, at);
                assert!(r.end > r.start);
                at = r.end;
            }
            assert_eq!(at, text.len());
        }
    }
}

#[test]
fn whitespace_runs_split_like_tiktoken() {
    let pieces = |text: &'static str| -> Vec<&'static str> {
        O200K.pieces(text).map(|r| &text[r]).collect()
    };
    // `\s+(?!\S)`: the last space before a word goes with the word.
    assert_eq!(pieces("a   b"), ["a", "  ", " b"]);
    assert_eq!(pieces("a   "), ["a", "   "]);
    assert_eq!(pieces("a \n\n b"), ["a", " \n\n", " b"]);
    // U+FEFF is whitespace to JavaScript (and so to the reference), U+0085 is not.
    assert_eq!(pieces("a \u{FEFF}b"), ["a", " ", "\u{FEFF}b"]);
    assert_eq!(pieces("a \u{85}b"), ["a", " \u{85}", "b"]);
}

#[cfg(feature = "hf-tokenizer")]
const WORD_LEVEL: &str = r#"{
    "version": "1.0", "truncation": {"direction": "Right", "max_length": 2, "strategy": "LongestFirst", "stride": 0},
    "padding": null, "added_tokens": [], "normalizer": null,
    "pre_tokenizer": {"type": "Whitespace"}, "post_processor": null, "decoder": null,
    "model": {"type": "WordLevel", "vocab": {"hello": 0, "world": 1, "[UNK]": 2}, "unk_token": "[UNK]"}
}"#;

#[cfg(feature = "hf-tokenizer")]
#[test]
fn huggingface_tokenizer_json() {
    let t = from_tokenizer_json("tiny.json", WORD_LEVEL.as_bytes()).unwrap();
    assert_eq!(t.name(), "file:tiny.json");
    // Truncation in the file (max_length 2) must not cap counts.
    assert_eq!(t.count("hello world hello wörld 你好"), 5);
    assert_eq!(t.count(""), 0);
    assert_eq!(t.prefix_len("hello world", 1), 5);
    assert_eq!(t.suffix_start("hello world", 1), 6);
    for text in SAMPLES {
        check_cuts(t.as_ref(), text);
    }
    let named = from_tokenizer_json("file:x", WORD_LEVEL.as_bytes()).unwrap();
    assert_eq!(named.name(), "file:x");
}

/// Without the feature the error says why; with it, a bad file is named.
#[test]
fn invalid_tokenizer_json_is_an_error() {
    let err = from_tokenizer_json("bad.json", b"{not json").unwrap_err();
    assert!(matches!(err, TokenizerError::InvalidFile { .. }));
    assert!(err.to_string().contains("bad.json"));
}

#[test]
fn handles_are_cheap_and_shared() {
    let a = builtin("o200k_base").unwrap();
    let b = builtin("o200k").unwrap();
    assert!(std::ptr::addr_eq(a, b));
    let boxed = by_name("chars4").unwrap();
    assert_eq!(format!("{boxed:?}"), "Tokenizer(\"chars4\")");
}

#[test]
fn a_text_counted_before_is_remembered_chunk_by_chunk() {
    // A fresh o200k_base, whose memo no other test touches.
    let bpe = o200k();
    let rows: String = (0..40)
        .map(|i| format!("  {{\"id\": {i}, \"name\": \"row {i}\"}},\n"))
        .collect();
    let text = format!("[\n{rows}  {{}}\n]\n");
    assert_eq!(bpe.count_remembered(&text), None);
    let n = bpe.count(&text);
    assert_eq!(n, bpe.count_whole(&text, false));
    assert_eq!(bpe.count_remembered(&text), Some(n));
    // One line more at the end: its last chunk was never counted.
    assert_eq!(
        bpe.count_remembered(&format!("{text}  {{\"id\": 40}}\n")),
        None
    );
    // Too short to be remembered, and U+FEFF (counted whole): never.
    bpe.count("[1, 2]");
    assert_eq!(bpe.count_remembered("[1, 2]"), None);
    let bom = format!("\u{feff}{text}");
    bpe.count(&bom);
    assert_eq!(bpe.count_remembered(&bom), None);
}

mod props {
    use super::*;
    use proptest::prelude::*;

    /// Fragments that stress the pre-tokenizer: case changes, contractions, digit runs,
    /// whitespace of every kind (JavaScript's and not), marks, multi-byte text, U+FEFF.
    const FRAGMENTS: &[&str] = &[
        "a",
        "Z",
        "the",
        "The",
        "HTTP",
        "camelCase",
        " ",
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\r",
        "'",
        "'s",
        "'LL",
        "'ve",
        "0",
        "42",
        "12345",
        "\"",
        "{",
        "}",
        ":",
        ",",
        ".",
        "/",
        "-",
        "_",
        "你好",
        "日本",
        "🙂",
        "👩\u{200d}👩",
        "🇫🇷",
        "e\u{301}",
        "\u{308}",
        "ß",
        "İ",
        "ſ",
        "\u{A0}",
        "\u{2028}",
        "\u{3000}",
        "\u{FEFF}",
        "\u{85}",
        "\u{200b}",
        "مرحبا",
        "<|",
    ];

    /// Short ASCII fragments at the pattern's edges, with some of `FRAGMENTS`.
    fn ascii_heavy_text() -> impl Strategy<Value = String> {
        const ASCII: &[&str] = &[
            "a", "z", "A", "Z", "s", "S", "t", "ll", "LL", "lL", "ve", "VE", "re", "rE", "d", "m",
            "'", "'s", "'ll", "'ve", "'re", "'x", "0", "9", "123", " ", "  ", "\t", "\n", "\r",
            "\r\n", "\x0B", "\x0C", "/", "//", "\"", "{", "}", ":", ",", ".", "-", "_", "\x00",
            "\x7F", "~", "é", "ſ", "\u{A0}", "\u{FEFF}", "\u{85}", "\u{301}", "中", "🙂",
            "\u{2028}",
        ];
        prop::collection::vec(
            prop_oneof![
                4 => prop::sample::select(ASCII),
                1 => prop::sample::select(FRAGMENTS),
            ],
            0..60,
        )
        .prop_map(|v| v.concat())
    }

    fn text() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(FRAGMENTS), 0..40).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn cuts_hold_their_contract(text in text()) {
            for t in all() {
                check_cuts(t.as_ref(), &text);
            }
        }

        /// Split at every point [`chunks`] may split at, a text's pieces are its
        /// chunks' pieces, so its count is their counts' sum; and the remembered
        /// counts are those counts.
        #[test]
        fn chunked_counts_are_whole_counts(
            text in prop_oneof![ascii_heavy_text(), text()].prop_map(|t| t.replace('\u{FEFF}', ""))
        ) {
            for bpe in [&*O200K, &*CL100K] {
                let whole: Vec<Range<usize>> = bpe.pieces(&text).collect();
                let mut split = Vec::new();
                let mut at = 0;
                for chunk in chunks::chunks(&text, 1) {
                    split.extend(bpe.pieces(chunk).map(|r| r.start + at..r.end + at));
                    at += chunk.len();
                }
                prop_assert_eq!(&split, &whole, "{:?}", chunks::chunks(&text, 1).collect::<Vec<_>>());
                let expected = bpe.count_whole(&text, false);
                // Counted, then from the memo; the same for floors.
                prop_assert_eq!(bpe.count(&text), expected);
                prop_assert_eq!(bpe.count(&text), expected);
                prop_assert_eq!(bpe.count_floor(&text), whole.len());
                prop_assert_eq!(bpe.count_floor(&text), whole.len());
            }
        }

        /// A text counted once is counted as any other (U+FEFF and all), and nothing
        /// of it is remembered: a count of it later finds no chunk of it.
        #[test]
        fn a_count_once_is_the_count_and_remembers_nothing(
            text in prop_oneof![ascii_heavy_text(), text()]
        ) {
            let fresh = o200k();
            let once = fresh.count_once(&text);
            prop_assert_eq!(fresh.count_remembered(&text), None);
            prop_assert_eq!(once, fresh.count(&text));
            for t in all() {
                prop_assert_eq!(t.count_once(&text), t.count(&text), "{}", t.name());
            }
        }

        /// The splitters (o200k's DFA compiled at build time, cl100k's lazy DFA, and
        /// o200k's lazy one, which stands in where the embedded one would not load) end
        /// every piece where the general-purpose regex over the same patterns ends it.
        #[test]
        fn the_splitters_end_pieces_where_the_meta_regex_does(
            text in prop_oneof![ascii_heavy_text(), text()]
        ) {
            for (bpe, encoding) in [(&*O200K, "o200k_base"), (&*CL100K, "cl100k_base")] {
                let meta = reference_splitter(encoding);
                let splitter = bpe.splitter();
                let mut cache = SplitCache::default();
                for at in (0..text.len()).filter(|&i| text.is_char_boundary(i)) {
                    let input = Input::new(&text).range(at..).anchored(Anchored::Yes);
                    let expected = meta.search(&input).map(|m| (m.pattern().as_usize(), m.end()));
                    prop_assert_eq!(splitter.find(&mut cache, &input), expected, "at {}", at);
                    prop_assert_eq!(splitter.find_lazily(&mut cache, &input), expected, "at {}", at);
                }
            }
        }

        /// The ASCII shortcut splits exactly as the regex does.
        #[test]
        fn ascii_split_is_the_regex_split_on_random_text(text in ascii_heavy_text()) {
            let fast: Vec<Range<usize>> = O200K.pieces(&text).collect();
            prop_assert_eq!(fast, regex_pieces(&text));
        }

        /// The shortcuts that recount only the tail of a cut text agree with a full count.
        #[test]
        fn cut_recounts_equal_full_counts(text in text()) {
            for bpe in [&*O200K, &*CL100K] {
                let total = bpe.count(&text);
                for n in 0..=total {
                    let cut = bpe.cut(&text, n);
                    let end = floor_char_boundary(&text, cut.at);
                    prop_assert_eq!(bpe.count_prefix(&text, end, &cut), bpe.count(&text[..end]));
                    let start = ceil_char_boundary(&text, cut.at);
                    prop_assert_eq!(
                        bpe.count_suffix(&text, start, &cut, total),
                        bpe.count(&text[start..])
                    );
                }
            }
        }

        /// The rank-table merges (scan and heap) against the slow path, bpe-openai's
        /// backtracking BPE, token for token; and without U+FEFF, the gpt-tokenizer-style
        /// merge is plain BPE too.
        #[test]
        fn js_merge_is_bpe_without_bom(text in text()) {
            let text = text.replace('\u{FEFF}', "");
            let pairs = [
                (&*O200K, &bpe_openai::o200k_base().bpe),
                (&*CL100K, &bpe_openai::cl100k_base().bpe),
            ];
            for (bpe, reference) in pairs {
                for r in bpe.pieces(&text) {
                    let piece = &text[r];
                    let lens: Vec<usize> = reference
                        .encode_via_backtracking(piece.as_bytes())
                        .iter()
                        .map(|&t| reference.token_len(t))
                        .collect();
                    prop_assert_eq!(bpe.bpe.token_lens(piece.as_bytes()), lens.clone());
                    prop_assert_eq!(bpe.bpe.count(piece.as_bytes()), lens.len());
                    prop_assert_eq!(bpe.js_merge(piece.as_bytes()), lens);
                }
            }
        }
    }
}

/// Building the pre-tokenizer's regex cost every process that counted 3–4 ms, while o200k
/// splits ASCII by hand: it is built on the first piece that is not ASCII, and counts are
/// the same either way.
#[test]
fn o200k_builds_its_regex_only_for_text_that_is_not_ascii() {
    let fresh = o200k();
    let ascii = r#"{"name": "entity 1", "tags": ["a", "b"], "n": 12.5}"#;
    assert_eq!(fresh.count(ascii), O200K.count(ascii));
    assert!(fresh.splitter.get().is_none());
    let text = "naïve café 東京";
    assert_eq!(fresh.count(text), O200K.count(text));
    assert!(fresh.splitter.get().is_some());
}

/// Texts counted at once on several threads share the pieces any of them merged: a fresh
/// encoding counting one text remembers its pieces where every thread looks, and four
/// threads counting at once agree with one counting alone.
#[test]
fn pieces_merged_on_one_thread_are_shared_with_the_others() {
    let text = r#"{"entities":[{"name":"Alpha Centauri","kind":"star","note":"the nearest system's brightest star"},{"name":"Proxima b","mass_earths":1.07,"year_days":11.2}]}"#;
    let alone = O200K.count_once(text);
    let fresh = o200k();
    assert_eq!(fresh.pieces_seen.len(), 0);
    assert_eq!(
        std::thread::scope(|s| s.spawn(|| fresh.count_once(text)).join().unwrap()),
        alone
    );
    let remembered = fresh.pieces_seen.len();
    assert!(remembered > 10, "{remembered} pieces remembered");
    let counts: Vec<usize> = std::thread::scope(|s| {
        let running: Vec<_> = (0..4).map(|_| s.spawn(|| fresh.count_once(text))).collect();
        running.into_iter().map(|r| r.join().unwrap()).collect()
    });
    assert_eq!(counts, vec![alone; 4]);
    // Nothing new to remember: every piece was merged once, on the first thread.
    assert_eq!(fresh.pieces_seen.len(), remembered);
}

/// A text with U+FEFF is counted as the reference counts it (its pieces with the mark merge
/// another way), and none of its pieces is shared, so a text without the mark never reads
/// a count made with it.
#[test]
fn a_text_with_a_bom_shares_no_piece() {
    let fresh = o200k();
    let text = "caf\u{FEFF}e \u{FEFF}hello world, hello again";
    assert_eq!(fresh.count_once(text), O200K.count_once(text));
    assert_eq!(fresh.pieces_seen.len(), 0);
}

/// Warming the tables up changes no count, on any thread.
#[test]
fn warming_up_changes_no_count() {
    let text = "naïve café: {\"a\": [1, 2, 3], \"b\": \"hello world\"}";
    let before: Vec<usize> = all().iter().map(|t| t.count(text)).collect();
    std::thread::scope(|s| {
        for t in all() {
            s.spawn(move || t.warm_up());
        }
    });
    let after: Vec<usize> = all().iter().map(|t| t.count(text)).collect();
    assert_eq!(before, after);
}

/// A long run of digits splits three at a time, as the regex splits it (the ASCII split
/// once looked at the whole run again at each piece: quadratic in its length).
#[test]
fn a_long_digit_run_splits_by_three_as_the_regex_does() {
    let text = format!("x{}y 1234567", "9876543210".repeat(1000));
    assert_ascii_split_is_the_regex(&text);
    assert_eq!(O200K.pieces(&text).filter(|r| r.len() == 3).count(), 3335);
}

/// The general-purpose regex over an encoding's splitter patterns, built once per test
/// process: what the splitters are checked against.
fn reference_splitter(encoding: &str) -> &'static regex_automata::meta::Regex {
    static O200K_META: std::sync::OnceLock<regex_automata::meta::Regex> =
        std::sync::OnceLock::new();
    static CL100K_META: std::sync::OnceLock<regex_automata::meta::Regex> =
        std::sync::OnceLock::new();
    let cell = if encoding == "o200k_base" {
        &O200K_META
    } else {
        &CL100K_META
    };
    cell.get_or_init(|| {
        let patterns = super::patterns::splitter_patterns(encoding);
        regex_automata::meta::Regex::new_many(&patterns).unwrap()
    })
}

/// o200k's pre-tokenizer is the DFA compiled at build time, not one compiled at run time
/// (which would cost every process that counts text that is not ASCII 2–4 ms).
#[test]
fn o200k_splits_by_the_embedded_dfa() {
    assert!(o200k().splitter().is_embedded());
    assert!(!CL100K.splitter().is_embedded());
}

/// A text with a little that is not ASCII is split by the embedded DFA alone; one with a
/// great deal goes on with the lazy DFA (the sparse one steps slower: 5 MB of Greek, CJK
/// and emoji counted 1.4× slower by it alone), and counts the same either way.
#[test]
fn a_text_mostly_not_ascii_goes_on_with_the_lazy_dfa() {
    let fresh = o200k();
    let little = "naïve café, 東京 🙂";
    assert_eq!(fresh.count_once(little), O200K.count_once(little));
    assert!(!fresh.splitter().built_lazily());
    let much = "κόσμε 東京 🙂 ".repeat(30_000);
    let lens: Vec<usize> = fresh.pieces(&much).map(|r| r.len()).collect();
    assert!(fresh.splitter().built_lazily());
    assert_eq!(
        lens,
        regex_pieces(&much)
            .iter()
            .map(|r| r.len())
            .collect::<Vec<_>>()
    );
}
