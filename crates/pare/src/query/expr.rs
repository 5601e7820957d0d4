//! Filter predicates: the `where` of the filter op, evaluated against one item.
//!
//! A deliberately small language, so a policy reads like what it means and evaluation is a
//! short tree walk per item. Paths are relative to the item (`score`, `refs.id`, `@` for the
//! item itself, `['weird key']`, `tags[0]`), `$name` is a policy parameter, and literals are
//! JSON scalars with single or double quotes for strings.
//!
//! ```text
//! expr    := or
//! or      := and (('or' | '||') and)*
//! and     := not (('and' | '&&') not)*
//! not     := ('not' | '!') not | primary
//! primary := '(' expr ')' | operand (cmpop operand)?
//! cmpop   := '==' | '!=' | '<' | '<=' | '>' | '>='
//! operand := path | literal | '$' name
//! path    := (name | '@' | bracket) ('.' name | bracket)*
//! bracket := '[' (quoted-string | integer) ']'
//! literal := number | 'str' | "str" | true | false | null
//! ```
//!
//! Rules: a comparison with a missing side (path absent, parameter unset) is false, even
//! `!=`, so absence never makes an item match — while `not` inverts whatever it is given.
//! Numbers compare numerically, strings by byte order; booleans, null, arrays and objects
//! only by `==`/`!=` (structural); mixed kinds are unequal and unordered. A bare operand is
//! truthy unless missing, `null`, `false`, `0`, `""`, `[]` or `{}`. Keywords (`and`, `or`,
//! `not`, `true`, `false`, `null`) are not field names; write `@.not` or `['not']`.
//!
//! ```
//! use pare::query::expr::Expr;
//! use pare::value::{Map, Value};
//! let e = Expr::parse("score < $minScore and not (type == 'OM_SIMILAR')").unwrap();
//! let item: Map = [("score".to_owned(), Value::from(1))].into_iter().collect();
//! assert!(e.eval(&Value::Object(item), &|_| Some(Value::from(2))));
//! assert_eq!(e.params(), ["minScore"]);
//! ```

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

use super::selector::parse_quoted;
use crate::value::{Number, Value};

/// An expression that does not parse.
///
/// `Display` is written by hand: `thiserror` would take a field named `source` for the
/// error's cause, which a `String` cannot be.
#[derive(Debug, Clone, PartialEq)]
pub struct ExprError {
    /// The expression as written.
    pub source: String,
    /// 1-based character position of the problem.
    pub position: usize,
    /// What is wrong there, e.g. `invalid number '1.2.3'`.
    pub message: String,
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid expression `{}` at character {}: {}",
            self.source, self.position, self.message
        )
    }
}

impl std::error::Error for ExprError {}

/// A parsed filter predicate.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    source: String,
    root: Node,
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Or(Vec<Node>),
    And(Vec<Node>),
    Not(Box<Node>),
    Cmp(Operand, CmpOp, Operand),
    Truthy(Operand),
}

#[derive(Clone, Debug, PartialEq)]
enum Operand {
    /// Relative to the item; empty is the item itself.
    Path(Vec<Seg>),
    Literal(Value),
    Param(String),
}

