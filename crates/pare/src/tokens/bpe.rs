//! OpenAI's BPE encodings (`o200k_base`, `cl100k_base`): gpt-tokenizer's pre-tokenizer
//! patterns, pieces memoised, and byte-pair merges over the rank tables.

use super::*;

pub(super) static O200K: LazyLock<Bpe> = LazyLock::new(o200k);

/// o200k_base, built (the tests build fresh ones, whose memos no other test touches).
pub(super) fn o200k() -> Bpe {
    Bpe::new("o200k_base", rank_table::o200k_base(), splitter::o200k)
}

pub(super) static CL100K: LazyLock<Bpe> =
    LazyLock::new(|| Bpe::new("cl100k_base", rank_table::cl100k_base(), splitter::cl100k));

/// A tiktoken-style encoding: a pre-tokenizer regex splits text into pieces, and each
/// piece is BPE-encoded on its own, so a count is the sum of per-piece counts.
/// A built-in encoding that is built on first use: building o200k_base takes tens of
/// milliseconds and tens of megabytes, which a run that never counts should not pay.
pub(super) struct Deferred {
    name: &'static str,
    pub(super) bpe: &'static LazyLock<Bpe>,
}

pub(super) static O200K_HANDLE: Deferred = Deferred {
    name: "o200k_base",
    bpe: &O200K,
};
pub(super) static CL100K_HANDLE: Deferred = Deferred {
    name: "cl100k_base",
    bpe: &CL100K,
};

impl Tokenizer for Deferred {
    fn name(&self) -> &str {
        self.name
    }
    fn count(&self, text: &str) -> usize {
        self.bpe.count(text)
    }
    fn count_once(&self, text: &str) -> usize {
        self.bpe.count_once(text)
    }
    fn prefix_len(&self, text: &str, max_tokens: usize) -> usize {
        self.bpe.prefix_len(text, max_tokens)
    }
    fn suffix_start(&self, text: &str, max_tokens: usize) -> usize {
        self.bpe.suffix_start(text, max_tokens)
    }
    fn fits(&self, text: &str, max_tokens: usize) -> bool {
        self.bpe.fits(text, max_tokens)
    }
    fn count_floor(&self, text: &str) -> usize {
        self.bpe.count_floor(text)
    }
    fn count_remembered(&self, text: &str) -> Option<usize> {
        self.bpe.count_remembered(text)
    }
    fn warm_up(&self) {
        self.bpe.bpe.warm_up();
    }
    fn additive_parts<'a>(&self, text: &'a str, min_bytes: usize) -> Vec<&'a str> {
        self.bpe.additive_parts(text, min_bytes)
    }
}

pub(super) struct Bpe {
    name: &'static str,
    pub(super) bpe: &'static RankTable,
    /// The pre-tokenizer ([`splitter_patterns`]), made on first use: o200k splits ASCII by
    /// hand, and loading its DFA checks 140 KB (about 0.5 ms), which a count of ASCII text
    /// (most JSON) never needs.
    pub(super) splitter: OnceLock<Splitter>,
    /// Makes the splitter.
    make_splitter: fn() -> Splitter,
    /// Search caches for `splitter`, taken once per text rather than once per piece (as
    /// the regex's own pool would be): a thread other than the regex's first user pays a
    /// lock and a put-back per search there, which cost a quarter of a count.
    caches: Mutex<Vec<Scratch>>,
    /// Split ASCII stretches by hand ([`o200k_ascii_piece`]) rather than by `splitter`.
    ascii_o200k: bool,
    /// Counts of chunks of texts counted before ([`chunks`]).
    chunks: chunks::ChunkMemo,
    /// The same for floors (pieces).
    floors: chunks::ChunkMemo,
    /// Piece counts all threads' walks share, behind each walk's own ([`shared`]).
    pub(super) pieces_seen: shared::SharedPieces,
}

/// U+FEFF, the byte-order mark, which gpt-tokenizer treats specially (see `js_merge`).
pub(super) const BOM: char = '\u{FEFF}';
pub(super) const BOM_UTF8: &[u8] = b"\xEF\xBB\xBF";

