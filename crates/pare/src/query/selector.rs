//! JSONPath selectors (RFC 9535, the subset pare needs), matched incrementally.
//!
//! Why incremental: ops run during one depth-first walk over the payload, so pare never
//! evaluates a path against the whole document. All selectors of a policy are compiled into
//! one small NFA ([`SelectorSet`]); each node's [`MatchState`] is a fixed bitset computed from
//! its parent's with a few bit operations, and a dead state lets the walk skip a subtree.
//!
//! Supported: `$`, `.name`, `['name']`/`["name"]`, `.*`/`[*]`, `[3]`, `[-1]`, unions
//! (`['a','b']`, `[0,2]`), and the descendant forms `..name`, `..*`, `..[…]`. Not supported
//! (precise errors): filter selectors `[?…]`, slices `[1:3]`, function extensions.
//! Extension: dotted names may contain `-` after their first character (`$.memory-123`), so
//! ids need no brackets; in RFC 9535 that is a syntax error, so no valid query changes meaning.
//!
//! Extension: key patterns. A dotted name with a `*` in it is a pattern over member keys:
//! `$..*_url` (every member whose key ends in `_url`, at any depth), `$.time.created_*`,
//! `$.*id*`, `$.time.2024-*` (a pattern may start with a digit or `-`, a name may not). `*`
//! matches any run of characters, none included; it is the only pattern character (no `?`,
//! no classes), and `**` is refused (`*` already spans any run; any depth is `..`). A pattern
//! matches object members only, never array elements, unlike the lone `*`. In RFC 9535 a
//! `*` inside a dotted name is a syntax error, so again no valid query changes meaning.
//! In brackets, `['created_*']` stays the literal key `created_*`, as RFC 9535 says; the
//! bracketed pattern is `[glob('created_*')]`, which also takes keys a dotted name cannot
//! spell and mixes with other selectors in a union (`$..[glob('* at'), 'id']`); without a
//! `*` it is one exact name. There is no escape for a literal `*`: a `*` in a pattern matches
//! a `*` in a key too, and the literal form `['a*b']` matches exactly that key. Matching stays
//! one automaton step per key: a pattern is checked as prefix, suffix and, between stars,
//! pieces found in order — no regex.
//!
//! ```
//! use pare::query::selector::{Selector, SelectorSet, Step};
//! let set = SelectorSet::new(vec![Selector::parse("$..created_at").unwrap()]).unwrap();
//! let items = set.step(&set.root(), Step::Key("items"));
//! let first = set.step(&items, Step::Index { index: 0, len: 2 });
//! let leaf = set.step(&first, Step::Key("created_at"));
//! assert!(set.matches(&leaf, 0) && !set.matches(&first, 0));
//! ```

use std::fmt;

/// A path that does not parse (or a policy with too many of them).
///
/// `Display` is written by hand: `thiserror` would take a field named `source` for the
/// error's cause, which a `String` cannot be.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectorError {
    /// The path as written.
    pub source: String,
    /// 1-based character position of the problem.
    pub position: usize,
    /// What is wrong there, e.g. ``unclosed `[` ``.
    pub message: String,
}

impl fmt::Display for SelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid selector `{}` at character {}: {}",
            self.source, self.position, self.message
        )
    }
}

impl std::error::Error for SelectorError {}

/// One step of the walk from a node to a child.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// An object member.
    Key(&'a str),
    /// An array element; `len` is the array's length, needed for negative indices.
    Index {
        /// The element's position, from 0.
        index: usize,
        /// The array's length, which a negative index counts back from.
        len: usize,
    },
}

/// One selector inside a segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// `name`, `['name']`: an object member.
    Name(String),
    /// `[3]`, `[-1]`: an array element, negative counting from the end.
    Index(i64),
    /// `*`: every member or element.
    Wildcard,
    /// `created_*`, `glob('* at')`: the object members whose key matches the pattern.
    Glob(Glob),
}

/// A key pattern: `*` matches any run of characters (none included); every other character
/// matches itself.
///
/// ```
/// use pare::query::selector::Glob;
/// let g = Glob::new("*_url");
/// assert!(g.matches("html_url") && g.matches("_url") && !g.matches("url"));
/// assert!(Glob::new("a*b*c").matches("a-b-b-c") && !Glob::new("a*b*c").matches("acb"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Glob {
    pattern: String,
    /// The literal pieces between the stars: the first must start the key, the last must end
    /// it, the others must occur in between, in order. One piece: no star, an exact name.
    pieces: Vec<Box<str>>,
}

impl Glob {
    /// Compiles `pattern` (for `glob('…')`, the text inside the quotes). `**` works as `*`
    /// here; selectors refuse it.
    pub fn new(pattern: &str) -> Glob {
        let all: Vec<&str> = pattern.split('*').collect();
        let last = all.len() - 1;
        // Empty inner pieces (from `**`) constrain nothing.
        let pieces = all
            .iter()
            .enumerate()
            .filter(|&(i, p)| i == 0 || i == last || !p.is_empty())
            .map(|(_, p)| (*p).into())
            .collect();
        Glob {
            pattern: pattern.to_owned(),
            pieces,
        }
    }

    /// The pattern as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether `key` matches. Taking each inner piece at its leftmost occurrence is exact
    /// for patterns whose only operator is `*`: an earlier match never leaves less room.
    pub fn matches(&self, key: &str) -> bool {
        let [first, inner @ .., last] = &self.pieces[..] else {
            return *self.pieces[0] == *key;
        };
        if key.len() < first.len() + last.len() || !key.starts_with(&**first) {
            return false;
        }
        if !key.ends_with(&**last) {
            return false;
        }
        // Both bounds are char boundaries: a piece matched there.
        let mut rest = &key[first.len()..key.len() - last.len()];
        for piece in inner {
            match rest.find(&**piece) {
                Some(i) => rest = &rest[i + piece.len()..],
                None => return false,
            }
        }
        true
    }
}

/// A segment: `.x`/`[…]` (children) or `..x`/`..[…]` (descendants, the node itself included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// `..`: the items are matched at any depth below the node, and at the node itself.
    pub descendant: bool,
    /// The selectors of the segment (a union when more than one), in the order written.
    pub items: Vec<Item>,
}

/// A parsed JSONPath query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    source: String,
    segments: Vec<Segment>,
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl Selector {
    /// Parses a path that starts with `$` (see the [module docs](self) for what is supported).
    pub fn parse(src: &str) -> Result<Selector, SelectorError> {
        let mut p = Parser {
            src,
            chars: src.chars().collect(),
            pos: 0,
        };
        let segments = p.query()?;
        Ok(Selector {
            source: src.to_owned(),
            segments,
        })
    }

    /// The path as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The segments after `$`, in order; none for `$` itself.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Selectors like `$..x` that can match at any depth.
    pub(crate) fn has_descendant(&self) -> bool {
        self.segments.iter().any(|s| s.descendant)
    }
}

struct Parser<'s> {
    src: &'s str,
    chars: Vec<char>,
    pos: usize,
}

const BLANKS: [char; 4] = [' ', '\t', '\n', '\r'];

fn is_name_first(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || !c.is_ascii()
}

fn is_name_char(c: char) -> bool {
    // `-` is pare's extension (see the module docs).
    is_name_first(c) || c.is_ascii_digit() || c == '-'
}