#[derive(Clone, Debug, PartialEq)]
enum Seg {
    Key(String),
    /// Negative counts from the end.
    Index(i64),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Expr {
    /// Parses a predicate in the language of the [module docs](self).
    pub fn parse(src: &str) -> Result<Expr, ExprError> {
        let chars: Vec<char> = src.chars().collect();
        let err = |at: usize, message: String| ExprError {
            source: src.to_owned(),
            position: at + 1,
            message,
        };
        let toks = lex(&chars).map_err(|(at, m)| err(at, m))?;
        let mut p = Parser {
            chars: &chars,
            toks,
            i: 0,
        };
        let root = p.expr_top().map_err(|(at, m)| err(at, m))?;
        Ok(Expr {
            source: src.to_owned(),
            root,
        })
    }

    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The `$names` referenced, each once, in order of first use (for validation).
    pub fn params(&self) -> Vec<String> {
        fn walk(n: &Node, out: &mut Vec<String>) {
            let mut add = |o: &Operand| {
                if let Operand::Param(p) = o
                    && !out.contains(p)
                {
                    out.push(p.clone());
                }
            };
            match n {
                Node::Or(v) | Node::And(v) => v.iter().for_each(|c| walk(c, out)),
                Node::Not(c) => walk(c, out),
                Node::Cmp(a, _, b) => {
                    add(a);
                    add(b);
                }
                Node::Truthy(o) => add(o),
            }
        }
        let mut out = Vec::new();
        walk(&self.root, &mut out);
        out
    }

    /// The item's own members the predicate reads, each once, when every path it reads is
    /// one member's key (`relationship_type != null`); `None` when a path goes deeper, reads
    /// an index or the item itself.
    pub(crate) fn member_keys(&self) -> Option<Vec<String>> {
        fn walk(n: &Node, out: &mut Vec<String>) -> Option<()> {
            let mut add = |o: &Operand| match o {
                Operand::Path(segs) => match segs.as_slice() {
                    [Seg::Key(k)] => {
                        if !out.contains(k) {
                            out.push(k.clone());
                        }
                        Some(())
                    }
                    _ => None,
                },
                Operand::Literal(_) | Operand::Param(_) => Some(()),
            };
            match n {
                Node::Or(v) | Node::And(v) => v.iter().try_for_each(|c| walk(c, out)),
                Node::Not(c) => walk(c, out),
                Node::Cmp(a, _, b) => add(a).and_then(|()| add(b)),
                Node::Truthy(o) => add(o),
            }
        }
        let mut out = Vec::new();
        walk(&self.root, &mut out).map(|()| out)
    }

    /// Whether `item` satisfies the predicate; `params` supplies `$name` values (`None` is
    /// treated like a missing path).
    pub fn eval(&self, item: &Value, params: &dyn Fn(&str) -> Option<Value>) -> bool {
        eval(&self.root, item, params)
    }
}

fn eval(n: &Node, item: &Value, params: &dyn Fn(&str) -> Option<Value>) -> bool {
    match n {
        Node::Or(v) => v.iter().any(|c| eval(c, item, params)),
        Node::And(v) => v.iter().all(|c| eval(c, item, params)),
        Node::Not(c) => !eval(c, item, params),
        Node::Cmp(a, op, b) => match (resolve(a, item, params), resolve(b, item, params)) {
            (Some(a), Some(b)) => compare(&a, *op, &b),
            _ => false,
        },
        Node::Truthy(o) => resolve(o, item, params).is_some_and(|v| truthy(&v)),
    }
}

fn resolve<'v>(
    o: &'v Operand,
    item: &'v Value,
    params: &dyn Fn(&str) -> Option<Value>,
) -> Option<Cow<'v, Value>> {
    match o {
        Operand::Literal(v) => Some(Cow::Borrowed(v)),
        Operand::Param(p) => params(p).map(Cow::Owned),
        Operand::Path(segs) => {
            let mut cur = item;
            for s in segs {
                cur = match (s, cur) {
                    (Seg::Key(k), Value::Object(m)) => m.get(k)?,
                    (Seg::Index(i), Value::Array(a)) => {
                        let j = if *i >= 0 {
                            usize::try_from(*i).ok()?
                        } else {
                            a.len()
                                .checked_sub(usize::try_from(i.unsigned_abs()).ok()?)?
                        };
                        a.get(j)?
                    }
                    _ => return None,
                };
            }
            Some(Cow::Borrowed(cur))
        }
    }
}

