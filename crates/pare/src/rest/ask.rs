//! What a REST caller asks pare for, from the query string and headers; the query string
//! without pare's parameters, for the handler or upstream (the rest of it byte for byte).
//!
//! | query | header | value |
//! |---|---|---|
//! | `pare_detail` | `X-Pare-Detail` | a level of the route's policy; `full`: the exact response |
//! | `pare_format` | `X-Pare-Format` | `json`, `pretty`, `toon`, `auto` (or `Accept: text/toon`) |
//! | `pare_max_tokens` | `X-Pare-Max-Tokens` | a budget (tokens), at most the route's |
//! | `pare_cursor` | — | the page a `Link: rel="next"` named |
//! | `pare_query` | `X-Pare-Query` | the question, for a `[pack]` route: results ranked by relevance to it |
//! | `pare_fields` | `X-Pare-Fields` | only these fields of the shaped body, comma-separated ([`crate::project`]) |
//!
//! The query wins over a header. A bad value is an error naming the parameter, the value
//! and the allowed values (a door answers `400` with [`AskError::body`]).

use crate::encode::Format;

use super::routes::RoutePolicy;

/// What the caller asked for; `None`: the route's setting.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ask {
    /// `pare_detail`: the level (checked by [`Ask::check`]); `full`: the handler's exact response.
    pub level: Option<String>,
    /// `pare_format` (or `Accept: text/toon`): the format of the shaped body.
    pub format: Option<Format>,
    /// `pare_max_tokens`: the budget in tokens, at least 1; the route's budget caps it.
    pub max_tokens: Option<usize>,
    /// `pare_cursor`: the page to send; `None`: the first.
    pub cursor: Option<String>,
    /// `pare_query`: the caller's question; a `[pack]` route ranks results by it.
    pub query: Option<String>,
    /// `pare_fields`: only these fields of the shaped body are sent ([`crate::project`]).
    pub fields: Option<crate::project::Fields>,
    /// The caller's `Accept` names JSON only (`application/json`, `application/*+json`):
    /// a body that is not JSON (packed search results) is sent as data instead.
    pub accepts_only_json: bool,
    /// The route policy's parameters the caller set (`pare_param_maxGapMinutes=5`, or the
    /// header `X-Pare-Param-maxGapMinutes: 5`), checked by [`Ask::check`]; never forwarded.
    pub params: Vec<(String, String)>,
}

/// The query parameter prefix of a policy parameter: `pare_param_<name>`.
pub(crate) const PARAM_QUERY: &str = "pare_param_";
/// The header prefix of a policy parameter: `X-Pare-Param-<name>` (any case).
pub(crate) const PARAM_HEADER: &str = "x-pare-param-";

/// A bad parameter.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{param}: {message}")]
pub struct AskError {
    /// The query parameter (or header) as the caller wrote it.
    pub param: String,
    /// The value as the caller gave it.
    pub value: String,
    /// The values allowed; empty when they cannot be listed (a number, a parameter value).
    pub allowed: Vec<String>,
    /// What is wrong with the value, for the caller.
    pub message: String,
}

impl AskError {
    /// The body of the `400` answer: `{"error": …, "param": …, "value": …, "allowed": […]}`.
    pub fn body(&self) -> String {
        serde_json::json!({
            "error": self.to_string(),
            "param": self.param,
            "value": self.value,
            "allowed": self.allowed,
        })
        .to_string()
    }
}

const FORMATS: [&str; 4] = ["json", "pretty", "toon", "auto"];

