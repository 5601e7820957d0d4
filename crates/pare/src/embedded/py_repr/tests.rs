use super::*;

fn repr_of(text: &str) -> Option<String> {
    let (v, end) = parse_leading(text).ok()?;
    assert_eq!(end, text.len(), "{text:?}");
    to_repr(&v)
}

#[test]
fn floats_print_as_python_does() {
    // Each pair checked against CPython 3.11's repr.
    let cases = [
        (0.0, "0.0"),
        (-0.0, "-0.0"),
        (1.0, "1.0"),
        (0.1, "0.1"),
        (1e16, "1e+16"),
        (1e15, "1000000000000000.0"),
        (123456789012345678.0, "1.2345678901234568e+17"),
        (1.5e-5, "1.5e-05"),
        (1e-4, "0.0001"),
        (1e-5, "1e-05"),
        (0.00012, "0.00012"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (-1234.5678, "-1234.5678"),
        (1e22, "1e+22"),
        (9007199254740993.0, "9007199254740992.0"),
        (1.0 / 3.0, "0.3333333333333333"),
    ];
    for (f, want) in cases {
        assert_eq!(float_repr(f), want, "{f:e}");
    }
}

#[test]
fn strings_print_as_python_does() {
    // Each checked against CPython 3.11's repr.
    let cases = [
        ("a", "'a'"),
        ("it's", "\"it's\""),
        ("a'b\"c", r#"'a\'b"c'"#),
        (
            "\t\n\r\0\u{7f}\u{80}\u{a0}\u{ad}é",
            r"'\t\n\r\x00\x7f\x80\xa0\xadé'",
        ),
        (
            "\u{200b}\u{2028}\u{feff}🎉\u{f0000}\\",
            r"'\u200b\u2028\ufeff🎉\U000f0000\\'",
        ),
        ("\u{3000}日本", r"'\u3000日本'"),
    ];
    for (s, want) in cases {
        let mut out = String::new();
        write_str(s, &mut out).unwrap();
        assert_eq!(out, want);
        assert_eq!(repr_of(&format!("[{want}]")), Some(format!("[{want}]")));
    }
}

#[test]
fn characters_of_unknown_printability_are_not_claimed() {
    let mut out = String::new();
    // U+0378 is unassigned today; a later Unicode may assign it and Python print it raw.
    assert_eq!(write_str("\u{378}", &mut out), None);
    assert_eq!(write_str("\u{1f9ff}", &mut out), None);
}

#[test]
fn layout_is_lenient_and_the_printer_strict() {
    // Read despite the spacing; printed back the way repr writes it, so a caller comparing
    // the two refuses the text.
    assert_eq!(repr_of("[1,2 ,  3]").as_deref(), Some("[1, 2, 3]"));
    assert_eq!(repr_of("{'a':1,}").as_deref(), Some("{'a': 1}"));
}

#[test]
fn reading_stops_where_the_value_ends() {
    let (v, end) = parse_leading("[None] and more").unwrap();
    assert_eq!((v, end), (Value::Array(vec![Value::Null]), 6));
}

#[test]
fn errors_say_where() {
    let e = parse_leading("[1, (2, 3)]").unwrap_err();
    assert_eq!((e.at, e.what), (4, "a tuple"));
    assert_eq!(
        parse_leading("'str'").unwrap_err().what,
        "expected '[' or '{'"
    );
    assert_eq!(
        parse_leading("['a\nb']").unwrap_err().what,
        "a line break in a string"
    );
    assert_eq!(
        parse_leading("['\\ud800']").unwrap_err().what,
        "a surrogate or out-of-range escape"
    );
    assert_eq!(parse_leading("[1, 2").unwrap_err().what, "unexpected end");
}

#[test]
fn numbers_that_are_not_python_reprs_do_not_print() {
    for lexeme in ["1.50", "1e5", "1E+16", "-0", "1e400"] {
        let n = Number::from_lexeme(lexeme).unwrap();
        assert_eq!(number_repr(&n), None, "{lexeme}");
    }
    for lexeme in ["0", "-12", "1.5", "1e+16", "1e-05", "-0.0"] {
        let n = Number::from_lexeme(lexeme).unwrap();
        assert_eq!(number_repr(&n), Some(lexeme));
    }
}