impl Parser<'_> {
    fn err(&self, at: usize, message: impl Into<String>) -> SelectorError {
        SelectorError {
            source: self.src.to_owned(),
            position: at + 1,
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_blanks(&mut self) {
        while self.peek().is_some_and(|c| BLANKS.contains(&c)) {
            self.pos += 1;
        }
    }

    fn query(&mut self) -> Result<Vec<Segment>, SelectorError> {
        match self.peek() {
            None => return Err(self.err(0, "empty path; paths start with `$` (the root)")),
            Some('$') => self.pos = 1,
            Some(c) if BLANKS.contains(&c) => {
                return Err(self.err(0, "leading whitespace is not allowed"));
            }
            Some(_) => {
                return Err(self.err(0, "paths must start with `$` (the root), e.g. `$.name`"));
            }
        }
        let mut segments = Vec::new();
        loop {
            // RFC 9535 allows blanks between segments, not after the last one.
            let blank_start = self.pos;
            self.skip_blanks();
            let Some(c) = self.peek() else {
                if self.pos > blank_start {
                    return Err(self.err(blank_start, "trailing whitespace is not allowed"));
                }
                return Ok(segments);
            };
            match c {
                '.' if self.chars.get(self.pos + 1) == Some(&'.') => {
                    self.pos += 2;
                    let items = match self.peek() {
                        Some('[') => self.bracketed()?,
                        _ => self.dotted("..")?,
                    };
                    segments.push(Segment {
                        descendant: true,
                        items,
                    });
                }
                '.' => {
                    self.pos += 1;
                    if self.peek() == Some('[') {
                        return Err(self.err(
                            self.pos,
                            "unexpected `[` after `.`; write `$[…]` or `$.name`, not `$.[…]`",
                        ));
                    }
                    let items = self.dotted(".")?;
                    segments.push(Segment {
                        descendant: false,
                        items,
                    });
                }
                '[' => {
                    let items = self.bracketed()?;
                    segments.push(Segment {
                        descendant: false,
                        items,
                    });
                }
                c => {
                    return Err(self.err(
                        self.pos,
                        format!("unexpected `{c}`; expected `.`, `..` or `[`"),
                    ));
                }
            }
        }
    }

    /// After `.` or `..`: `*`, a member-name shorthand or a key pattern (see the module docs).
    fn dotted(&mut self, after: &str) -> Result<Vec<Item>, SelectorError> {
        let expected = if after == ".." {
            "a member name, `*` or `[`"
        } else {
            "a member name or `*`"
        };
        let is_token_char = |c: char| c == '*' || is_name_char(c);
        match self.peek() {
            Some(c) if is_token_char(c) => {
                let start = self.pos;
                while self.peek().is_some_and(is_token_char) {
                    self.pos += 1;
                }
                let token: String = self.chars[start..self.pos].iter().collect();
                if self.peek() == Some('(') {
                    return Err(self.err(self.pos, "function extensions are not supported"));
                }
                if self.peek() == Some('?') {
                    return Err(self.err(
                        self.pos,
                        "`?` is not a pattern character; only `*` is (e.g. `$..*_url`)",
                    ));
                }
                if token == "*" {
                    return Ok(vec![Item::Wildcard]);
                }
                if token.contains('*') {
                    let glob = self.glob(&token, start)?;
                    return Ok(vec![Item::Glob(glob)]);
                }
                if !is_name_first(c) {
                    let hint = if token.parse::<i64>().is_ok() {
                        format!("`[{token}]` for an index or `['{token}']` for a member")
                    } else {
                        format!("`['{token}']`")
                    };
                    return Err(self.err(
                        start,
                        format!("a name after `{after}` cannot start with `{c}`; write {hint}"),
                    ));
                }
                Ok(vec![Item::Name(token)])
            }
            Some(c) => Err(self.err(
                self.pos,
                format!("expected {expected} after `{after}`, found `{c}`"),
            )),
            None => Err(self.err(self.pos, format!("expected {expected} after `{after}`"))),
        }
    }

    /// A key pattern whose text starts at character `at` (its first character, or for the
    /// bracketed form the opening quote, since escapes shift what follows).
    fn glob(&self, pattern: &str, at: usize) -> Result<Glob, SelectorError> {
        if let Some(i) = pattern.find("**") {
            let offset = if self.chars.get(at).is_some_and(|&c| c == '\'' || c == '"') {
                0
            } else {
                pattern[..i].chars().count()
            };
            return Err(self.err(
                at + offset,
                "`**` is not a pattern; one `*` already matches any run of characters \
                 (for any depth, use `..`)",
            ));
        }
        Ok(Glob::new(pattern))
    }

    /// `glob(` quoted-pattern `)`, inside brackets; `self.pos` is at the `g`.
    fn glob_call(&mut self) -> Result<Item, SelectorError> {
        self.pos += "glob(".len();
        self.skip_blanks();
        let at = self.pos;
        let (pattern, end) = match self.peek() {
            Some(q @ ('\'' | '"')) => {
                parse_quoted(&self.chars, at, q).map_err(|(at, msg)| self.err(at, msg))?
            }
            _ => {
                return Err(self.err(
                    at,
                    "expected a quoted pattern after `glob(`, e.g. `glob('*_url')`",
                ));
            }
        };
        self.pos = end;
        self.skip_blanks();
        if self.peek() != Some(')') {
            return Err(self.err(self.pos, "expected `)` after the pattern of `glob(…)`"));
        }
        self.pos += 1;
        let glob = self.glob(&pattern, at)?;
        // Without a star the pattern is one exact key: matched like any other name.
        if !pattern.contains('*') {
            return Ok(Item::Name(pattern));
        }
        Ok(Item::Glob(glob))
    }

    /// `[` selector (`,` selector)* `]`, with blanks allowed around selectors.
    fn bracketed(&mut self) -> Result<Vec<Item>, SelectorError> {
        let open = self.pos;
        self.pos += 1;
        let mut items = Vec::new();
        loop {
            self.skip_blanks();
            let at = self.pos;
            let item = match self.peek() {
                None => return Err(self.err(open, "unclosed `[`")),
                Some(q @ ('\'' | '"')) => {
                    let (name, end) =
                        parse_quoted(&self.chars, at, q).map_err(|(at, msg)| self.err(at, msg))?;
                    self.pos = end;
                    Item::Name(name)
                }
                Some('*') => {
                    self.pos += 1;
                    Item::Wildcard
                }
                Some(c) if c == '-' || c.is_ascii_digit() => Item::Index(self.index()?),
                Some(':') => return Err(self.err(at, "array slices are not supported")),
                Some('?') => {
                    return Err(self.err(
                        at,
                        "filter selectors are not supported in paths; use the filter op's `where`",
                    ));
                }
                Some(']') if items.is_empty() => {
                    return Err(self.err(at, "empty brackets; expected a name, index or `*`"));
                }
                Some(']') => return Err(self.err(at, "expected a selector after `,`")),
                Some('g') if self.chars[at..].starts_with(&['g', 'l', 'o', 'b', '(']) => {
                    self.glob_call()?
                }
                Some(c) if is_name_first(c) => {
                    return Err(self.err(at, "names in brackets must be quoted, e.g. `['name']`"));
                }
                Some(c) => {
                    return Err(self.err(
                        at,
                        format!("unexpected `{c}`; expected a quoted name, an index or `*`"),
                    ));
                }
            };
            items.push(item);
            self.skip_blanks();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(']') => {
                    self.pos += 1;
                    return Ok(items);
                }
                Some(':') => return Err(self.err(self.pos, "array slices are not supported")),
                Some(c) => {
                    return Err(self.err(self.pos, format!("expected `,` or `]`, found `{c}`")));
                }
                None => return Err(self.err(open, "unclosed `[`")),
            }
        }
    }

    /// An RFC 9535 `int`: `0` or `-?[1-9][0-9]*`, within ±(2^53 − 1).
    fn index(&mut self) -> Result<i64, SelectorError> {
        const MAX: i64 = (1 << 53) - 1;
        let start = self.pos;
        let negative = self.peek() == Some('-');
        if negative {
            self.pos += 1;
        }
        let digits_start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let digits: String = self.chars[digits_start..self.pos].iter().collect();
        if digits.is_empty() {
            return Err(self.err(self.pos, "expected a digit after `-`"));
        }
        if digits.len() > 1 && digits.starts_with('0') {
            return Err(self.err(start, "indices cannot have leading zeros"));
        }
        if negative && digits == "0" {
            return Err(self.err(start, "`-0` is not a valid index"));
        }
        match digits.parse::<i64>() {
            Ok(n) if n <= MAX => Ok(if negative { -n } else { n }),
            _ => Err(self.err(start, "index out of range (at most 2^53 - 1)")),
        }
    }
}