impl Ask {
    /// Read `query` (without `?`) and `headers` (name, value; names in any case). Returns
    /// the ask and the query string without pare's parameters.
    pub fn parse(query: &str, headers: &[(&str, &str)]) -> Result<(Ask, String), AskError> {
        let mut ask = Ask::default();
        let mut kept: Vec<&str> = Vec::new();
        let from_query = |name: &str, value: String, ask: &mut Ask| -> Result<(), AskError> {
            match name {
                "pare_detail" => ask.level = Some(value),
                "pare_format" => ask.format = Some(format(name, &value)?),
                "pare_max_tokens" => ask.max_tokens = Some(tokens(name, &value)?),
                "pare_query" => ask.query = Some(value),
                "pare_fields" => ask.fields = Some(fields(name, &value)?),
                _ => ask.cursor = Some(value),
            }
            Ok(())
        };
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let name = decode(k);
            if let Some(param) = name.strip_prefix(PARAM_QUERY) {
                set_param(&mut ask.params, param, decode(v));
                continue;
            }
            if matches!(
                name.as_str(),
                "pare_detail"
                    | "pare_format"
                    | "pare_max_tokens"
                    | "pare_cursor"
                    | "pare_query"
                    | "pare_fields"
            ) {
                from_query(&name, decode(v), &mut ask)?;
            } else {
                kept.push(pair);
            }
        }
        let from_query = ask.params.len();
        for (name, value) in headers {
            let value = value.trim();
            let lower = name.to_ascii_lowercase();
            if lower.starts_with(PARAM_HEADER) {
                // A header names the parameter in any case: take the policy's spelling
                // later (`check`); the query wins over a header.
                let param = &name[PARAM_HEADER.len()..];
                if !ask.params[..from_query]
                    .iter()
                    .any(|(k, _)| k.eq_ignore_ascii_case(param))
                {
                    set_param(&mut ask.params, param, value.to_owned());
                }
                continue;
            }
            match lower.as_str() {
                "x-pare-detail" if ask.level.is_none() => ask.level = Some(value.to_owned()),
                "x-pare-query" if ask.query.is_none() => ask.query = Some(value.to_owned()),
                "x-pare-fields" if ask.fields.is_none() => ask.fields = Some(fields(name, value)?),
                "x-pare-format" if ask.format.is_none() => ask.format = Some(format(name, value)?),
                "x-pare-max-tokens" if ask.max_tokens.is_none() => {
                    ask.max_tokens = Some(tokens(name, value)?)
                }
                "accept" if ask.format.is_none() && asks_toon(value) => {
                    ask.format = Some(Format::Toon)
                }
                "accept" => ask.accepts_only_json = only_json(value),
                _ => {}
            }
        }
        Ok((ask, kept.join("&")))
    }

    /// Check the level and the policy parameters against the route's policy (a header's
    /// parameter name takes the policy's spelling, as HTTP header names have no case).
    pub fn check(&mut self, route: &RoutePolicy) -> Result<(), AskError> {
        if let Some(l) = &self.level
            && route.policy.level_index(l).is_err()
        {
            return Err(AskError {
                param: "pare_detail".into(),
                value: l.clone(),
                allowed: route.policy.levels().to_vec(),
                message: format!(
                    "unknown level {l:?}; this route's levels: {}",
                    route.policy.levels().join(", ")
                ),
            });
        }
        let declared = &route.policy.options().params;
        let allowed: Vec<String> = declared.keys().cloned().collect();
        for (name, value) in &mut self.params {
            let Some(spelled) = declared.keys().find(|k| k.eq_ignore_ascii_case(name)) else {
                let message = if allowed.is_empty() {
                    format!(
                        "unknown parameter `{name}`: this route's policy declares no parameters"
                    )
                } else {
                    format!(
                        "unknown parameter `{name}`; this route's policy declares: {}",
                        allowed.join(", ")
                    )
                };
                return Err(AskError {
                    param: format!("{PARAM_QUERY}{name}"),
                    value: value.clone(),
                    allowed: allowed.clone(),
                    message,
                });
            };
            name.clone_from(spelled);
            if let Err(e) = route.policy.params(&[(name.clone(), value.clone())]) {
                return Err(AskError {
                    param: format!("{PARAM_QUERY}{name}"),
                    value: value.clone(),
                    allowed: Vec::new(),
                    message: e.to_string(),
                });
            }
        }
        Ok(())
    }

    /// The caller asked for the handler's exact response.
    pub fn is_full(&self) -> bool {
        self.level.as_deref() == Some(crate::ops::compile::FULL)
    }
}

/// Whether the headers name a pare parameter (a door strips these before forwarding).
pub fn is_pare_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    matches!(
        n.as_str(),
        "x-pare-detail" | "x-pare-format" | "x-pare-max-tokens" | "x-pare-query" | "x-pare-fields"
    ) || n.starts_with(PARAM_HEADER)
}

/// `pare_fields` (or `X-Pare-Fields`) read: an error naming it and the bad field.
fn fields(param: &str, value: &str) -> Result<crate::project::Fields, AskError> {
    crate::project::Fields::parse_list(value).map_err(|e| AskError {
        param: param.to_owned(),
        value: value.to_owned(),
        allowed: Vec::new(),
        message: e.to_string(),
    })
}

/// Set `name` to `value`, the last setting winning.
fn set_param(params: &mut Vec<(String, String)>, name: &str, value: String) {
    match params.iter_mut().find(|(k, _)| k == name) {
        Some(p) => p.1 = value,
        None => params.push((name.to_owned(), value)),
    }
}

/// Every media type `accept` lists is JSON.
fn only_json(accept: &str) -> bool {
    let mut media = accept
        .split(',')
        .filter(|part| !part.split(';').next().unwrap_or("").trim().is_empty())
        .peekable();
    media.peek().is_some() && media.all(super::response::is_json)
}

fn asks_toon(accept: &str) -> bool {
    accept.split(',').any(|part| {
        let media = part.split(';').next().unwrap_or("").trim();
        media.eq_ignore_ascii_case("text/toon") || media.eq_ignore_ascii_case("application/toon")
    })
}

