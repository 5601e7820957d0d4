//! Members a parse leaves out as it reads: those whose key a test names (a policy's
//! `$..name` drops), and those whose value is empty (a plain `prune`). What to leave out is
//! decided by [`crate::early`]; this is only the mechanism, and what it counted.
//!
//! Why in the parser: a large payload's dropped and empty members are most of its members,
//! and building them only for the walk to take them out again cost more than parsing the
//! rest. Members are left out when their object closes, after a repeated key has taken its
//! last value, so the result is what the walk would have made of the parsed object: the
//! same members, the same counts, the same repeated-key warnings.
//!
//! ```text
//! keys: created_at   empties: null, ""
//! {"id":1,"created_at":"2024","owner":null,"tags":[]}  →  {"id":1,"tags":[]}
//! counted: created_at stripped (drop), owner empty (prune)
//! ```

use crate::manifest::Kind;
use crate::query::selector::Glob;
use crate::value::Value;

/// Which objects a key test looks in.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scope {
    /// Every object, at any depth (`$..name`).
    Anywhere,
    /// The root object (`$['a','b']`).
    Root,
    /// Objects whose container is the value of a member with one of these names, at any
    /// depth (`$..entities[*]['a']`: the members `a` of each entity).
    ChildOf(Vec<Box<str>>),
}

/// Where an object is, as far as [`Scope`]s ask: at the root, and which of the
/// [`Omit`]'s context names its container's key is (a bit each).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct At {
    pub root: bool,
    pub parent: u64,
}

/// A [`Scope`] compiled against the [`Omit`]'s list of context names.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ScopeMask {
    Anywhere,
    Root,
    ChildOf(u64),
}

impl ScopeMask {
    #[inline]
    fn holds(self, at: At) -> bool {
        match self {
            ScopeMask::Anywhere => true,
            ScopeMask::Root => at.root,
            ScopeMask::ChildOf(mask) => at.parent & mask != 0,
        }
    }
}

/// The most context names (of [`Scope::ChildOf`]) an [`Omit`] tells apart.
const MAX_CONTEXT_NAMES: usize = 64;

/// When a conditional prune (`prune` with `where`) takes an object's empty members: an
/// expression that reads only the object's own members, named in `keys`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Condition {
    expr: crate::query::expr::Expr,
    keys: Vec<String>,
}

impl Condition {
    pub(crate) fn new(expr: crate::query::expr::Expr, keys: Vec<String>) -> Condition {
        Condition { expr, keys }
    }

    /// The members it reads.
    pub(crate) fn keys(&self) -> &[String] {
        &self.keys
    }
}

/// A condition read a member whose value only the walk knows in full (not a scalar): the
/// text is parsed again whole, and the walk does every op.
#[derive(Debug)]
pub(crate) struct Undecided;

/// How a member's key is tested.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum KeyTest {
    Name(Box<str>),
    Glob(Glob),
}

impl KeyTest {
    fn matches(&self, key: &str) -> bool {
        match self {
            KeyTest::Name(n) => **n == *key,
            KeyTest::Glob(g) => g.matches(key),
        }
    }
}

/// Which empty values a prune takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Empties {
    pub null: bool,
    pub empty_string: bool,
    pub empty_array: bool,
    pub empty_object: bool,
}

impl Empties {
    /// Whether an object member of value `v` goes.
    pub(crate) fn takes(&self, v: &Value) -> bool {
        self.takes_kind(Emptiness::of(v))
    }

    /// Whether an object member whose value is `e` goes.
    fn takes_kind(&self, e: Emptiness) -> bool {
        match e {
            Emptiness::Null => self.null,
            Emptiness::String => self.empty_string,
            Emptiness::Array => self.empty_array,
            Emptiness::Object => self.empty_object,
            Emptiness::NotEmpty => false,
        }
    }
}

/// All a prune (or a drop's count) needs to know of a value: whether it is `null`, `""`,
/// `[]` or `{}`. The parser tells it from the value it built; [`super::stream`], which
/// builds none, from what it wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Emptiness {
    NotEmpty,
    Null,
    String,
    Array,
    Object,
}

impl Emptiness {
    /// How empty a value written as compact JSON is (as [`super::stream`] tells it).
    pub(crate) fn of_written(text: &str) -> Emptiness {
        match text {
            "null" => Emptiness::Null,
            "\"\"" => Emptiness::String,
            "[]" => Emptiness::Array,
            "{}" => Emptiness::Object,
            _ => Emptiness::NotEmpty,
        }
    }