impl Bpe {
    fn new(name: &'static str, bpe: &'static RankTable, make_splitter: fn() -> Splitter) -> Self {
        Bpe {
            name,
            bpe,
            splitter: OnceLock::new(),
            make_splitter,
            caches: Mutex::new(Vec::new()),
            ascii_o200k: name == "o200k_base",
            chunks: chunks::ChunkMemo::default(),
            floors: chunks::ChunkMemo::default(),
            pieces_seen: shared::SharedPieces::default(),
        }
    }

    /// The pre-tokenizer, built on first use.
    pub(super) fn splitter(&self) -> &Splitter {
        self.splitter.get_or_init(self.make_splitter)
    }

    /// Pieces of `text` from byte `at` (a piece boundary) on. Searching the whole text
    /// from `at` equals splitting `&text[at..]`: the patterns never look behind.
    fn pieces_from<'a>(&'a self, text: &'a str, at: usize) -> Pieces<'a> {
        let cache = self
            .caches
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop()
            .unwrap_or_else(|| Scratch {
                cache: None,
                short: HashMap::default(),
                long: HashMap::default(),
            });
        Pieces {
            bpe: self,
            scratch: Some(cache),
            text,
            at,
        }
    }

    pub(super) fn pieces<'a>(&'a self, text: &'a str) -> Pieces<'a> {
        self.pieces_from(text, 0)
    }

    /// The sum of the counts of `text`'s pieces; `bom`: whether it holds U+FEFF.
    pub(super) fn count_whole(&self, text: &str, bom: bool) -> usize {
        self.pieces(text).count_to(text.len(), bom)
    }

    /// The end of the piece of `text` starting at `at` (a piece boundary), by the splitter.
    pub(super) fn regex_piece_end(&self, cache: &mut SplitCache, text: &str, at: usize) -> usize {
        let input = Input::new(text).range(at..).anchored(Anchored::Yes);
        let end = match self.splitter().find(cache, &input) {
            Some((1, end)) => {
                // The look-ahead stand-in: give back the last (whitespace) character.
                let matched = &text[at..end];
                end - matched.chars().next_back().map_or(0, char::len_utf8)
            }
            Some((_, end)) => end,
            // Unreachable (every character matches some alternative); if the patterns
            // ever leave a gap, take the rest as one piece rather than lose text.
            None => text.len(),
        };
        // Never stall, even if a match came back empty.
        if end > at {
            end
        } else {
            ceil_char_boundary(text, at + 1)
        }
    }

    /// Tokens of one piece. `bom` says whether the text holds a U+FEFF at all, so the
    /// common case pays for that check once per text, not once per piece.
    pub(super) fn piece_count(&self, piece: &str, bom: bool) -> usize {
        // Every byte is a token, so one-byte pieces (most JSON punctuation) need no BPE.
        if piece.len() == 1 {
            1
        } else if bom && piece.contains(BOM) {
            self.js_merge(piece.as_bytes()).len()
        } else {
            // A piece that is one token (most are) is settled by the first lookup.
            self.bpe.count(piece.as_bytes())
        }
    }

    /// Byte lengths of one piece's tokens.
    fn piece_token_lens(&self, piece: &str) -> Vec<usize> {
        if piece.contains(BOM) {
            self.js_merge(piece.as_bytes())
        } else {
            self.bpe.token_lens(piece.as_bytes())
        }
    }