fn compare(a: &Value, op: CmpOp, b: &Value) -> bool {
    let ord = match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x.partial_cmp(&y),
            _ => None,
        },
        (Value::String(x), Value::String(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        // Unordered kinds: equality is structural, ordering never holds.
        _ => {
            return match op {
                CmpOp::Eq => a == b,
                CmpOp::Ne => a != b,
                _ => false,
            };
        }
    };
    match op {
        CmpOp::Eq => ord == Some(Ordering::Equal),
        CmpOp::Ne => ord != Some(Ordering::Equal),
        CmpOp::Lt => ord == Some(Ordering::Less),
        CmpOp::Le => matches!(ord, Some(Ordering::Less | Ordering::Equal)),
        CmpOp::Gt => ord == Some(Ordering::Greater),
        CmpOp::Ge => matches!(ord, Some(Ordering::Greater | Ordering::Equal)),
    }
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

// ---- lexing ----

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    LParen,
    RParen,
    And,
    Or,
    Not,
    Cmp(CmpOp),
    Literal(Value),
    Param(String),
    /// `@`
    At,
    /// A bare name starting a path.
    Name(String),
    /// `.name` or `[…]` continuing (or, for `[…]`, starting) a path.
    Seg(Seg),
}

/// A token and its span of characters.
type Spanned = (Tok, usize, usize);
type Failure = (usize, String);

fn is_name_first(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || !c.is_ascii()
}

fn is_name_char(c: char) -> bool {
    is_name_first(c) || c.is_ascii_digit() || c == '-'
}

fn lex(chars: &[char]) -> Result<Vec<Spanned>, Failure> {
    let mut toks = Vec::new();
    let mut i = 0;
    let run = |from: usize, f: fn(char) -> bool| {
        let mut j = from;
        while chars.get(j).copied().is_some_and(f) {
            j += 1;
        }
        j
    };
    while let Some(&c) = chars.get(i) {
        let start = i;
        let tok = match c {
            ' ' | '\t' | '\n' | '\r' => {
                i += 1;
                continue;
            }
            '(' => {
                i += 1;
                Tok::LParen
            }
            ')' => {
                i += 1;
                Tok::RParen
            }
            '@' => {
                i += 1;
                Tok::At
            }
            '&' | '|' => {
                if chars.get(i + 1) == Some(&c) {
                    i += 2;
                    if c == '&' { Tok::And } else { Tok::Or }
                } else {
                    let word = if c == '&' { "and" } else { "or" };
                    return Err((i, format!("unknown operator '{c}'; use '{word}'")));
                }
            }
            '=' | '!' | '<' | '>' | '~' => {
                i = run(i, |c| matches!(c, '=' | '!' | '<' | '>' | '~'));
                let op: String = chars[start..i].iter().collect();
                let cmp = match op.as_str() {
                    "==" => CmpOp::Eq,
                    "!=" => CmpOp::Ne,
                    "<" => CmpOp::Lt,
                    "<=" => CmpOp::Le,
                    ">" => CmpOp::Gt,
                    ">=" => CmpOp::Ge,
                    _ if op.chars().all(|c| c == '!') => {
                        // `!` is `not`; `!!x` is two of them.
                        toks.extend((start..i).map(|j| (Tok::Not, j, j + 1)));
                        continue;
                    }
                    _ => {
                        let hint = match op.as_str() {
                            "=" | "===" => "; use '=='",
                            "<>" | "!==" => "; use '!='",
                            "=<" => "; use '<='",
                            "=>" => "; use '>='",
                            _ => "",
                        };
                        return Err((start, format!("unknown operator '{op}'{hint}")));
                    }
                };
                Tok::Cmp(cmp)
            }
            '\'' | '"' => {
                let (s, end) = parse_quoted(chars, i, c)?;
                i = end;
                Tok::Literal(Value::String(s.into()))
            }
            '-' | '0'..='9' => {
                // Take the whole word so `1abc` or `1.2.3` is one bad number, not two tokens.
                i = run(i + 1, |c| c.is_ascii_alphanumeric() || c == '.' || c == '_');
                while matches!(chars.get(i - 1), Some('e' | 'E'))
                    && matches!(chars.get(i), Some('+' | '-'))
                {
                    i = run(i + 1, |c| c.is_ascii_alphanumeric() || c == '.' || c == '_');
                }
                let lexeme: String = chars[start..i].iter().collect();
                match Number::from_lexeme(&lexeme) {
                    Some(n) => Tok::Literal(Value::Number(n)),
                    None if lexeme == "-" => {
                        return Err((start, "expected a number after '-'".into()));
                    }
                    None => return Err((start, format!("invalid number '{lexeme}'"))),
                }
            }
            '$' => {
                i = run(i + 1, is_name_char);
                if i == start + 1 || !is_name_first(chars[start + 1]) {
                    return Err((
                        start,
                        "expected a parameter name after '$' (item fields are written \
                         `name` or `@.name`)"
                            .into(),
                    ));
                }
                Tok::Param(chars[start + 1..i].iter().collect())
            }
            '.' => {
                i = run(i + 1, is_name_char);
                match chars.get(start + 1) {
                    Some(&c) if is_name_first(c) => {}
                    Some(&c) if is_name_char(c) => {
                        let name: String = chars[start + 1..i].iter().collect();
                        return Err((
                            start + 1,
                            format!("a name cannot start with '{c}'; write ['{name}']"),
                        ));
                    }
                    _ => return Err((start, "expected a name after '.'".into())),
                }
                Tok::Seg(Seg::Key(chars[start + 1..i].iter().collect()))
            }
            '[' => {
                let (seg, end) = bracket(chars, i)?;
                i = end;
                Tok::Seg(seg)
            }
            c if is_name_first(c) => {
                i = run(i, is_name_char);
                let word: String = chars[start..i].iter().collect();
                match word.as_str() {
                    "and" => Tok::And,
                    "or" => Tok::Or,
                    "not" => Tok::Not,
                    "true" => Tok::Literal(Value::Bool(true)),
                    "false" => Tok::Literal(Value::Bool(false)),
                    "null" => Tok::Literal(Value::Null),
                    _ => Tok::Name(word),
                }
            }
            c => return Err((i, format!("unexpected character '{c}'"))),
        };
        toks.push((tok, start, i));
    }
    Ok(toks)
}