/// Parse a quoted string starting at `chars[start]` (the quote `q`), with RFC 9535 escapes
/// (`\b \f \n \r \t \/ \\ \uXXXX`, surrogate pairs, and the enclosing quote). Returns the
/// string and the index after the closing quote, or an error's 0-based index and message.
/// Shared with the filter expressions so both quote alike.
pub(super) fn parse_quoted(
    chars: &[char],
    start: usize,
    q: char,
) -> Result<(String, usize), (usize, String)> {
    let mut out = String::new();
    let mut i = start + 1;
    loop {
        let Some(&c) = chars.get(i) else {
            return Err((start, "unclosed string".into()));
        };
        if c == q {
            return Ok((out, i + 1));
        }
        if c == '\\' {
            let Some(&e) = chars.get(i + 1) else {
                return Err((start, "unclosed string".into()));
            };
            let simple = match e {
                'b' => Some('\u{8}'),
                'f' => Some('\u{c}'),
                'n' => Some('\n'),
                'r' => Some('\r'),
                't' => Some('\t'),
                '/' => Some('/'),
                '\\' => Some('\\'),
                _ if e == q => Some(q),
                _ => None,
            };
            if let Some(s) = simple {
                out.push(s);
                i += 2;
                continue;
            }
            if e != 'u' {
                let hint = if e == '\'' || e == '"' {
                    format!(" (inside {q}…{q} write {e} unescaped)")
                } else {
                    String::new()
                };
                return Err((i, format!("invalid escape `\\{e}`{hint}")));
            }
            let hi = hex4(chars, i + 2).ok_or((i, "expected 4 hex digits after `\\u`".into()))?;
            i += 6;
            let code = if (0xD800..0xDC00).contains(&hi) {
                let lo = (chars.get(i) == Some(&'\\') && chars.get(i + 1) == Some(&'u'))
                    .then(|| hex4(chars, i + 2))
                    .flatten()
                    .filter(|lo| (0xDC00..0xE000).contains(lo))
                    .ok_or((i - 6, "unpaired surrogate in `\\u` escape".into()))?;
                i += 6;
                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
            } else {
                hi
            };
            let ch =
                char::from_u32(code).ok_or((i - 6, "unpaired surrogate in `\\u` escape".into()))?;
            out.push(ch);
            continue;
        }
        if c < ' ' {
            return Err((i, "control characters must be escaped in strings".into()));
        }
        out.push(c);
        i += 1;
    }
}

fn hex4(chars: &[char], at: usize) -> Option<u32> {
    let mut digits = [0u8; 4];
    for (d, c) in digits.iter_mut().zip(chars.get(at..at + 4)?) {
        *d = u8::try_from(*c).ok()?;
    }
    crate::scan::hex4(&digits, 0)
}

/// Most NFA positions a [`SelectorSet`] holds: a selector of `n` segments takes `n + 1`.
pub(crate) const MAX_POSITIONS: usize = 256;
const WORDS: usize = MAX_POSITIONS / 64;

/// The match state of one node: which NFA positions of all selectors are live. Position
/// `k` of a selector is live when its first `k` segments lead to this node; its last
/// position live means the selector selects the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct MatchState([u64; WORDS]);

impl MatchState {
    fn get(&self, bit: usize) -> bool {
        self.0[bit / 64] & (1 << (bit % 64)) != 0
    }
    fn set(&mut self, bit: usize) {
        self.0[bit / 64] |= 1 << (bit % 64);
    }
    fn and(&self, other: &MatchState) -> MatchState {
        MatchState(std::array::from_fn(|i| self.0[i] & other.0[i]))
    }
    fn or_assign(&mut self, other: &MatchState) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a |= b;
        }
    }
    /// Every live position advanced by one.
    fn shl1(&self) -> MatchState {
        MatchState(std::array::from_fn(|i| {
            (self.0[i] << 1) | if i > 0 { self.0[i - 1] >> 63 } else { 0 }
        }))
    }
    fn is_zero(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }
    /// Calls `f` with every live position, lowest first.
    fn for_each(&self, mut f: impl FnMut(usize)) {
        for (w, &word) in self.0.iter().enumerate() {
            let mut rest = word;
            while rest != 0 {
                f(w * 64 + rest.trailing_zeros() as usize);
                rest &= rest - 1;
            }
        }
    }
}

/// All selectors of a policy, compiled into one NFA over a global numbering of positions.
#[derive(Clone, Debug)]
pub struct SelectorSet {
    selectors: Vec<Selector>,
    /// The final (selecting) position of each selector.
    finals: Vec<usize>,
    /// The selector owning each position.
    owner: Vec<usize>,
    root: MatchState,
    final_mask: MatchState,
    /// Positions of descendant segments: they stay live in every child.
    descendant: MatchState,
    /// Positions whose segment takes any member / any element (`*`).
    any_key: MatchState,
    any_index: MatchState,
    /// Positions whose segment takes specific names / key patterns / indices.
    named: MatchState,
    globbed: MatchState,
    indexed: MatchState,
    /// Per position, its range in `names` / `globs` / `indices` (flat, so a lookup is one
    /// indirection).
    name_range: Vec<(u32, u32)>,
    glob_range: Vec<(u32, u32)>,
    index_range: Vec<(u32, u32)>,
    names: Vec<Box<str>>,
    globs: Vec<Glob>,
    indices: Vec<i64>,
}