    /// gpt-tokenizer's BPE for pieces holding U+FEFF, quirk included; token byte lengths.
    ///
    /// gpt-tokenizer looks up a byte pair's rank by decoding it with `TextDecoder`, which
    /// drops a leading byte-order mark, so pairs starting with U+FEFF get the rank of the
    /// rest (or none): `"\u{FEFF}"` alone is two tokens, not its own one. Every other
    /// piece is plain tiktoken BPE ([`RankTable::count`]); this is the same heap merge
    /// with that rank lookup, so a long run of U+FEFF cannot make it quadratic.
    pub(super) fn js_merge(&self, piece: &[u8]) -> Vec<usize> {
        let table = self.bpe;
        // The rank gpt-tokenizer finds for `key`: tokens are keyed by their decoded
        // string unless not valid UTF-8 or starting with U+FEFF (those by bytes).
        let rank = |key: &[u8]| -> Option<u32> {
            match std::str::from_utf8(key) {
                Ok(s) => {
                    let s = s.strip_prefix(BOM).unwrap_or(s);
                    if s.starts_with(BOM) {
                        None
                    } else {
                        table.rank(s.as_bytes())
                    }
                }
                Err(_) => table.rank(key),
            }
        };
        // A whole piece found by string is one token (and starts with no U+FEFF).
        if !piece.starts_with(BOM_UTF8) && table.rank(piece).is_some() {
            return vec![piece.len()];
        }
        rank_table::heap_merge(piece, rank)
    }

    /// Where the token sequence of `text` is cut after `n` tokens.
    pub(super) fn cut(&self, text: &str, n: usize) -> Cut {
        let mut cut = Cut {
            at: 0,
            piece_start: 0,
            tokens_before: 0,
            anchor: 0,
            anchor_tokens: 0,
        };
        if n == 0 {
            return cut;
        }
        let bom = text.contains(BOM);
        let mut used = 0;
        for range in self.pieces(text) {
            let piece = &text[range.clone()];
            let c = self.piece_count(piece, bom);
            if used + c > n {
                // The cut falls inside this piece: a prefix of a piece's BPE tokens is
                // what those bytes encode to, so summing token lengths finds the offset.
                let bytes: usize = self
                    .piece_token_lens(piece)
                    .into_iter()
                    .take(n - used)
                    .sum();
                cut.at = range.start + bytes;
                cut.piece_start = range.start;
                cut.tokens_before = used;
                return cut;
            }
            if piece.chars().any(|c| !is_js_whitespace(c)) {
                cut.anchor = range.start;
                cut.anchor_tokens = used;
            }
            used += c;
            cut.at = range.end;
            cut.piece_start = range.end;
            cut.tokens_before = used;
            if used == n {
                break;
            }
        }
        cut
    }

    /// Tokens of `&text[..end]` counted on its own, given a cut of `text` at or after
    /// `end` whose crossing piece starts at or before `end`.
    ///
    /// Cutting the text can change its split only through `\s+$`, which now matches a
    /// whitespace run that ends at the cut. So pieces starting before the last piece
    /// holding a non-whitespace character before `end` are unchanged, and only the tail
    /// from there is split again.
    pub(super) fn count_prefix(&self, text: &str, end: usize, cut: &Cut) -> usize {
        let head = &text[..end];
        let (from, tokens) = if cut.piece_start < end
            && head[cut.piece_start..]
                .chars()
                .any(|c| !is_js_whitespace(c))
        {
            (cut.piece_start, cut.tokens_before)
        } else {
            (cut.anchor, cut.anchor_tokens)
        };
        let from = from.min(end);
        let bom = head[from..].contains(BOM);
        tokens
            + self
                .pieces_from(head, from)
                .map(|r| self.piece_count(&head[r], bom))
                .sum::<usize>()
    }

    /// Tokens of `&text[start..]` counted on its own, given a cut of `text` at or before
    /// `start` and the token count of all of `text`.
    ///
    /// Splitting from `start` and splitting the whole text agree again from the first
    /// piece end they share (same position, same text ahead), so walk both until then and
    /// take the rest from the whole text's total.
    pub(super) fn count_suffix(&self, text: &str, start: usize, cut: &Cut, total: usize) -> usize {
        let mut whole = self.pieces_from(text, cut.piece_start);
        let (mut whole_end, mut whole_tokens) = (cut.piece_start, cut.tokens_before);
        let bom = text[cut.piece_start..].contains(BOM);
        let mut tail = self.pieces_from(text, start);
        let (mut tail_end, mut tail_tokens) = (start, 0);
        loop {
            if tail_end == whole_end {
                return tail_tokens + total.saturating_sub(whole_tokens);
            }
            if tail_end < whole_end {
                match tail.next() {
                    Some(r) => {
                        tail_end = r.end;
                        tail_tokens += self.piece_count(&text[r], bom);
                    }
                    None => return tail_tokens,
                }
            } else {
                match whole.next() {
                    Some(r) => {
                        whole_end = r.end;
                        whole_tokens += self.piece_count(&text[r], bom);
                    }
                    // Unreachable: the whole text's pieces end where the tail's do.
                    None => return tail_tokens,
                }
            }
        }
    }
}