fn format(param: &str, value: &str) -> Result<Format, AskError> {
    Format::parse(value).ok_or_else(|| AskError {
        param: param.to_owned(),
        value: value.to_owned(),
        allowed: FORMATS.map(String::from).to_vec(),
        message: format!("unknown format {value:?}; allowed: {}", FORMATS.join(", ")),
    })
}

fn tokens(param: &str, value: &str) -> Result<usize, AskError> {
    value
        .parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| AskError {
            param: param.to_owned(),
            value: value.to_owned(),
            allowed: Vec::new(),
            message: format!("{value:?} is not a number of tokens (a whole number, at least 1)"),
        })
}

/// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a byte.
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                match std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pare_parameters_come_out_and_the_rest_stays_byte_for_byte() {
        let (ask, rest) = Ask::parse(
            "a=1&pare_detail=brief&b=%2Fx+y&pare_format=toon&pare_max_tokens=900&pare_cursor=Ab3&c",
            &[],
        )
        .unwrap();
        assert_eq!(rest, "a=1&b=%2Fx+y&c");
        assert_eq!(ask.level.as_deref(), Some("brief"));
        assert_eq!(ask.format, Some(Format::Toon));
        assert_eq!(ask.max_tokens, Some(900));
        assert_eq!(ask.cursor.as_deref(), Some("Ab3"));
        assert_eq!(decode("a%20b+c%zz%4"), "a b c%zz%4");
    }

    #[test]
    fn headers_ask_too_and_the_query_wins() {
        let h = [
            ("X-Pare-Detail", "full"),
            ("x-pare-max-tokens", "50"),
            ("Accept", "text/toon, */*"),
        ];
        let (ask, _) = Ask::parse("", &h).unwrap();
        assert!(ask.is_full());
        assert_eq!((ask.max_tokens, ask.format), (Some(50), Some(Format::Toon)));
        let (ask, _) = Ask::parse("pare_detail=brief&pare_format=json", &h).unwrap();
        assert_eq!(
            (ask.level.as_deref(), ask.format),
            (Some("brief"), Some(Format::Json))
        );
        assert!(is_pare_header("X-PARE-DETAIL") && !is_pare_header("accept"));
    }

    #[test]
    fn bad_values_name_the_parameter_and_the_allowed_values() {
        let e = Ask::parse("pare_format=yaml", &[]).unwrap_err();
        assert_eq!(
            (e.param.as_str(), e.value.as_str()),
            ("pare_format", "yaml")
        );
        assert_eq!(e.allowed, FORMATS);
        let body: serde_json::Value = serde_json::from_str(&e.body()).unwrap();
        assert_eq!(body["param"], "pare_format");
        let e = Ask::parse("", &[("X-Pare-Max-Tokens", "lots")]).unwrap_err();
        assert_eq!(e.param, "X-Pare-Max-Tokens");
        assert!(Ask::parse("pare_max_tokens=0", &[]).is_err());
    }

    #[test]
    fn policy_parameters_come_from_the_query_or_headers_and_are_checked() {
        let (mut ask, rest) = Ask::parse(
            "a=1&pare_param_maxGapMinutes=5&b=2",
            &[
                ("X-Pare-Param-Other", "x"),
                ("x-pare-param-maxgapminutes", "9"),
            ],
        )
        .unwrap();
        assert_eq!(rest, "a=1&b=2");
        assert!(is_pare_header("X-Pare-Param-maxGapMinutes"));
        // The query wins over a header naming the same parameter in another case.
        assert_eq!(
            ask.params,
            [
                ("maxGapMinutes".to_owned(), "5".to_owned()),
                ("Other".to_owned(), "x".to_owned())
            ]
        );
        let route = RoutePolicy {
            name: "test".into(),
            policy: std::sync::Arc::new(
                crate::Policy::parse("[params]\nmaxGapMinutes = 2.0\n").unwrap(),
            ),
            default_level: "standard".into(),
            format: Format::Json,
            max_tokens: None,
        };
        let err = ask.check(&route).unwrap_err();
        assert_eq!(err.param, "pare_param_Other");
        assert_eq!(err.allowed, ["maxGapMinutes"]);
        let (mut ask, _) = Ask::parse("", &[("x-pare-param-maxgapminutes", "7")]).unwrap();
        ask.check(&route).unwrap();
        assert_eq!(ask.params, [("maxGapMinutes".to_owned(), "7".to_owned())]);
        let (mut bad, _) = Ask::parse("pare_param_maxGapMinutes=soon", &[]).unwrap();
        let err = bad.check(&route).unwrap_err();
        assert_eq!(
            (err.param.as_str(), err.value.as_str()),
            ("pare_param_maxGapMinutes", "soon")
        );
        assert!(err.message.contains("number"), "{}", err.message);
    }
}