/// `[` blanks (quoted name | integer) blanks `]` at `chars[open]`.
fn bracket(chars: &[char], open: usize) -> Result<(Seg, usize), Failure> {
    let blanks = |mut j: usize| {
        while chars
            .get(j)
            .is_some_and(|c| matches!(c, ' ' | '\t' | '\n' | '\r'))
        {
            j += 1;
        }
        j
    };
    let mut i = blanks(open + 1);
    let seg = match chars.get(i) {
        Some(&q @ ('\'' | '"')) => {
            let (s, end) = parse_quoted(chars, i, q)?;
            i = end;
            Seg::Key(s)
        }
        Some(&c) if c == '-' || c.is_ascii_digit() => {
            let start = i;
            i += 1;
            while chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
                i += 1;
            }
            let digits: String = chars[start..i].iter().collect();
            match digits.parse::<i64>() {
                Ok(n) => Seg::Index(n),
                Err(_) => return Err((start, format!("invalid index '{digits}'"))),
            }
        }
        None => return Err((open, "unclosed '['".into())),
        Some(_) => {
            return Err((i, "expected a quoted name or an index in '[…]'".into()));
        }
    };
    i = blanks(i);
    match chars.get(i) {
        Some(']') => Ok((seg, i + 1)),
        None => Err((open, "unclosed '['".into())),
        Some(c) => Err((i, format!("expected ']', found '{c}'"))),
    }
}

// ---- parsing ----

/// Nesting of parentheses and `not`, bounded so no input can exhaust the stack.
const MAX_DEPTH: usize = 64;