/// A cut of a token sequence after some number of tokens.
pub(super) struct Cut {
    /// Byte offset of the cut (possibly inside a char).
    pub(super) at: usize,
    /// Start of the piece the cut falls in (or `at` itself, on a piece boundary)...
    piece_start: usize,
    /// ...and the tokens before it.
    tokens_before: usize,
    /// Start of the last whole piece before `piece_start` holding a non-whitespace
    /// character (0 if none)...
    anchor: usize,
    /// ...and the tokens before it.
    anchor_tokens: usize,
}

impl Tokenizer for Bpe {
    fn name(&self) -> &str {
        self.name
    }

    /// A text of some length is counted by chunks, each remembered ([`chunks`]; a text
    /// holding U+FEFF is counted whole, as its pieces' counts depend on the whole text).
    fn count(&self, text: &str) -> usize {
        let bom = text.contains(BOM);
        if !bom && chunks::worth_it(text) {
            // One walk over the whole text's pieces, moved to each chunk not remembered
            // (chunks end where pieces do): one scratch for the text, not one per chunk.
            let mut pieces = self.pieces(text);
            return self.chunks.count(text, |chunk| {
                let start = chunk.as_ptr() as usize - text.as_ptr() as usize;
                pieces.at = start;
                pieces.count_to(start + chunk.len(), false)
            });
        }
        self.count_whole(text, bom)
    }

    /// Counted whole: remembering its chunks would cost about 15% more than counting it.
    fn count_once(&self, text: &str) -> usize {
        self.count_whole(text, text.contains(BOM))
    }

    /// Beyond the trait's contract, the prefix counted on its own is also at most
    /// `max_tokens` tokens: splitting a cut text can differ at the cut (say `they'll`
    /// cut to `they'`), and where it would cost more the cut backs off a token.
    fn prefix_len(&self, text: &str, max_tokens: usize) -> usize {
        let (mut n, mut steps) = (max_tokens, backoff_steps());
        loop {
            let cut = self.cut(text, n);
            let end = floor_char_boundary(text, cut.at);
            if n == 0 || end == text.len() || self.count_prefix(text, end, &cut) <= max_tokens {
                return end;
            }
            n = n.saturating_sub(steps.next().expect("endless"));
        }
    }

    /// As with `prefix_len`, the suffix counted on its own is at most `max_tokens`.
    fn suffix_start(&self, text: &str, max_tokens: usize) -> usize {
        if max_tokens == 0 {
            return text.len();
        }
        let total = self.count(text);
        let mut skip = match total.checked_sub(max_tokens) {
            Some(skip) if skip > 0 => skip,
            _ => return 0,
        };
        let mut steps = backoff_steps();
        loop {
            let cut = self.cut(text, skip);
            let start = ceil_char_boundary(text, cut.at);
            if start == text.len() || self.count_suffix(text, start, &cut, total) <= max_tokens {
                return start;
            }
            skip = skip
                .saturating_add(steps.next().expect("endless"))
                .min(total);
        }
    }

    fn count_remembered(&self, text: &str) -> Option<usize> {
        if text.contains(BOM) || !chunks::worth_it(text) {
            return None;
        }
        self.chunks.remembered(text)
    }

    fn warm_up(&self) {
        self.bpe.warm_up();
    }

