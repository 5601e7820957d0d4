//! Fuzz the filter expression parser: no input may panic, and every accepted expression
//! must evaluate against a sample item.
use pare::query::expr::Expr;
use pare::value::{Map, Value};

/// The check on one input: returns, or panics on a fault.
pub fn check(data: &[u8]) {
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(expr) = Expr::parse(src) else {
        return;
    };
    assert_eq!(expr.source(), src);
    let params = expr.params();
    let mut item = Map::new();
    item.insert("a", Value::from(1));
    item.insert("b", Value::from("x"));
    item.insert("c", Value::Array(vec![Value::Null, Value::Bool(true)]));
    let item = Value::Object(item);
    let _ = expr.eval(&item, &|name| {
        params.iter().any(|p| p == name).then(|| Value::from(2))
    });
}
