//! Which requests are shaped, by what: the `[http]` section resolved into route patterns
//! (`GET /api/entities/{id}`) and each route's policy, default level, format and budget.
//!
//! Matching: the first `[[http.routes]]` entry with a pattern that matches wins. A pattern
//! is `METHOD /path`, `* /path` or `/path` (any method); methods compare case-insensitively.
//! Paths compare segment by segment: a literal segment matches itself, `*` and `{name}`
//! match one segment, `**` matches any number of segments (none included). A trailing `/`
//! on either side is ignored; the query string is not part of the path.

use super::identity::Identity;
use std::sync::Arc;

use crate::encode::Format;
use crate::policy::Policy;
use crate::schema::http::HttpOptions;
use crate::schema::mcp::McpFormat;

/// An `[http]` section that cannot be used. `E` is the door's error for a policy file an
/// entry names (the engine reads no files: the door's resolver does).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RoutesError<E: std::error::Error + 'static> {
    /// `http.routes[index].policy` could not be read or compiled.
    #[error("`http.routes[{index}].policy` = {reference:?}: {source}")]
    Resolve {
        /// The entry's index in `http.routes` (0-based).
        index: usize,
        /// The policy file as the entry names it.
        reference: String,
        /// The door's error for that file.
        #[source]
        source: E,
    },
    /// `http.routes[index].level` names no level of the route's policy.
    #[error("`http.routes[{index}].level`: {message}")]
    Level {
        /// The entry's index in `http.routes` (0-based).
        index: usize,
        /// What is wrong: the unknown level and the policy's levels.
        message: String,
    },
    /// A pattern in `http.routes[index].match` is malformed: no `/path`, or a bad method or
    /// segment.
    #[error("`http.routes[{index}].match[{pattern}]`: {message}")]
    Pattern {
        /// The entry's index in `http.routes` (0-based).
        index: usize,
        /// The pattern's index in the entry's `match` (0-based).
        pattern: usize,
        /// What is wrong, quoting the pattern.
        message: String,
    },
    /// `http.routes[index].max_tokens` is 0.
    #[error("`http.routes[{index}].max_tokens`: must be at least 1")]
    Budget {
        /// The entry's index in `http.routes` (0-based).
        index: usize,
    },
}

/// How one route's responses are shaped.
#[derive(Debug)]
pub struct RoutePolicy {
    /// The route's name in metrics and logs: its entry's first pattern as written
    /// (`GET /api/entities`), or `default` for `shape_unmatched`.
    pub name: String,
    /// The policy responses are shaped by: the entry's `policy` file, else the one with `[http]`.
    pub policy: Arc<Policy>,
    /// The level when the caller names none (lowered to fit a budget).
    pub default_level: String,
    /// The format of shaped bodies when the caller names none: the entry's, else `json`.
    pub format: Format,
    /// The route's budget in tokens; a caller may ask for less.
    pub max_tokens: Option<usize>,
}

/// One parsed pattern.
#[derive(Debug)]
struct Pattern {
    /// `None`: any method.
    method: Option<String>,
    segments: Vec<Segment>,
}

#[derive(Debug, PartialEq)]
enum Segment {
    Literal(String),
    One,
    Any,
}

#[derive(Debug)]
struct Entry {
    patterns: Vec<Pattern>,
    /// `None`: passed untouched.
    route: Option<Arc<RoutePolicy>>,
}

/// The routes of a policy's `[http]` section.
#[derive(Debug)]
pub struct Routes {
    entries: Vec<Entry>,
    /// For requests no entry matches; `None` unless `shape_unmatched`.
    default: Option<Arc<RoutePolicy>>,
    /// Which request headers say who is asking (`[http] identity_headers`).
    identity: Identity,
}