    /// Cut where [`Tokenizer::count`]'s remembered chunks end ([`chunks`]), as it does:
    /// not in a text holding U+FEFF, which is counted whole.
    fn additive_parts<'a>(&self, text: &'a str, min_bytes: usize) -> Vec<&'a str> {
        if text.len() < 2 * min_bytes || text.contains(BOM) {
            return vec![text];
        }
        chunks::chunks(text, min_bytes).collect()
    }

    /// By remembered chunks too (the pieces, as counts, add up across [`chunks`]' splits).
    fn count_floor(&self, text: &str) -> usize {
        if chunks::worth_it(text) {
            return self.floors.count(text, |chunk| self.pieces(chunk).count());
        }
        self.pieces(text).count()
    }

    fn fits(&self, text: &str, max_tokens: usize) -> bool {
        let bom = text.contains(BOM);
        let mut used = 0;
        let mut pieces = self.pieces(text);
        while let Some(r) = pieces.next() {
            used += pieces.piece_count(r, bom);
            if used > max_tokens {
                return false;
            }
        }
        true
    }
}

/// Token-by-token back-off steps of a cut before it doubles its steps.
pub(super) const LINEAR_BACKOFF: usize = 64;

/// The steps, in tokens, by which a cut that does not fit backs off: one token at a time,
/// so that a larger budget never keeps less text (one step nearly always does); after
/// [`LINEAR_BACKOFF`] steps, doubling bounds the work should some text need more.
pub(super) fn backoff_steps() -> impl Iterator<Item = usize> {
    std::iter::repeat_n(1, LINEAR_BACKOFF).chain(std::iter::successors(Some(2usize), |s| {
        Some(s.saturating_mul(2))
    }))
}

/// JavaScript's `\s`, the reference's notion of whitespace ([`super::patterns::JS_WS`]).
pub(super) fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// Pre-tokenizer pieces of a text, as byte ranges.
pub(super) struct Pieces<'a> {
    bpe: &'a Bpe,
    /// Taken from `bpe.caches` and given back on drop (`None` only while dropping).
    scratch: Option<Scratch>,
    text: &'a str,
    at: usize,
}

/// What a walk over pieces reuses from one text to the next.
pub(super) struct Scratch {
    /// The splitter's search cache, made with the splitter on its first use.
    cache: Option<SplitCache>,
    /// Token counts of pieces of two to [`SHORT_PIECE_BYTES`] bytes seen before, keyed by
    /// their bytes and length packed into one integer ([`short_key`]). A text's pieces
    /// repeat (keys, punctuation runs, common words), and this small table answers from
    /// cache where the encoding's rank table of 200,000 tokens misses it.
    short: HashMap<u128, u32, BuildFxHasher>,
    /// The same for longer pieces, up to [`MEMO_PIECE_BYTES`].
    long: HashMap<Box<[u8]>, u32, BuildFxHasher>,
}

/// Pieces remembered per table of a [`Scratch`] (a table starts over when full), and the
/// longest remembered (a long piece is rare, and its BPE outweighs a lookup anyway).
pub(super) const MEMO_PIECES: usize = 4096;
pub(super) const MEMO_PIECE_BYTES: usize = 64;
/// Pieces up to this long are keyed by [`short_key`].
pub(super) const SHORT_PIECE_BYTES: usize = 15;

/// A piece of at most [`SHORT_PIECE_BYTES`] as one integer: its bytes, then its length in
/// the top byte (so trailing NULs still tell pieces apart).
pub(super) fn short_key(piece: &[u8]) -> u128 {
    let mut key = [0u8; 16];
    key[..piece.len()].copy_from_slice(piece);
    key[15] = piece.len() as u8;
    u128::from_le_bytes(key)
}

/// [`short_key`] of `text[range]`, read as one 16-byte load where the text runs on that
/// far: bytes copied into a key and read back as an integer stall the load that follows
/// (a quarter of a count's time went there).
pub(super) fn short_key_at(text: &[u8], range: Range<usize>) -> u128 {
    let len = range.len();
    match text.get(range.start..range.start + 16) {
        Some(window) => {
            let bytes = u128::from_le_bytes(window.try_into().expect("16 bytes"));
            (bytes & ((1u128 << (8 * len)) - 1)) | ((len as u128) << 120)
        }
        None => short_key(&text[range]),
    }
}