    pub(crate) fn of(v: &Value) -> Emptiness {
        match v {
            Value::Null => Emptiness::Null,
            Value::String(s) if s.is_empty() => Emptiness::String,
            Value::Array(a) if a.is_empty() => Emptiness::Array,
            Value::Object(o) if o.is_empty() => Emptiness::Object,
            _ => Emptiness::NotEmpty,
        }
    }
}

/// What a parse leaves out. Ops are numbered as among the ops of the level being shaped,
/// so the counts go to the right op's record. Equal when every field is: the same members
/// left out, by the same ops, counted the same way (a report's output is taken by a page
/// only for an equal one, [`crate::report::SharedOutput`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Omit {
    /// Key tests in op order, each with its op and the selector it came from.
    keys: Vec<(KeyTest, usize, usize)>,
    /// Where each key test looks, beside `keys`.
    scopes: Vec<ScopeMask>,
    /// The names of [`Scope::ChildOf`], bit `i` for name `i`.
    context: Vec<Box<str>>,
    /// Prune ops in op order.
    empties: Vec<(Empties, usize)>,
    /// Conditional prune ops in op order (after every plain one), decided as each object
    /// closes; their marks follow the plain ones'.
    wheres: Vec<(Empties, usize, Condition)>,
    /// The request's parameters, for the conditions.
    params: crate::params::Params,
    /// Bit `n` (`n` < 63) set: some name is `n` bytes long; bit 63: some name is longer, or
    /// there is a glob. A key of no such length is kept without a comparison.
    lengths: u64,
    ops: usize,
}

/// A member's mark while its object is open: [`KEEP`], dropped by key test `i` (`i`), or
/// pruned by prune op `i` ([`PRUNED`]` + i`).
pub(crate) const KEEP: u16 = u16::MAX;
/// The first mark of a pruned member.
const PRUNED: u16 = 1 << 15;

/// How many key tests and prune ops an [`Omit`] can mark members with; a plan with more is
/// left to the walk.
pub(crate) const MAX_TESTS: usize = PRUNED as usize - 1;

impl Omit {
    /// `keys`: (test, where it looks, op, selector) in op order; `empties`: (which, op) in
    /// op order; `wheres`: the conditional prunes (each after every plain prune), read with
    /// `params`; `ops`: how many ops the level has. `None` past what marks can name: more
    /// than [`MAX_TESTS`] key tests or prunes, or [`MAX_CONTEXT_NAMES`] names in the scopes.
    pub(crate) fn new(
        scoped_keys: Vec<(KeyTest, Scope, usize, usize)>,
        empties: Vec<(Empties, usize)>,
        (wheres, params): (Vec<(Empties, usize, Condition)>, crate::params::Params),
        ops: usize,
    ) -> Option<Omit> {
        if scoped_keys.len() > MAX_TESTS || empties.len() + wheres.len() > MAX_TESTS {
            return None;
        }
        let mut context: Vec<Box<str>> = Vec::new();
        let mut scopes = Vec::with_capacity(scoped_keys.len());
        let mut keys = Vec::with_capacity(scoped_keys.len());
        for (test, scope, op, selector) in scoped_keys {
            scopes.push(match scope {
                Scope::Anywhere => ScopeMask::Anywhere,
                Scope::Root => ScopeMask::Root,
                Scope::ChildOf(names) => {
                    let mut mask = 0u64;
                    for n in names {
                        let i = match context.iter().position(|c| *c == n) {
                            Some(i) => i,
                            None if context.len() < MAX_CONTEXT_NAMES => {
                                context.push(n);
                                context.len() - 1
                            }
                            None => return None,
                        };
                        mask |= 1 << i;
                    }
                    ScopeMask::ChildOf(mask)
                }
            });
            keys.push((test, op, selector));
        }
        let mut lengths = 0u64;
        for (test, _, _) in &keys {
            lengths |= match test {
                KeyTest::Name(n) if n.len() < 63 => 1 << n.len(),
                _ => 1 << 63,
            };
        }
        Some(Omit {
            keys,
            scopes,
            context,
            empties,
            wheres,
            params,
            lengths,
            ops,
        })
    }