impl Routes {
    /// The routes of `policy`'s `[http]` section (none without one); `resolve` compiles the
    /// policy file an entry names (relative to the door's policy file).
    pub fn from_policy<E: std::error::Error + 'static>(
        policy: Policy,
        resolve: &mut dyn FnMut(&str) -> Result<Policy, E>,
    ) -> Result<Routes, RoutesError<E>> {
        let http: HttpOptions = policy.options().http.clone().unwrap_or_default();
        let own = Arc::new(policy);
        let mut entries = Vec::with_capacity(http.routes.len());
        for (index, r) in http.routes.iter().enumerate() {
            let patterns = r
                .patterns
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    Pattern::parse(p).map_err(|message| RoutesError::Pattern {
                        index,
                        pattern: i,
                        message,
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            if !r.shape {
                entries.push(Entry {
                    patterns,
                    route: None,
                });
                continue;
            }
            let policy = match &r.policy {
                Some(rel) => Arc::new(resolve(rel).map_err(|source| RoutesError::Resolve {
                    index,
                    reference: rel.clone(),
                    source,
                })?),
                None => own.clone(),
            };
            let default_level = match &r.level {
                Some(name) => {
                    policy.level_index(name).map_err(|e| RoutesError::Level {
                        index,
                        message: e.to_string(),
                    })?;
                    name.clone()
                }
                None => policy.default_level().to_owned(),
            };
            if r.max_tokens == Some(0) {
                return Err(RoutesError::Budget { index });
            }
            entries.push(Entry {
                patterns,
                route: Some(Arc::new(RoutePolicy {
                    name: r.patterns.first().cloned().unwrap_or_default(),
                    default_level,
                    format: r.format.map_or(Format::Json, McpFormat::format),
                    max_tokens: r.max_tokens,
                    policy,
                })),
            });
        }
        let default = http.shape_unmatched.then(|| {
            Arc::new(RoutePolicy {
                name: "default".into(),
                default_level: own.default_level().to_owned(),
                policy: own,
                format: Format::Json,
                max_tokens: None,
            })
        });
        let identity = http
            .identity_headers
            .as_deref()
            .map_or_else(Identity::default, Identity::named);
        Ok(Routes {
            entries,
            default,
            identity,
        })
    }

    /// Which request headers say who is asking, for a page cache's keys.
    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// How a `method` request for `path` (no query string) is shaped; `None`: untouched.
    pub fn route(&self, method: &str, path: &str) -> Option<Arc<RoutePolicy>> {
        let segments = split(path);
        for e in &self.entries {
            if e.patterns.iter().any(|p| p.matches(method, &segments)) {
                return e.route.clone();
            }
        }
        self.default.clone()
    }
}

fn split(path: &str) -> Vec<&str> {
    path.trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect()
}

impl Pattern {
    fn parse(text: &str) -> Result<Pattern, String> {
        let text = text.trim();
        let (method, path) = match text.split_once(char::is_whitespace) {
            Some((m, p)) => (Some(m), p.trim()),
            None => (None, text),
        };
        if !path.starts_with('/') {
            return Err(format!(
                "{text:?}: expected `METHOD /path` or `/path` (a path starts with `/`)"
            ));
        }
        let method = match method {
            None | Some("*") => None,
            Some(m) if m.bytes().all(|b| b.is_ascii_alphabetic()) => Some(m.to_ascii_uppercase()),
            Some(m) => return Err(format!("{text:?}: {m:?} is not an HTTP method")),
        };
        let segments = split(path)
            .into_iter()
            .map(|s| match s {
                "**" => Ok(Segment::Any),
                "*" => Ok(Segment::One),
                s if s.starts_with('{') && s.ends_with('}') && s.len() > 2 => Ok(Segment::One),
                s if s.contains(['*', '{', '}']) => Err(format!(
                    "{text:?}: segment {s:?}: `*`, `**` and `{{name}}` stand for whole segments"
                )),
                s => Ok(Segment::Literal(s.to_owned())),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Pattern { method, segments })
    }

    fn matches(&self, method: &str, path: &[&str]) -> bool {
        if let Some(m) = &self.method
            && !m.eq_ignore_ascii_case(method)
        {
            return false;
        }
        segments_match(&self.segments, path)
    }
}

fn segments_match(pattern: &[Segment], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((Segment::Any, rest)) => {
            (0..=path.len()).any(|skip| segments_match(rest, &path[skip..]))
        }
        Some((seg, rest)) => match path.split_first() {
            None => false,
            Some((first, tail)) => {
                let ok = match seg {
                    Segment::Literal(l) => l == first,
                    _ => true,
                };
                ok && segments_match(rest, tail)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routes(text: &str) -> Result<Routes, String> {
        let policy = Policy::parse(text).map_err(|e| e.to_string())?;
        Routes::from_policy(policy, &mut |rel: &str| match rel {
            "brief.toml" => Ok(Policy::parse("levels = [\"brief\", \"full\"]\n").unwrap()),
            _ => Err(std::io::Error::other("no such file")),
        })
        .map_err(|e| e.to_string())
    }

    #[test]
    fn the_first_matching_entry_wins_by_method_glob_and_template() {
        let r = routes(
            "[http]\n\
             [[http.routes]]\nmatch = [\"GET /api/secret/**\"]\nshape = false\n\
             [[http.routes]]\nmatch = [\"GET /api/entities\", \"get /api/entities/{id}/\"]\nformat = \"toon\"\nmax_tokens = 500\n\
             [[http.routes]]\nmatch = [\"/api/**/report\"]\npolicy = \"brief.toml\"\n",
        )
        .unwrap();
        assert!(r.route("GET", "/api/secret/x/y").is_none());
        let e = r.route("GET", "/api/entities/").unwrap();
        assert_eq!((e.format, e.max_tokens), (Format::Toon, Some(500)));
        assert!(r.route("GET", "/api/entities/42").is_some());
        assert!(r.route("POST", "/api/entities/42").is_none());
        assert!(r.route("GET", "/api/entities/42/x").is_none());
        let report = r.route("DELETE", "/api/a/b/report").unwrap();
        assert_eq!(report.policy.levels(), ["brief", "full"]);
        assert!(
            r.route("GET", "/api/report").is_some(),
            "`**` matches no segment too"
        );
        assert!(r.route("GET", "/other").is_none(), "unmatched routes pass");
        let all = routes("[http]\nshape_unmatched = true\n").unwrap();
        assert_eq!(all.route("PUT", "/x").unwrap().format, Format::Json);
    }

    #[test]
    fn bad_entries_are_errors_naming_the_key() {
        let e = routes("[http]\n[[http.routes]]\nmatch = [\"GET api\"]\n").unwrap_err();
        assert!(
            e.contains("`http.routes[0].match[0]`") && e.contains("starts with `/`"),
            "{e}"
        );
        let e = routes("[http]\n[[http.routes]]\nmatch = [\"/a*\"]\n").unwrap_err();
        assert!(e.contains("whole segments"), "{e}");
        let e =
            routes("[http]\n[[http.routes]]\nmatch = [\"/a\"]\nlevel = \"huge\"\n").unwrap_err();
        assert!(
            e.contains("`http.routes[0].level`") && e.contains("huge"),
            "{e}"
        );
        let e = routes("[http]\n[[http.routes]]\nmatch = [\"/a\"]\npolicy = \"nope.toml\"\n")
            .unwrap_err();
        assert!(e.contains("nope.toml"), "{e}");
        let e = routes("[http]\n[[http.routes]]\nmatch = [\"/a\"]\nmax_tokens = 0\n").unwrap_err();
        assert!(e.contains("max_tokens"), "{e}");
        let e = routes("[http]\n[[http.routes]]\nmatches = [\"/a\"]\n").unwrap_err();
        assert!(e.contains("matches"), "{e}");
    }
}