impl Pieces<'_> {
    /// The tokens of the pieces from here to `end` (a piece boundary, or the text's end).
    pub(super) fn count_to(&mut self, end: usize, bom: bool) -> usize {
        let mut total = 0;
        while self.at < end {
            let Some(r) = self.next() else { break };
            total += self.piece_count(r, bom);
        }
        total
    }

    /// Tokens of the piece at `range` ([`Bpe::piece_count`], remembered).
    pub(super) fn piece_count(&mut self, range: Range<usize>, bom: bool) -> usize {
        let piece = &self.text[range.clone()];
        let bytes = piece.as_bytes();
        if bytes.len() == 1 {
            return 1;
        }
        let scratch = self.scratch.as_mut().expect("scratch until dropped");
        if bytes.len() <= SHORT_PIECE_BYTES {
            let key = short_key_at(self.text.as_bytes(), range);
            if let Some(&n) = scratch.short.get(&key) {
                return n as usize;
            }
            let n = if bom {
                self.bpe.piece_count(piece, bom)
            } else {
                let bpe = self.bpe;
                bpe.pieces_seen.short(key, || bpe.piece_count(piece, false))
            };
            if scratch.short.len() >= MEMO_PIECES {
                scratch.short.clear();
            }
            scratch.short.insert(key, n as u32);
            return n;
        }
        if bytes.len() > MEMO_PIECE_BYTES {
            return self.bpe.piece_count(piece, bom);
        }
        if let Some(&n) = scratch.long.get(bytes) {
            return n as usize;
        }
        let n = if bom {
            self.bpe.piece_count(piece, bom)
        } else {
            let bpe = self.bpe;
            bpe.pieces_seen
                .long(bytes, || bpe.piece_count(piece, false))
        };
        if scratch.long.len() >= MEMO_PIECES {
            scratch.long.clear();
        }
        scratch.long.insert(bytes.into(), n as u32);
        n
    }
}

impl Drop for Pieces<'_> {
    fn drop(&mut self) {
        if let Some(cache) = self.scratch.take() {
            self.bpe
                .caches
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(cache);
        }
    }
}

impl Iterator for Pieces<'_> {
    type Item = Range<usize>;

    fn next(&mut self) -> Option<Range<usize>> {
        if self.at >= self.text.len() {
            return None;
        }
        let start = self.at;
        if self.bpe.ascii_o200k
            && let Some(end) = o200k_ascii_piece(self.text.as_bytes(), start)
        {
            self.at = end;
            return Some(start..end);
        }
        let scratch = self.scratch.as_mut().expect("scratch until dropped");
        let cache = scratch.cache.get_or_insert_with(SplitCache::default);
        let end = self.bpe.regex_piece_end(cache, self.text, start);
        self.at = end;
        Some(start..end)
    }
}