    /// Whether it has conditional prunes.
    #[inline]
    pub(crate) fn has_wheres(&self) -> bool {
        !self.wheres.is_empty()
    }

    /// Whether a conditional prune may take a member whose value is `v` (decided as its
    /// object closes, [`Omit::close_wheres`]).
    #[inline]
    pub(super) fn where_may_take(&self, v: Emptiness) -> bool {
        v != Emptiness::NotEmpty && self.wheres.iter().any(|(e, _, _)| e.takes_kind(v))
    }

    /// The conditional prunes' marks on an object's members (`keys`, how empty each value
    /// is, and the marks so far, [`KEEP`] for those still in), as the walk does them after
    /// the drops and plain prunes: in op order, each on the members left. `value(i)`: member
    /// `i`'s value, asked only of members a condition reads; it must be a scalar (anything
    /// else, `None`, leaves it [`Undecided`]).
    pub(super) fn close_wheres(
        &self,
        keys: &[&str],
        empties: &[Emptiness],
        marks: &mut [u16],
        value: &mut dyn FnMut(usize) -> Option<Value>,
    ) -> Result<(), Undecided> {
        for (j, (takes, _, condition)) in self.wheres.iter().enumerate() {
            let taken = |i: usize| marks[i] == KEEP && takes.takes_kind(empties[i]);
            if !(0..keys.len()).any(taken) {
                continue;
            }
            let mut read = crate::value::Map::new();
            for name in &condition.keys {
                // The last of a repeated key is its value (the parser's rule).
                let Some(i) = (0..keys.len())
                    .rev()
                    .find(|&i| marks[i] == KEEP && keys[i] == name)
                else {
                    continue;
                };
                match value(i) {
                    Some(v) if !matches!(v, Value::Array(_) | Value::Object(_)) => {
                        read.insert(name.as_str(), v);
                    }
                    _ => return Err(Undecided),
                }
            }
            let params = &self.params;
            if condition
                .expr
                .eval(&Value::Object(read), &|n| params.value(n))
            {
                let mark = PRUNED + (self.empties.len() + j) as u16;
                for i in 0..keys.len() {
                    if marks[i] == KEEP && takes.takes_kind(empties[i]) {
                        marks[i] = mark;
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether a test looks only in some objects: a parse must then say where each object
    /// is ([`At`]), which only the parser does (not the stream, nor a helper thread).
    pub(crate) fn scoped(&self) -> bool {
        self.scopes
            .iter()
            .any(|s| !matches!(s, ScopeMask::Anywhere))
    }

    /// The context names `key` is, a bit each (see [`At::parent`]).
    #[inline]
    pub(super) fn context_of(&self, key: &str) -> u64 {
        let mut mask = 0;
        for (i, name) in self.context.iter().enumerate() {
            if **name == *key {
                mask |= 1 << i;
            }
        }
        mask
    }

    /// Whether some test may name `key`: no name is as long as it (and no glob), and it is
    /// kept without a comparison.
    #[inline]
    fn may_name(&self, key: &str) -> bool {
        let bit = if key.len() < 63 {
            1 << key.len()
        } else {
            1 << 63
        };
        self.lengths & (bit | 1 << 63) != 0
    }

    /// The key test (the first, in op order) that drops a member named `key` of an object
    /// that is `at`.
    #[inline]
    pub(super) fn mark_at(&self, key: &str, at: At) -> u16 {
        if !self.may_name(key) {
            return KEEP;
        }
        let found = self
            .keys
            .iter()
            .zip(&self.scopes)
            .position(|((t, _, _), s)| s.holds(at) && t.matches(key));
        match found {
            // At most MAX_TESTS tests (see `new`), so the index fits below PRUNED.
            Some(i) => i as u16,
            None => KEEP,
        }
    }

    /// The key test (the first, in op order) that drops a member named `key`, for an
    /// [`Omit`] whose every test looks anywhere (not [`Omit::scoped`]).
    #[inline]
    pub(crate) fn mark(&self, key: &str) -> u16 {
        debug_assert!(!self.scoped());
        if !self.may_name(key) {
            return KEEP;
        }
        match self.keys.iter().position(|(t, _, _)| t.matches(key)) {
            // At most MAX_TESTS tests (see `new`), so the index fits below PRUNED.
            Some(i) => i as u16,
            None => KEEP,
        }
    }

    /// The mark of a member marked `mark` by its key, now that its value (`v`: how empty it
    /// is) is known: a member no key test drops may be pruned (by the first prune op, in op
    /// order, that takes it), as the walk would after dropping.
    #[inline]
    pub(super) fn fate(&self, mark: u16, v: Emptiness) -> u16 {
        if mark != KEEP || v == Emptiness::NotEmpty {
            return mark;
        }
        match self.empties.iter().position(|(e, _)| e.takes_kind(v)) {
            // There are only a few prune ops in any policy.
            Some(i) => PRUNED + i as u16,
            None => KEEP,
        }
    }

    /// Whether a member that a door wrote stays, as the stream would decide it: marked
    /// `mark` by its key ([`Omit::mark`]), its value written as `value` (compact JSON,
    /// what it holds already left out, or, when `mark` drops it, nothing left out). A
    /// member that goes is counted, by its `key`. Only for an [`Omit`] that is not [`Omit::scoped`] and
    /// has no conditional prunes.
    pub(crate) fn settle_written<K: AsRef<str>>(
        &self,
        mark: u16,
        value: &str,
        key: impl FnOnce() -> K,
        omitted: &mut Omitted,
    ) -> bool {
        debug_assert!(!self.scoped() && !self.has_wheres());
        let empty = Emptiness::of_written(value);
        let mark = self.fate(mark, empty);
        if mark == KEEP {
            return true;
        }
        self.count_at(mark, key().as_ref(), empty, At::default(), omitted);
        false
    }

    /// Count a member `key` of an object that is `at` that does not stay (marked other than
    /// [`KEEP`]); `v`: how empty its value is. Which op removed it, and how the manifest
    /// says it.
    pub(super) fn count_at(
        &self,
        mark: u16,
        key: &str,
        v: Emptiness,
        at: At,
        omitted: &mut Omitted,
    ) -> (usize, Kind) {
        let (op, kind) = if mark >= PRUNED {
            let i = usize::from(mark - PRUNED);
            let op = match self.empties.get(i) {
                Some((_, op)) => *op,
                None => self.wheres[i - self.empties.len()].1,
            };
            (op, Kind::Empty)
        } else {
            let first = usize::from(mark);
            let (_, op, _) = self.keys[first];
            // Every selector that names the member matched it, as in the walk (once each has,
            // as on most of a large text, nothing is left to test).
            let unmatched = omitted.hit[first..].contains(&false);
            for (j, ((test, _, _), scope)) in self
                .keys
                .iter()
                .zip(&self.scopes)
                .enumerate()
                .skip(first)
                .filter(|_| unmatched)
            {
                if !omitted.hit[j] && (j == first || (scope.holds(at) && test.matches(key))) {
                    omitted.hit[j] = true;
                }
            }
            // As the walk's `drop` says it: what held nothing is reported as empty.
            let kind = if v != Emptiness::NotEmpty {
                Kind::Empty
            } else {
                Kind::Stripped
            };
            (op, kind)
        };
        omitted.counts[op][kind as usize] += 1;
        (op, kind)
    }

    /// Nothing left out yet.
    pub(crate) fn nothing_yet(&self) -> Omitted {
        Omitted {
            counts: vec![[0; Kind::ALL.len()]; self.ops],
            hit: vec![false; self.keys.len()],
            undecided: false,
        }
    }

    /// The selectors whose key tests dropped a member.
    pub(crate) fn selectors_hit<'s>(
        &'s self,
        omitted: &'s Omitted,
    ) -> impl Iterator<Item = usize> + 's {
        self.keys
            .iter()
            .zip(&omitted.hit)
            .filter(|&(_, &hit)| hit)
            .map(|((_, _, selector), _)| *selector)
    }
}

/// What a parse left out: counts per op and kind, and which key tests dropped something.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Omitted {
    pub counts: Vec<[u64; Kind::ALL.len()]>,
    hit: Vec<bool>,
    /// A condition could not be decided while parsing ([`Undecided`]): what was left out
    /// does not stand, and the text is parsed again whole.
    pub undecided: bool,
}

impl Omitted {
    /// Add what another parser (a helper's elements) left out.
    pub(crate) fn add(&mut self, other: Omitted) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts) {
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
        for (mine, theirs) in self.hit.iter_mut().zip(other.hit) {
            *mine |= theirs;
        }
        self.undecided |= other.undecided;
    }
}