impl SelectorSet {
    /// Compiles `selectors`; each is named afterwards by its index in this list. Fails when
    /// they have more than 256 positions in all (a path takes one per segment, plus one).
    pub fn new(selectors: Vec<Selector>) -> Result<SelectorSet, SelectorError> {
        let mut set = SelectorSet {
            selectors: Vec::new(),
            finals: Vec::new(),
            owner: Vec::new(),
            root: MatchState::default(),
            final_mask: MatchState::default(),
            descendant: MatchState::default(),
            any_key: MatchState::default(),
            any_index: MatchState::default(),
            named: MatchState::default(),
            globbed: MatchState::default(),
            indexed: MatchState::default(),
            name_range: Vec::new(),
            glob_range: Vec::new(),
            index_range: Vec::new(),
            names: Vec::new(),
            globs: Vec::new(),
            indices: Vec::new(),
        };
        for (i, sel) in selectors.iter().enumerate() {
            let base = set.owner.len();
            if base + sel.segments.len() + 1 > MAX_POSITIONS {
                return Err(SelectorError {
                    source: sel.source.clone(),
                    position: 1,
                    message: format!(
                        "too many path segments in one policy (at most {MAX_POSITIONS}, \
                         counting one more per path)"
                    ),
                });
            }
            set.root.set(base);
            for (k, seg) in sel.segments.iter().enumerate() {
                let p = base + k;
                if seg.descendant {
                    set.descendant.set(p);
                }
                let (names, globs, indices) = (set.names.len(), set.globs.len(), set.indices.len());
                if seg.items.contains(&Item::Wildcard) {
                    // `*` takes everything; the other selectors of the union add nothing.
                    set.any_key.set(p);
                    set.any_index.set(p);
                } else {
                    for item in &seg.items {
                        match item {
                            Item::Name(n) if !set.names[names..].iter().any(|m| **m == **n) => {
                                set.names.push(n.as_str().into());
                            }
                            Item::Glob(g) if !set.globs[globs..].contains(g) => {
                                set.globs.push(g.clone());
                            }
                            Item::Index(x) if !set.indices[indices..].contains(x) => {
                                set.indices.push(*x);
                            }
                            _ => {}
                        }
                    }
                }
                if set.names.len() > names {
                    set.named.set(p);
                }
                if set.globs.len() > globs {
                    set.globbed.set(p);
                }
                if set.indices.len() > indices {
                    set.indexed.set(p);
                }
                // Fits: the total is bounded by the sources' lengths, far below 2^32.
                set.name_range.push((names as u32, set.names.len() as u32));
                set.glob_range.push((globs as u32, set.globs.len() as u32));
                set.index_range
                    .push((indices as u32, set.indices.len() as u32));
                set.owner.push(i);
            }
            let last = base + sel.segments.len();
            set.final_mask.set(last);
            set.finals.push(last);
            set.name_range.push((0, 0));
            set.glob_range.push((0, 0));
            set.index_range.push((0, 0));
            set.owner.push(i);
        }
        set.selectors = selectors;
        Ok(set)
    }

    /// How many selectors the set holds.
    pub fn len(&self) -> usize {
        self.selectors.len()
    }

    /// Whether the set holds no selector.
    pub fn is_empty(&self) -> bool {
        self.selectors.is_empty()
    }

    /// Selector `i`, by its index in the list given to [`SelectorSet::new`]; panics if out of
    /// range.
    pub fn selector(&self, i: usize) -> &Selector {
        &self.selectors[i]
    }

    /// The state at `$`.
    pub fn root(&self) -> MatchState {
        self.root
    }

    /// The state at `$` with selectors `skip` left out: none of them ever matches from it,
    /// nor keeps a subtree from being skipped.
    pub(crate) fn root_without(&self, skip: &[usize]) -> MatchState {
        let mut root = self.root;
        for &i in skip {
            let first = self.finals[i] - self.selectors[i].segments.len();
            root.0[first / 64] &= !(1 << (first % 64));
        }
        root
    }

    /// The state of the child reached from a node in state `parent` by `step`.
    pub fn step(&self, parent: &MatchState, step: Step) -> MatchState {
        let mut out = parent.and(&self.descendant);
        match step {
            Step::Key(key) => {
                out.or_assign(&parent.and(&self.any_key).shl1());
                parent.and(&self.named).for_each(|p| {
                    let (a, b) = self.name_range[p];
                    if self.names[a as usize..b as usize]
                        .iter()
                        .any(|n| **n == *key)
                    {
                        out.set(p + 1);
                    }
                });
                parent.and(&self.globbed).for_each(|p| {
                    let (a, b) = self.glob_range[p];
                    if self.globs[a as usize..b as usize]
                        .iter()
                        .any(|g| g.matches(key))
                    {
                        out.set(p + 1);
                    }
                });
            }
            Step::Index { index, len } => {
                out.or_assign(&parent.and(&self.any_index).shl1());
                parent.and(&self.indexed).for_each(|p| {
                    let (a, b) = self.index_range[p];
                    let mut it = self.indices[a as usize..b as usize].iter();
                    if it.any(|&i| resolve(i, len) == Some(index)) {
                        out.set(p + 1);
                    }
                });
            }
        }
        out
    }

    /// Whether selector `i` selects exactly this node.
    pub fn matches(&self, state: &MatchState, i: usize) -> bool {
        self.finals.get(i).is_some_and(|&p| state.get(p))
    }

    /// Whether any selector selects this node.
    pub(crate) fn matches_any(&self, state: &MatchState) -> bool {
        !state.and(&self.final_mask).is_zero()
    }

    /// The selectors that select this node, in increasing order.
    pub fn matched<'s>(&'s self, state: &MatchState) -> impl Iterator<Item = usize> + 's {
        let hits = state.and(&self.final_mask);
        (0..WORDS).flat_map(move |w| {
            let mut rest = hits.0[w];
            std::iter::from_fn(move || {
                (rest != 0).then(|| {
                    let b = rest.trailing_zeros() as usize;
                    rest &= rest - 1;
                    self.owner[w * 64 + b]
                })
            })
        })
    }

    /// No selector can match this node or any descendant: the walk may skip the subtree.
    pub fn is_dead(&self, state: &MatchState) -> bool {
        state.is_zero()
    }

    /// Whether any descendant of this node can still match (some non-final position is
    /// live); when not, the walk need not visit the children even if this node matches.
    pub(crate) fn can_descend(&self, state: &MatchState) -> bool {
        state
            .0
            .iter()
            .zip(self.final_mask.0)
            .any(|(s, f)| s & !f != 0)
    }
}

/// Which selectors selected some node during a walk and, when asked for, how many nodes
/// each: the walk notes every node's state ([`SelectorSet::note`]), a few word ORs per node,
/// so a policy can say which of its selectors matched nothing without a second pass.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Seen {
    /// Every position live at some node.
    reached: MatchState,
    /// Nodes selected, per selector; `None` unless counting was asked for.
    counts: Option<Vec<u64>>,
}

impl Seen {
    /// Nothing seen yet; `count`: also count the nodes each selector selects.
    pub fn new(set: &SelectorSet, count: bool) -> Seen {
        Seen {
            reached: MatchState::default(),
            counts: count.then(|| vec![0; set.len()]),
        }
    }

    /// Add what another walk (a parallel chunk) saw.
    pub fn join(&mut self, other: Seen) {
        self.reached.or_assign(&other.reached);
        if let (Some(a), Some(b)) = (&mut self.counts, other.counts) {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
    }

    /// Whether counts are kept.
    pub(crate) fn is_counting(&self) -> bool {
        self.counts.is_some()
    }
}

impl SelectorSet {
    /// Note that the walk reached a node in `state`.
    #[inline]
    pub fn note(&self, seen: &mut Seen, state: &MatchState) {
        seen.reached.or_assign(state);
        if let Some(counts) = &mut seen.counts {
            for s in self.matched(state) {
                counts[s] += 1;
            }
        }
    }

    /// Note that selector `i` selected a node the walk did not visit (one the parser left
    /// out, see [`crate::early`]). Counts are not kept for such walks.
    pub(crate) fn note_selected(&self, seen: &mut Seen, i: usize) {
        seen.reached.set(self.finals[i]);
    }