/// The end of o200k's piece starting at `at`, found without the regex where the text it
/// looks at is ASCII; `None` (use the regex) where any byte it looked at is not.
///
/// Within ASCII the pattern's classes are plain: letters `A-Z` (`\p{Lu}`) and `a-z`
/// (`\p{Ll}`; no ASCII character is `Lt`, `Lm`, `Lo` or `M`), digits `0-9` (`\p{N}`),
/// JavaScript whitespace `\t \n \x0B \x0C \r` and space, and everything else is
/// "punctuation". Its alternatives are tried in the regex's order, each as the regex's
/// leftmost-first (backtracking-order) semantics decide it:
///
/// 1. `[^\r\n\p{L}\p{N}]?[Lu…]*[Ll…]+(?:contraction)?` — an optional prefix character,
///    capitals, then at least one lower-case letter;
/// 2. `[^\r\n\p{L}\p{N}]?[Lu…]+[Ll…]*(?:contraction)?` — capitals not followed by
///    lower case (else 1 had matched);
/// 3. `\p{N}{1,3}`;
/// 4. ` ?[^\s\p{L}\p{N}]+[\r\n/]*`;
/// 5. `\s*[\r\n]+` — a whitespace run up to and including its last line break;
/// 6. `\s+$` — a whitespace run that ends the text;
/// 7. `\s+(?!\S)`, then `\s+`: all but the last character of a whitespace run of two or
///    more, else the one character.
///
/// A test compares this with the regex on random and corpus text.
///
/// Why a class table: a count's time is half this walk, and the piece kinds alternate too
/// unpredictably for per-byte `matches!` chains; one lookup per byte answers every class
/// at once, and only the byte a piece stops at needs the "is it ASCII" check (every byte
/// inside was classed as ASCII on the way).
#[inline]
pub(super) fn o200k_ascii_piece(text: &[u8], at: usize) -> Option<usize> {
    let class = |i: usize| text.get(i).map_or(END, |&b| CLASS[b as usize]);
    let run = |mut i: usize, of: u8| {
        while class(i) & of != 0 {
            i += 1;
        }
        i
    };
    // A piece stops at the text's end or at a byte that cannot go on with it; where that
    // byte is not ASCII, a letter, digit, mark or space of Unicode might have, so the
    // regex decides.
    let ends_ascii = |end: usize| (class(end) & NOT_ASCII == 0).then_some(end);
    let c0 = class(at);
    if c0 & NOT_ASCII != 0 || c0 == END {
        return None;
    }
    // 1 and 2: letters, after an optional prefix that is no letter, digit or break.
    let letters = at + usize::from(c0 & (UPPER | LOWER | DIGIT | BREAK) == 0);
    if class(letters) & (UPPER | LOWER) != 0 {
        let lower_end = run(run(letters, UPPER), LOWER);
        let mut end = lower_end;
        if text.get(end) == Some(&b'\'') {
            let c = |i: usize| text.get(end + i).map(u8::to_ascii_lowercase);
            match (c(1), c(2)) {
                (Some(b's' | b'd' | b'm' | b't'), _) => end += 2,
                (Some(b'l'), Some(b'l')) | (Some(b'v' | b'r'), Some(b'e')) => end += 3,
                _ => {}
            }
        }
        return ends_ascii(end);
    }
    // 3. At most three digits: a run of a million is walked three at a time, not whole.
    if c0 & DIGIT != 0 {
        let mut end = at + 1;
        while end < at + 3 && class(end) & DIGIT != 0 {
            end += 1;
        }
        return ends_ascii(end);
    }
    // 4.
    let space = usize::from(text[at] == b' ');
    let punct_end = run(at + space, PUNCT);
    if punct_end > at + space {
        return ends_ascii(run(punct_end, BREAK | SLASH));
    }
    if c0 & SPACE == 0 {
        return None;
    }
    // The whitespace run, and where its last line break ends.
    let (mut ws_end, mut after_break) = (at, None);
    while class(ws_end) & SPACE != 0 {
        if class(ws_end) & BREAK != 0 {
            after_break = Some(ws_end + 1);
        }
        ws_end += 1;
    }
    ends_ascii(ws_end)?;
    Some(match after_break {
        // 5.
        Some(end) => end,
        // 6, then 7.
        None if ws_end == text.len() => ws_end,
        None if ws_end - at >= 2 => ws_end - 1,
        None => at + 1,
    })
}

/// Classes of a byte, for [`o200k_ascii_piece`].
const UPPER: u8 = 1;
const LOWER: u8 = 2;
const DIGIT: u8 = 4;
/// JavaScript whitespace within ASCII: `\t \n \x0B \x0C \r` and space.
const SPACE: u8 = 8;
/// `\r` and `\n` (also `SPACE`).
const BREAK: u8 = 16;
/// ASCII that is no letter, digit or whitespace.
const PUNCT: u8 = 32;
/// `/` (also `PUNCT`), which o200k's punctuation piece takes after its line breaks.
const SLASH: u8 = 64;
const NOT_ASCII: u8 = 128;
/// Past the text's end: no class, so every run stops there.
const END: u8 = 0;

static CLASS: [u8; 256] = {
    let mut table = [NOT_ASCII; 256];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        table[b] = match c {
            b'A'..=b'Z' => UPPER,
            b'a'..=b'z' => LOWER,
            b'0'..=b'9' => DIGIT,
            b'\r' | b'\n' => SPACE | BREAK,
            b'\t' | 0x0B | 0x0C | b' ' => SPACE,
            b'/' => PUNCT | SLASH,
            _ => PUNCT,
        };
        b += 1;
    }
    table
};