struct Parser<'c> {
    chars: &'c [char],
    toks: Vec<Spanned>,
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i).map(|t| &t.0)
    }

    fn text(&self, i: usize) -> String {
        self.toks
            .get(i)
            .map(|&(_, s, e)| self.chars[s..e].iter().collect())
            .unwrap_or_default()
    }

    /// Where token `i` starts (the end of the input past the last token).
    fn at(&self, i: usize) -> usize {
        self.toks.get(i).map_or(self.chars.len(), |t| t.1)
    }

    fn expr_top(&mut self) -> Result<Node, Failure> {
        if self.toks.is_empty() {
            return Err((0, "empty expression".into()));
        }
        let node = self.or(0)?;
        match self.peek() {
            None => Ok(node),
            Some(Tok::RParen) => Err((self.at(self.i), "unexpected ')'".into())),
            Some(_) => Err(self.unexpected("expected 'and', 'or' or the end")),
        }
    }

    fn unexpected(&self, expected: &str) -> Failure {
        let found = self.text(self.i);
        let msg = match self.peek() {
            Some(Tok::Cmp(_)) if self.i >= 2 && matches!(self.toks[self.i - 2].0, Tok::Cmp(_)) => {
                "comparisons cannot be chained; use 'and'".to_owned()
            }
            _ => format!("unexpected '{found}'; {expected}"),
        };
        (self.at(self.i), msg)
    }

    fn or(&mut self, depth: usize) -> Result<Node, Failure> {
        let mut v = vec![self.and(depth)?];
        while self.peek() == Some(&Tok::Or) {
            self.i += 1;
            v.push(self.and(depth)?);
        }
        Ok(if v.len() == 1 {
            v.remove(0)
        } else {
            Node::Or(v)
        })
    }

    fn and(&mut self, depth: usize) -> Result<Node, Failure> {
        let mut v = vec![self.not(depth)?];
        while self.peek() == Some(&Tok::And) {
            self.i += 1;
            v.push(self.not(depth)?);
        }
        Ok(if v.len() == 1 {
            v.remove(0)
        } else {
            Node::And(v)
        })
    }

    fn not(&mut self, depth: usize) -> Result<Node, Failure> {
        if depth >= MAX_DEPTH {
            return Err((self.at(self.i), "expression nested too deeply".into()));
        }
        if self.peek() == Some(&Tok::Not) {
            self.i += 1;
            return Ok(Node::Not(Box::new(self.not(depth + 1)?)));
        }
        self.primary(depth)
    }

    fn primary(&mut self, depth: usize) -> Result<Node, Failure> {
        if self.peek() == Some(&Tok::LParen) {
            let open = self.i;
            self.i += 1;
            let inner = self.or(depth + 1)?;
            return match self.peek() {
                Some(Tok::RParen) => {
                    self.i += 1;
                    Ok(inner)
                }
                None => Err((self.at(open), "unclosed '('".into())),
                Some(_) => Err(self.unexpected("expected 'and', 'or' or ')'")),
            };
        }
        let a = self.operand()?;
        let Some(&Tok::Cmp(op)) = self.peek() else {
            return Ok(Node::Truthy(a));
        };
        self.i += 1;
        let b = self.operand()?;
        Ok(Node::Cmp(a, op, b))
    }

    fn operand(&mut self) -> Result<Operand, Failure> {
        let Some((tok, start, _)) = self.toks.get(self.i).cloned() else {
            return Err((self.chars.len(), self.expected_value()));
        };
        self.i += 1;
        let mut segs = match tok {
            Tok::Literal(v) => return Ok(Operand::Literal(v)),
            Tok::Param(p) => return Ok(Operand::Param(p)),
            Tok::At => Vec::new(),
            Tok::Name(n) => vec![Seg::Key(n)],
            Tok::Seg(Seg::Index(_)) => {
                return Err((
                    start,
                    "a path cannot start with an index; write @[0]".into(),
                ));
            }
            Tok::Seg(Seg::Key(k)) if self.chars[start] == '[' => vec![Seg::Key(k)],
            Tok::Seg(Seg::Key(_)) => {
                return Err((start, "a path starts with a name or '@'".into()));
            }
            _ => {
                self.i -= 1;
                let found = self.text(self.i);
                return Err((start, format!("{}, found '{found}'", self.expected_value())));
            }
        };
        while let Some(Tok::Seg(s)) = self.peek() {
            segs.push(s.clone());
            self.i += 1;
        }
        Ok(Operand::Path(segs))
    }

    /// "expected a value", saying after what.
    fn expected_value(&self) -> String {
        if self.i == 0 {
            "expected a value".into()
        } else {
            format!("expected a value after '{}'", self.text(self.i - 1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::selector::tests::json;
    use super::*;
    use proptest::prelude::*;

    fn check(src: &str, item: &str) -> bool {
        let e = Expr::parse(src).unwrap_or_else(|e| panic!("{e}"));
        e.eval(&json(item), &|name| match name {
            "minScore" => Some(Value::from(2)),
            "kind" => Some(Value::from("OM")),
            "on" => Some(Value::Bool(true)),
            _ => None,
        })
    }

    fn err(src: &str) -> (usize, String) {
        let e = Expr::parse(src).unwrap_err();
        assert_eq!(e.source, src);
        (e.position, e.message)
    }

    #[test]
    fn numbers_compare_numerically() {
        assert!(check("minutes < 0.5", r#"{"minutes": 0.25}"#));
        assert!(!check("minutes < 0.5", r#"{"minutes": 0.5}"#));
        assert!(check("minutes <= 0.5", r#"{"minutes": 0.50}"#));
        assert!(check("minutes == 0.5", r#"{"minutes": 5e-1}"#));
        assert!(check("n > -1", r#"{"n": 0}"#));
        assert!(check("n >= 10", r#"{"n": 10}"#));
        assert!(check("n != 10", r#"{"n": 9}"#));
        assert!(check("10 > n", r#"{"n": 9}"#));
        assert!(check(
            "n == 1e+5 and n > 9.9e4 and n < 1E6 and 0.2 == 2e-1",
            r#"{"n": 100000}"#
        ));
        assert!(check(
            "big == 123456789012345678901234567890",
            r#"{"big": 1.2345678901234568e29}"#
        ));
        assert!(check("score < $minScore", r#"{"score": 1}"#));
        assert!(!check("score < $minScore", r#"{"score": 3}"#));
    }

    #[test]
    fn strings_compare_by_bytes() {
        assert!(check("type == 'OM_SIMILAR'", r#"{"type": "OM_SIMILAR"}"#));
        assert!(check(r#"type != "x""#, r#"{"type": "y"}"#));
        assert!(check("name < 'b'", r#"{"name": "abc"}"#));
        assert!(check("name > 'Z'", r#"{"name": "a"}"#));
        assert!(check("name >= 'a'", r#"{"name": "a"}"#));
        assert!(check("type == $kind", r#"{"type": "OM"}"#));
        assert!(check(r"s == 'it\'s'", r#"{"s": "it's"}"#));
    }

    #[test]
    fn other_kinds_only_by_equality() {
        assert!(check("flag == true", r#"{"flag": true}"#));
        assert!(check("flag != false", r#"{"flag": true}"#));
        assert!(!check("flag > false", r#"{"flag": true}"#));
        assert!(check("x == null", r#"{"x": null}"#));
        assert!(!check("x < null", r#"{"x": null}"#));
        assert!(check("flag == $on", r#"{"flag": true}"#));
        assert!(check(
            "a == b",
            r#"{"a": [1, {"k": 2}], "b": [1, {"k": 2}]}"#
        ));
        assert!(!check("a < b", r#"{"a": [1], "b": [2]}"#));
        // Mixed kinds: unequal, unordered.
        assert!(!check("n == '1'", r#"{"n": 1}"#));
        assert!(check("n != '1'", r#"{"n": 1}"#));
        assert!(!check("n < '1'", r#"{"n": 0}"#));
        assert!(!check("x == 0", r#"{"x": null}"#));
        assert!(check("x != 0", r#"{"x": null}"#));
    }

    #[test]
    fn absence_never_matches_a_comparison() {
        for src in [
            "gone == 1",
            "gone != 1",
            "gone < 1",
            "gone == null",
            "1 != gone",
            "n == $unset",
            "n != $unset",
        ] {
            assert!(!check(src, r#"{"n": 1}"#), "{src}");
        }
        // …but `not` inverts whatever it is given.
        assert!(check("not (gone == 1)", r#"{"n": 1}"#));
        assert!(check("not gone", r#"{"n": 1}"#));
    }

    #[test]
    fn bare_operands_are_truthy() {
        let item = r#"{"t": true, "f": false, "z": 0, "zf": 0.0, "one": 1, "e": "", "s": "x",
            "ea": [], "a": [0], "eo": {}, "o": {"k": null}, "nul": null}"#;
        for yes in [
            "t",
            "one",
            "s",
            "a",
            "o",
            "@",
            "true",
            "1",
            "'x'",
            "$on",
            "$minScore",
            "-0.5",
        ] {
            assert!(check(yes, item), "{yes}");
        }
        for no in [
            "f", "z", "zf", "e", "ea", "eo", "nul", "gone", "false", "null", "0", "''", "$unset",
            "o.k",
        ] {
            assert!(!check(no, item), "{no}");
        }
    }

    #[test]
    fn member_keys_are_the_members_an_expression_reads_when_it_reads_only_those() {
        let keys = |src: &str| Expr::parse(src).unwrap().member_keys();
        assert_eq!(
            keys("relationship_type != null && (a > 1 || !b) && a < $max"),
            Some(vec!["relationship_type".into(), "a".into(), "b".into()])
        );
        assert_eq!(keys("a.b == 1"), None);
        assert_eq!(keys("a[0] == 1"), None);
    }

    #[test]
    fn paths_are_relative_to_the_item() {
        let item = r#"{"refs": {"id": "r1", "weird key": 3, "not": 4, "memory-123": 5},
            "tags": ["x", "y"], "0": "zero"}"#;
        assert!(check("refs.id == 'r1'", item));
        assert!(check("@.refs.id == 'r1'", item));
        assert!(check("@.refs['weird key'] == 3", item));
        assert!(check("refs[\"weird key\"] == 3", item));
        assert!(check("['refs'].id == 'r1'", item));
        assert!(check("refs.not == 4", item));
        assert!(check("refs.memory-123 == 5", item));
        assert!(check(
            "tags[0] == 'x' and tags[-1] == 'y' and tags[ 1 ] == 'y'",
            item
        ));
        assert!(!check(
            "tags[2] or tags[-3] or tags.x or refs[0] or tags['0']",
            item
        ));
        assert!(check("['0'] == 'zero'", item));
        assert!(check("@ == @", item));
        assert!(check("@['tags'][1] == 'y'", item));
        // The item itself may be a scalar.
        assert!(check("@ > 3", "4"));
        assert!(!check("x", "4"));
    }

    #[test]
    fn boolean_structure_and_precedence() {
        let item = r#"{"score": 1, "type": "OM_SIMILAR", "a": true, "b": false}"#;
        assert!(!check(
            "score < $minScore and not (type == 'OM_SIMILAR')",
            item
        ));
        assert!(check("score < $minScore and not (type == 'OTHER')", item));
        // and binds tighter than or; not tighter than and.
        assert!(check("a or b and b", item));
        assert!(!check("(a or b) and b", item));
        assert!(check("not b and a", item));
        assert!(!check("not (b or a)", item));
        assert!(check("not not a", item));
        assert!(check("!b && a || b", item));
        assert!(check("!!a", item));
        assert!(check("a or a or b and b and b", item));
        assert!(check("(((a)))", item));
        assert!(check("not score == 2", item));
    }

    #[test]
    fn params_are_listed_once_in_order() {
        let e = Expr::parse("a < $max and ($min < a or $max) and not $flag-2").unwrap();
        assert_eq!(e.params(), ["max", "min", "flag-2"]);
        assert!(Expr::parse("a < 1").unwrap().params().is_empty());
        assert_eq!(
            e.source(),
            "a < $max and ($min < a or $max) and not $flag-2"
        );
        assert_eq!(e.to_string(), e.source());
    }

    #[test]
    fn rejects_with_precise_errors() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 1, "empty expression"),
            ("   ", 1, "empty expression"),
            ("minutes <", 10, "expected a value after '<'"),
            (
                "minutes < and x",
                11,
                "expected a value after '<', found 'and'",
            ),
            ("a =~ 'x'", 3, "unknown operator '=~'"),
            ("a = 1", 3, "unknown operator '='; use '=='"),
            ("a === 1", 3, "unknown operator '==='; use '=='"),
            ("a <> 1", 3, "unknown operator '<>'; use '!='"),
            ("a => 1", 3, "unknown operator '=>'; use '>='"),
            ("a =< 1", 3, "unknown operator '=<'; use '<='"),
            ("a & b", 3, "unknown operator '&'; use 'and'"),
            ("a | b", 3, "unknown operator '|'; use 'or'"),
            ("(a < 1", 1, "unclosed '('"),
            ("x and ((a)", 7, "unclosed '('"),
            ("a < 1)", 6, "unexpected ')'"),
            ("(a b)", 4, "unexpected 'b'; expected 'and', 'or' or ')'"),
            ("a b", 3, "unexpected 'b'; expected 'and', 'or' or the end"),
            ("a < 1 < 2", 7, "comparisons cannot be chained; use 'and'"),
            (
                "(a) == 1",
                5,
                "unexpected '=='; expected 'and', 'or' or the end",
            ),
            ("a and", 6, "expected a value after 'and'"),
            ("a or or", 6, "expected a value after 'or', found 'or'"),
            ("not", 4, "expected a value after 'not'"),
            ("()", 2, "expected a value after '(', found ')'"),
            ("== 1", 1, "expected a value, found '=='"),
            ("a == 'x", 6, "unclosed string"),
            (r"a == 'x\q'", 8, r"invalid escape `\q`"),
            ("a == 01", 6, "invalid number '01'"),
            ("a == 1.", 6, "invalid number '1.'"),
            ("a == 1abc", 6, "invalid number '1abc'"),
            ("a == 1.2.3", 6, "invalid number '1.2.3'"),
            ("a == -", 6, "expected a number after '-'"),
            ("a == -x", 6, "invalid number '-x'"),
            (
                "a < $",
                5,
                "expected a parameter name after '$' (item fields are written `name` or `@.name`)",
            ),
            (
                "$.a < 1",
                1,
                "expected a parameter name after '$' (item fields are written `name` or `@.name`)",
            ),
            ("@. < 1", 2, "expected a name after '.'"),
            ("a.1b < 1", 3, "a name cannot start with '1'; write ['1b']"),
            (".a < 1", 1, "a path starts with a name or '@'"),
            (
                "[0] < 1",
                1,
                "a path cannot start with an index; write @[0]",
            ),
            ("a[ < 1", 4, "expected a quoted name or an index in '[…]'"),
            ("a['x' < 1", 7, "expected ']', found '<'"),
            ("a['x'", 2, "unclosed '['"),
            (
                "a[99999999999999999999]",
                3,
                "invalid index '99999999999999999999'",
            ),
            ("a # b", 3, "unexpected character '#'"),
            (
                "a == 1 b",
                8,
                "unexpected 'b'; expected 'and', 'or' or the end",
            ),
        ];
        for &(src, pos, msg) in cases {
            assert_eq!(err(src), (pos, msg.to_owned()), "{src}");
        }
        assert_eq!(
            Expr::parse("minutes <").unwrap_err().to_string(),
            "invalid expression `minutes <` at character 10: expected a value after '<'"
        );
        let deep = format!("{}a{}", "(".repeat(100), ")".repeat(100));
        assert_eq!(err(&deep), (65, "expression nested too deeply".into()));
        assert_eq!(err(&"not ".repeat(100)).1, "expression nested too deeply");
        assert!(Expr::parse(&format!("{}a{}", "(".repeat(60), ")".repeat(60))).is_ok());
        // Long flat chains do not nest.
        assert!(Expr::parse(&vec!["a"; 5000].join(" and ")).is_ok());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn parse_never_panics(src in "\\PC{0,32}") {
            if let Err(e) = Expr::parse(&src) {
                prop_assert!(e.position >= 1 && e.position <= src.chars().count() + 1);
            }
        }

        #[test]
        fn parse_never_panics_near_valid(src in "[a-c@$.()\\[\\]'\"0-9 !=<>&|-]{0,24}|((not|and|or|true|null|a|b|0|-1|'s'|==|<|!|\\(|\\)) ){0,12}") {
            match Expr::parse(&src) {
                Ok(e) => {
                    let item = json(r#"{"a": [1, "s"], "b": {"c": null}}"#);
                    let _ = e.eval(&item, &|_| Some(Value::from(1)));
                    let _ = e.params();
                }
                Err(e) => prop_assert!(e.position >= 1 && e.position <= src.chars().count() + 1),
            }
        }
    }
}