    /// Whether selector `i` selected some node of the walks `seen` noted.
    pub(crate) fn was_matched(&self, seen: &Seen, i: usize) -> bool {
        self.matches(&seen.reached, i)
    }

    /// How many nodes selector `i` selected, when `seen` counted.
    pub(crate) fn match_count(&self, seen: &Seen, i: usize) -> Option<u64> {
        seen.counts.as_ref().and_then(|c| c.get(i).copied())
    }
}

/// The element an index selects in an array of `len`, if any.
fn resolve(i: i64, len: usize) -> Option<usize> {
    if i >= 0 {
        usize::try_from(i).ok()
    } else {
        len.checked_sub(usize::try_from(i.unsigned_abs()).ok()?)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::value::{Map, Number, Value};
    use proptest::prelude::*;

    /// A tiny JSON reader for test documents (no escapes; the real parser lives elsewhere).
    pub(in crate::query) fn json(src: &str) -> Value {
        fn value(b: &[u8], i: &mut usize) -> Value {
            while b[*i].is_ascii_whitespace() {
                *i += 1;
            }
            match b[*i] {
                b'{' => {
                    *i += 1;
                    let mut m = Map::new();
                    loop {
                        while b[*i].is_ascii_whitespace() || b[*i] == b',' {
                            *i += 1;
                        }
                        if b[*i] == b'}' {
                            *i += 1;
                            return Value::Object(m);
                        }
                        let Value::String(k) = value(b, i) else {
                            panic!("key")
                        };
                        while b[*i] != b':' {
                            *i += 1;
                        }
                        *i += 1;
                        let v = value(b, i);
                        m.insert(k, v);
                    }
                }
                b'[' => {
                    *i += 1;
                    let mut a = Vec::new();
                    loop {
                        while b[*i].is_ascii_whitespace() || b[*i] == b',' {
                            *i += 1;
                        }
                        if b[*i] == b']' {
                            *i += 1;
                            return Value::Array(a);
                        }
                        a.push(value(b, i));
                    }
                }
                b'"' => {
                    let start = *i + 1;
                    *i = start;
                    while b[*i] != b'"' {
                        *i += 1;
                    }
                    *i += 1;
                    Value::from(std::str::from_utf8(&b[start..*i - 1]).unwrap())
                }
                _ => {
                    let start = *i;
                    while *i < b.len() && !b",]} \n".contains(&b[*i]) {
                        *i += 1;
                    }
                    match std::str::from_utf8(&b[start..*i]).unwrap() {
                        "true" => Value::Bool(true),
                        "false" => Value::Bool(false),
                        "null" => Value::Null,
                        n => Value::Number(Number::from_lexeme(n).expect(n)),
                    }
                }
            }
        }
        value(src.as_bytes(), &mut 0)
    }

    /// Glob matching by backtracking over characters, the textbook way: the reference for
    /// [`Glob::matches`].
    fn naive_glob(pattern: &str, key: &str) -> bool {
        fn go(p: &[char], k: &[char]) -> bool {
            match p.split_first() {
                None => k.is_empty(),
                Some(('*', rest)) => (0..=k.len()).any(|i| go(rest, &k[i..])),
                Some((c, rest)) => k.first() == Some(c) && go(rest, &k[1..]),
            }
        }
        let p: Vec<char> = pattern.chars().collect();
        let k: Vec<char> = key.chars().collect();
        go(&p, &k)
    }

    #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    enum P {
        K(String),
        I(usize),
    }

    /// RFC 9535 evaluation, straight from the spec: the nodelist of each segment is computed
    /// from the previous one over the whole document.
    fn reference(sel: &Selector, doc: &Value) -> Vec<Vec<P>> {
        fn children<'v>(
            path: &[P],
            v: &'v Value,
            items: &[Item],
            out: &mut Vec<(Vec<P>, &'v Value)>,
        ) {
            let with = |p: P| {
                let mut q = path.to_vec();
                q.push(p);
                q
            };
            for item in items {
                match (item, v) {
                    (Item::Name(n), Value::Object(m)) => {
                        if let Some(c) = m.get(n) {
                            out.push((with(P::K(n.clone())), c));
                        }
                    }
                    (Item::Index(i), Value::Array(a)) => {
                        let j = if *i >= 0 { *i } else { a.len() as i64 + *i };
                        if j >= 0 && (j as usize) < a.len() {
                            out.push((with(P::I(j as usize)), &a[j as usize]));
                        }
                    }
                    (Item::Wildcard, Value::Object(m)) => {
                        for (k, c) in m.iter() {
                            out.push((with(P::K(k.to_string())), c));
                        }
                    }
                    (Item::Glob(g), Value::Object(m)) => {
                        for (k, c) in m.iter() {
                            if naive_glob(g.pattern(), k) {
                                out.push((with(P::K(k.to_string())), c));
                            }
                        }
                    }
                    (Item::Wildcard, Value::Array(a)) => {
                        for (i, c) in a.iter().enumerate() {
                            out.push((with(P::I(i)), c));
                        }
                    }
                    _ => {}
                }
            }
        }
        fn descendants<'v>(path: Vec<P>, v: &'v Value, out: &mut Vec<(Vec<P>, &'v Value)>) {
            out.push((path.clone(), v));
            let mut kids = Vec::new();
            children(&path, v, &[Item::Wildcard], &mut kids);
            for (p, c) in kids {
                descendants(p, c, out);
            }
        }
        let mut nodes = vec![(Vec::new(), doc)];
        for seg in &sel.segments {
            let mut next = Vec::new();
            for (path, v) in nodes {
                if seg.descendant {
                    let mut all = Vec::new();
                    descendants(path, v, &mut all);
                    for (p, d) in all {
                        children(&p, d, &seg.items, &mut next);
                    }
                } else {
                    children(&path, v, &seg.items, &mut next);
                }
            }
            nodes = next;
        }
        nodes.into_iter().map(|(p, _)| p).collect()
    }

    /// The incremental matcher over one walk, skipping dead subtrees: per selector, the
    /// selected paths.
    fn incremental(set: &SelectorSet, doc: &Value) -> Vec<Vec<Vec<P>>> {
        fn walk(
            set: &SelectorSet,
            v: &Value,
            st: MatchState,
            path: &mut Vec<P>,
            out: &mut Vec<Vec<Vec<P>>>,
        ) {
            if set.is_dead(&st) {
                return;
            }
            for (i, paths) in out.iter_mut().enumerate() {
                if set.matches(&st, i) {
                    paths.push(path.clone());
                }
            }
            assert_eq!(
                set.matched(&st).collect::<Vec<_>>(),
                (0..set.len())
                    .filter(|&i| set.matches(&st, i))
                    .collect::<Vec<_>>()
            );
            assert_eq!(set.matches_any(&st), set.matched(&st).next().is_some());
            if !set.can_descend(&st) {
                return;
            }
            match v {
                Value::Object(m) => {
                    for (k, c) in m.iter() {
                        path.push(P::K(k.to_string()));
                        walk(set, c, set.step(&st, Step::Key(k)), path, out);
                        path.pop();
                    }
                }
                Value::Array(a) => {
                    for (i, c) in a.iter().enumerate() {
                        path.push(P::I(i));
                        let s = set.step(
                            &st,
                            Step::Index {
                                index: i,
                                len: a.len(),
                            },
                        );
                        walk(set, c, s, path, out);
                        path.pop();
                    }
                }
                _ => {}
            }
        }
        let mut out = vec![Vec::new(); set.len()];
        walk(set, doc, set.root(), &mut Vec::new(), &mut out);
        out
    }

    fn sorted(mut v: Vec<Vec<P>>) -> Vec<Vec<P>> {
        v.sort();
        v.dedup();
        v
    }

    /// Paths selected by `sel` on `doc`, as `a.0.b` strings, checked against the reference.
    fn select(sel: &str, doc: &str) -> Vec<String> {
        let s = Selector::parse(sel).unwrap();
        let doc = json(doc);
        let set = SelectorSet::new(vec![s.clone()]).unwrap();
        let got = sorted(incremental(&set, &doc).remove(0));
        assert_eq!(got, sorted(reference(&s, &doc)), "{sel}");
        got.iter()
            .map(|p| {
                p.iter()
                    .map(|e| match e {
                        P::K(k) => k.clone(),
                        P::I(i) => i.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(".")
            })
            .collect()
    }

    fn err(src: &str) -> (usize, String) {
        let e = Selector::parse(src).unwrap_err();
        assert_eq!(e.source, src);
        (e.position, e.message)
    }

    fn items(src: &str) -> Vec<(bool, Vec<Item>)> {
        Selector::parse(src)
            .unwrap()
            .segments
            .into_iter()
            .map(|s| (s.descendant, s.items))
            .collect()
    }

    fn name(n: &str) -> Item {
        Item::Name(n.into())
    }

    #[test]
    fn parses_the_supported_grammar() {
        assert_eq!(items("$"), vec![]);
        assert_eq!(items("$.a"), vec![(false, vec![name("a")])]);
        assert_eq!(items("$['a b']"), vec![(false, vec![name("a b")])]);
        assert_eq!(items(r#"$["a'b"]"#), vec![(false, vec![name("a'b")])]);
        assert_eq!(items(r"$['it\'s\\']"), vec![(false, vec![name(r"it's\")])]);
        assert_eq!(
            items(r#"$["\"q\" \u00e9\ud83d\ude00\n"]"#),
            vec![(false, vec![name("\"q\" é😀\n")])]
        );
        assert_eq!(items("$['']"), vec![(false, vec![name("")])]);
        assert_eq!(items("$.*"), vec![(false, vec![Item::Wildcard])]);
        assert_eq!(items("$[*]"), vec![(false, vec![Item::Wildcard])]);
        assert_eq!(
            items("$[3][-1][0]"),
            vec![
                (false, vec![Item::Index(3)]),
                (false, vec![Item::Index(-1)]),
                (false, vec![Item::Index(0)]),
            ]
        );
        assert_eq!(
            items("$[ 'a' ,\t0 ,*]"),
            vec![(false, vec![name("a"), Item::Index(0), Item::Wildcard])]
        );
        assert_eq!(items("$..a"), vec![(true, vec![name("a")])]);
        assert_eq!(items("$..*"), vec![(true, vec![Item::Wildcard])]);
        assert_eq!(items("$..[*]"), vec![(true, vec![Item::Wildcard])]);
        assert_eq!(
            items("$..['a','b']"),
            vec![(true, vec![name("a"), name("b")])]
        );
        assert_eq!(
            items("$ .a\n[0]"),
            vec![(false, vec![name("a")]), (false, vec![Item::Index(0)])]
        );
        assert_eq!(
            items("$.memory-123._x.é9"),
            vec![
                (false, vec![name("memory-123")]),
                (false, vec![name("_x")]),
                (false, vec![name("é9")]),
            ]
        );
        assert_eq!(
            items("$[9007199254740991]"),
            vec![(false, vec![Item::Index(9007199254740991)])]
        );
        let s = Selector::parse("$.a..b").unwrap();
        assert_eq!(s.source(), "$.a..b");
        assert_eq!(s.to_string(), "$.a..b");
        assert!(s.has_descendant());
        assert!(!Selector::parse("$.a[*].b").unwrap().has_descendant());
    }

    fn glob(p: &str) -> Item {
        Item::Glob(Glob::new(p))
    }

    #[test]
    fn parses_key_patterns() {
        assert_eq!(items("$..*_url"), vec![(true, vec![glob("*_url")])]);
        assert_eq!(
            items("$.time.created_*"),
            vec![
                (false, vec![name("time")]),
                (false, vec![glob("created_*")])
            ]
        );
        assert_eq!(items("$.*id*"), vec![(false, vec![glob("*id*")])]);
        assert_eq!(
            items("$.time.2024-*"),
            vec![(false, vec![name("time")]), (false, vec![glob("2024-*")])]
        );
        assert_eq!(
            items("$.*_url.*"),
            vec![(false, vec![glob("*_url")]), (false, vec![Item::Wildcard])]
        );
        assert_eq!(
            items("$.*[0]"),
            vec![(false, vec![Item::Wildcard]), (false, vec![Item::Index(0)])]
        );
        // Brackets: a quoted string stays a literal name (RFC 9535); `glob(…)` is a pattern.
        assert_eq!(
            items("$['created_*']"),
            vec![(false, vec![name("created_*")])]
        );
        assert_eq!(
            items("$..[glob('* at'), 'id', 0]"),
            vec![(true, vec![glob("* at"), name("id"), Item::Index(0)])]
        );
        assert_eq!(
            items(r#"$[ glob( "it's *" ) ,glob('\u00e9*')]"#),
            vec![(false, vec![glob("it's *"), glob("é*")])]
        );
        assert_eq!(items("$[glob('abc')]"), vec![(false, vec![name("abc")])]);
        assert_eq!(items("$[glob('*')]"), vec![(false, vec![glob("*")])]);
        assert_eq!(items("$.-*"), vec![(false, vec![glob("-*")])]);
    }

    #[test]
    fn rejects_with_precise_errors() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 1, "empty path; paths start with `$` (the root)"),
            (
                "a.b",
                1,
                "paths must start with `$` (the root), e.g. `$.name`",
            ),
            (
                "@.a",
                1,
                "paths must start with `$` (the root), e.g. `$.name`",
            ),
            (" $.a", 1, "leading whitespace is not allowed"),
            ("$.a ", 4, "trailing whitespace is not allowed"),
            ("$.a b", 5, "unexpected `b`; expected `.`, `..` or `[`"),
            ("$a", 2, "unexpected `a`; expected `.`, `..` or `[`"),
            ("$.", 3, "expected a member name or `*` after `.`"),
            ("$.a.", 5, "expected a member name or `*` after `.`"),
            ("$..", 4, "expected a member name, `*` or `[` after `..`"),
            (
                "$...a",
                4,
                "expected a member name, `*` or `[` after `..`, found `.`",
            ),
            (
                "$.'a'",
                3,
                "expected a member name or `*` after `.`, found `'`",
            ),
            (
                "$.[0]",
                3,
                "unexpected `[` after `.`; write `$[…]` or `$.name`, not `$.[…]`",
            ),
            (
                "$.1a",
                3,
                "a name after `.` cannot start with `1`; write `['1a']`",
            ),
            (
                "$.12",
                3,
                "a name after `.` cannot start with `1`; write `[12]` for an index or `['12']` for a member",
            ),
            (
                "$..-1",
                4,
                "a name after `..` cannot start with `-`; write `[-1]` for an index or `['-1']` for a member",
            ),
            (
                "$[?@.a]",
                3,
                "filter selectors are not supported in paths; use the filter op's `where`",
            ),
            (
                "$..[?(@.a)]",
                5,
                "filter selectors are not supported in paths; use the filter op's `where`",
            ),
            ("$[1:3]", 4, "array slices are not supported"),
            ("$[:3]", 3, "array slices are not supported"),
            ("$[::2]", 3, "array slices are not supported"),
            ("$.a.length()", 11, "function extensions are not supported"),
            ("$[", 2, "unclosed `[`"),
            ("$['a'", 2, "unclosed `[`"),
            ("$['a',", 2, "unclosed `[`"),
            ("$['a", 3, "unclosed string"),
            ("$['a\\", 3, "unclosed string"),
            ("$[]", 3, "empty brackets; expected a name, index or `*`"),
            ("$['a',]", 7, "expected a selector after `,`"),
            (
                "$[a]",
                3,
                "names in brackets must be quoted, e.g. `['name']`",
            ),
            ("$['a' 'b']", 7, "expected `,` or `]`, found `'`"),
            ("$[-]", 4, "expected a digit after `-`"),
            ("$[01]", 3, "indices cannot have leading zeros"),
            ("$[-0]", 3, "`-0` is not a valid index"),
            (
                "$[9007199254740992]",
                3,
                "index out of range (at most 2^53 - 1)",
            ),
            (
                "$[99999999999999999999999]",
                3,
                "index out of range (at most 2^53 - 1)",
            ),
            ("$[1.5]", 4, "expected `,` or `]`, found `.`"),
            (
                "$[$]",
                3,
                "unexpected `$`; expected a quoted name, an index or `*`",
            ),
            (r"$['a\x']", 5, r"invalid escape `\x`"),
            (
                r#"$['a\"']"#,
                5,
                r#"invalid escape `\"` (inside '…' write " unescaped)"#,
            ),
            (r"$['\u12']", 4, r"expected 4 hex digits after `\u`"),
            (r"$['\ud83d']", 4, r"unpaired surrogate in `\u` escape"),
            (r"$['\ude00']", 4, r"unpaired surrogate in `\u` escape"),
            (
                "$['a\tb']",
                5,
                "control characters must be escaped in strings",
            ),
            ("$.a]", 4, "unexpected `]`; expected `.`, `..` or `[`"),
            (
                "$.a**",
                4,
                "`**` is not a pattern; one `*` already matches any run of characters (for any depth, use `..`)",
            ),
            (
                "$..**",
                4,
                "`**` is not a pattern; one `*` already matches any run of characters (for any depth, use `..`)",
            ),
            (
                r#"$[glob("a\u002a*")]"#,
                8,
                "`**` is not a pattern; one `*` already matches any run of characters (for any depth, use `..`)",
            ),
            (
                "$.a*?",
                5,
                "`?` is not a pattern character; only `*` is (e.g. `$..*_url`)",
            ),
            ("$.*_url()", 8, "function extensions are not supported"),
            (
                "$[glob(x)]",
                8,
                "expected a quoted pattern after `glob(`, e.g. `glob('*_url')`",
            ),
            (
                "$[glob('a'",
                11,
                "expected `)` after the pattern of `glob(…)`",
            ),
            ("$[glob('a]", 8, "unclosed string"),
            (
                "$[glob]",
                3,
                "names in brackets must be quoted, e.g. `['name']`",
            ),
        ];
        for &(src, pos, msg) in cases {
            assert_eq!(err(src), (pos, msg.to_owned()), "{src}");
        }
        let e = Selector::parse("$[?x]").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid selector `$[?x]` at character 3: filter selectors are not supported in \
             paths; use the filter op's `where`"
        );
        // Positions count characters, not bytes.
        assert_eq!(err("$.é€ x").0, 6);
    }

    const DOC: &str = r#"{
        "id": 1, "created_at": "t0",
        "items": [
            {"created_at": "t1", "refs": {"created_at": "t2"}},
            [{"created_at": "t3"}],
            "created_at"
        ],
        "segments": [{"refs": [1]}, {"norefs": 2}, {"refs": {"x": 3}}],
        "meta_relations": {"a": {"b": 1}, "c": [2]},
        "a b": [10, 11],
        "tail": [1, 2, 3]
    }"#;

    #[test]
    fn selects_like_rfc_9535() {
        assert_eq!(select("$", DOC), [""]);
        assert_eq!(
            select("$..created_at", DOC),
            [
                "created_at",
                "items.0.created_at",
                "items.0.refs.created_at",
                "items.1.0.created_at",
            ]
        );
        assert_eq!(
            select("$.segments[*].refs", DOC),
            ["segments.0.refs", "segments.2.refs"]
        );
        assert_eq!(
            select("$.meta_relations.*", DOC),
            ["meta_relations.a", "meta_relations.c"]
        );
        assert_eq!(select("$['a b'][0]", DOC), ["a b.0"]);
        assert_eq!(select("$.tail[-1]", DOC), ["tail.2"]);
        assert_eq!(select("$.tail[-3]", DOC), ["tail.0"]);
        assert_eq!(select("$.tail[-4]", DOC), Vec::<String>::new());
        assert_eq!(select("$.tail[3]", DOC), Vec::<String>::new());
        assert_eq!(select("$.tail[0,2,0]", DOC), ["tail.0", "tail.2"]);
        assert_eq!(select("$['id','tail'][0]", DOC), ["tail.0"]);
        assert_eq!(select("$[-1]", "[1,2,3]"), ["2"]);
        assert_eq!(select("$[-1]", "{\"-1\": 0}"), Vec::<String>::new());
        assert_eq!(select("$[0]", "{\"0\": 0}"), Vec::<String>::new());
        assert_eq!(select("$['0']", "[5]"), Vec::<String>::new());
        assert_eq!(
            select("$..[*]", r#"{"a": [1, {"b": 2}]}"#),
            ["a", "a.0", "a.1", "a.1.b"]
        );
        assert_eq!(select("$..*", r#"[[0]]"#), ["0", "0.0"]);
        assert_eq!(
            select("$..[0]", r#"[[5, [6]], {"x": [7]}]"#),
            ["0", "0.0", "0.1.0", "1.x.0"]
        );
        assert_eq!(
            select("$.a..b", r#"{"a": {"b": {"b": 1}}, "b": 2}"#),
            ["a.b", "a.b.b"]
        );
        assert_eq!(
            select("$..a..a", r#"{"a": {"a": {"a": 1}}}"#),
            ["a.a", "a.a.a"]
        );
        assert_eq!(
            select("$.memory-123", r#"{"memory-123": 1}"#),
            ["memory-123"]
        );
        assert_eq!(select("$.*", "3"), Vec::<String>::new());
    }

    #[test]
    fn key_patterns_select_members_only() {
        let doc = r#"{
            "url": 0, "html_url": 1, "repo": {"git_url": 2, "urls": 3, "x_url": {"y_url": 4}},
            "items": [{"avatar_url": 5}, ["_url"]],
            "created_at": 6, "created": 7, "time": {"2024-01-02": 8, "2023-05-06": 9}
        }"#;
        assert_eq!(
            select("$..*_url", doc),
            [
                "html_url",
                "items.0.avatar_url",
                "repo.git_url",
                "repo.x_url",
                "repo.x_url.y_url",
            ]
        );
        assert_eq!(select("$.created*", doc), ["created", "created_at"]);
        assert_eq!(select("$.*url*", doc), ["html_url", "url"]);
        assert_eq!(select("$.time.2024-*", doc), ["time.2024-01-02"]);
        assert_eq!(select("$['created*']", doc), Vec::<String>::new());
        assert_eq!(
            select("$[glob('created*'), 'url']", doc),
            ["created", "created_at", "url"]
        );
        // A pattern never selects array elements, even `glob('*')`; the lone `*` does.
        assert_eq!(select("$.items[glob('*')]", doc), Vec::<String>::new());
        assert_eq!(select("$.items.*", doc), ["items.0", "items.1"]);
        assert_eq!(select("$.repo[glob('*')]", doc), select("$.repo.*", doc));
    }

    #[test]
    fn set_tracks_selectors_independently() {
        let sels = ["$.a", "$..b", "$[*]", "$"].map(|s| Selector::parse(s).unwrap());
        let set = SelectorSet::new(sels.to_vec()).unwrap();
        assert_eq!(set.len(), 4);
        assert!(!set.is_empty());
        assert_eq!(set.selector(1).source(), "$..b");
        let root = set.root();
        assert_eq!(set.matched(&root).collect::<Vec<_>>(), [3]);
        let a = set.step(&root, Step::Key("a"));
        assert_eq!(set.matched(&a).collect::<Vec<_>>(), [0, 2]);
        let ab = set.step(&a, Step::Key("b"));
        assert_eq!(set.matched(&ab).collect::<Vec<_>>(), [1]);
        assert!(!set.matches(&ab, 7));
        // Only `$..b` remains live below `a.c`; nothing below `$.x` once `$..b` is gone.
        let only = SelectorSet::new(vec![Selector::parse("$.x.y").unwrap()]).unwrap();
        let z = only.step(&only.root(), Step::Key("z"));
        assert!(only.is_dead(&z));
        let y = only.step(&only.step(&only.root(), Step::Key("x")), Step::Key("y"));
        assert!(only.matches(&y, 0) && !only.is_dead(&y) && !only.can_descend(&y));
        assert!(only.is_dead(&only.step(&y, Step::Index { index: 0, len: 1 })));
        let empty = SelectorSet::new(Vec::new()).unwrap();
        assert!(empty.is_empty() && empty.is_dead(&empty.root()));
    }

    #[test]
    fn positions_are_bounded() {
        // 128 two-position selectors fill all 256 positions; one more overflows.
        let one = Selector::parse("$.a").unwrap();
        let mut sels = vec![one.clone(); 128];
        let set = SelectorSet::new(sels.clone()).unwrap();
        let last = set.step(&set.root(), Step::Key("a"));
        assert!(set.matches(&last, 127) && set.matches(&last, 64));
        sels.push(Selector::parse("$").unwrap());
        let e = SelectorSet::new(sels).unwrap_err();
        assert_eq!(e.source, "$");
        assert!(e.message.starts_with("too many path segments"), "{e}");
    }

    // Property: the incremental matcher agrees with the reference evaluator.

    /// Containers over few keys, so random paths often hit something; the root is never a
    /// leaf or empty.
    fn arb_doc(depth: u32) -> BoxedStrategy<Value> {
        let leaf = prop_oneof![Just(Value::Null), (0..3i64).prop_map(Value::from)];
        let min = if depth == 4 { 1 } else { 0 };
        if depth == 0 {
            return leaf.boxed();
        }
        let key = prop::sample::select(vec!["a", "a", "b", "b", "c", "d e", "a_url", "url_b"]);
        let array = prop::collection::vec(arb_doc(depth - 1), min..4).prop_map(Value::Array);
        let object = prop::collection::vec((key, arb_doc(depth - 1)), min..4)
            .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()));
        if depth == 4 {
            return prop_oneof![1 => array, 2 => object].boxed();
        }
        prop_oneof![1 => leaf, 2 => array, 3 => object].boxed()
    }

    fn arb_item() -> impl Strategy<Value = Item> {
        prop_oneof![
            3 => prop::sample::select(vec!["a", "b", "c", "d e"])
                .prop_map(|n| Item::Name(n.into())),
            1 => Just(Item::Wildcard),
            2 => (-3i64..4).prop_map(Item::Index),
            2 => prop::sample::select(vec!["*_url", "a*", "*b", "*url*", "*", "d*e", "* *"])
                .prop_map(|g| Item::Glob(Glob::new(g))),
        ]
    }

    /// A random selector, rendered in a random one of its spellings.
    fn arb_selector() -> impl Strategy<Value = String> {
        let seg = (
            any::<bool>(),
            prop::collection::vec(arb_item(), 1..3),
            any::<bool>(),
        );
        prop::collection::vec(seg, 0..4).prop_map(|segs| {
            let mut s = String::from("$");
            for (desc, items, dotted) in segs {
                s.push_str(if desc { ".." } else { "" });
                match (&items[..], dotted) {
                    ([Item::Wildcard], true) => s.push_str(if desc { "*" } else { ".*" }),
                    ([Item::Name(n)], true) if !n.contains(' ') => {
                        s.push_str(if desc { "" } else { "." });
                        s.push_str(n);
                    }
                    ([Item::Glob(g)], true) if g.pattern() != "*" && !g.pattern().contains(' ') => {
                        s.push_str(if desc { "" } else { "." });
                        s.push_str(g.pattern());
                    }
                    _ => {
                        let parts: Vec<String> = items
                            .iter()
                            .map(|i| match i {
                                Item::Name(n) if dotted => format!("\"{n}\""),
                                Item::Name(n) => format!("'{n}'"),
                                Item::Index(i) => i.to_string(),
                                Item::Wildcard => "*".into(),
                                Item::Glob(g) if dotted => format!("glob( \"{}\" )", g.pattern()),
                                Item::Glob(g) => format!("glob('{}')", g.pattern()),
                            })
                            .collect();
                        s.push('[');
                        s.push_str(&parts.join(if dotted { ", " } else { "," }));
                        s.push(']');
                    }
                }
            }
            s
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn incremental_matches_reference(doc in arb_doc(4), srcs in prop::collection::vec(arb_selector(), 1..4)) {
            let sels: Vec<Selector> = srcs.iter().map(|s| Selector::parse(s).unwrap()).collect();
            let set = SelectorSet::new(sels.clone()).unwrap();
            let got = incremental(&set, &doc);
            for (i, sel) in sels.iter().enumerate() {
                prop_assert_eq!(sorted(got[i].clone()), sorted(reference(sel, &doc)), "{}", sel.source());
            }
        }

        #[test]
        fn glob_matches_like_backtracking(pattern in "[ab*é]{0,8}", key in "[abé*]{0,10}") {
            prop_assert_eq!(Glob::new(&pattern).matches(&key), naive_glob(&pattern, &key),
                "{} on {}", pattern, key);
        }

        #[test]
        fn parse_never_panics(src in "\\PC{0,24}") {
            let _ = Selector::parse(&src);
        }

        #[test]
        fn parse_never_panics_near_valid(src in "[$.\\[\\]'\"*a0-9,:?\\\\u ()glob-]{0,16}") {
            if let Err(e) = Selector::parse(&src) {
                prop_assert!(e.position >= 1 && e.position <= src.chars().count() + 1);
            }
        }
    }
}
