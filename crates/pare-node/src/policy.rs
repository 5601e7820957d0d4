//! `NativePolicy`: a compiled policy, and `shape`/`pages`/`shapeValue`, the engine's
//! response pipeline (`pare::respond()`, the entry point every door calls) for a
//! JavaScript caller. The package's `Policy` class (`index.js`) wraps it.
//!
//! Each has an `…Async` twin that runs the engine on the libuv thread pool: the input is
//! read (a string copied, an object converted) on the calling thread, the rest is not.
//!
//! ```js
//! const policy = Policy.fromFile("entities.toml");
//! const out = policy.shape({ entities: [/* … */] }, { budget: 2000 });
//! out.text, out.tokensBefore, out.tokensAfter, out.page, out.pages, out.nextCursor
//! ```

use std::sync::Arc;

use napi::bindgen_prelude::{AsyncTask, Buffer, FromNapiValue, JsValue, Uint8Array, Utf16String};
use napi::{Env, Task, Unknown, ValueType};
use napi_derive::napi;
use pare::Format;
use pare::{Budget, Hint, Input, Request, respond};

use crate::convert;
use crate::errors;

/// A compiled pare policy (TOML or JSON).
#[napi]
pub struct NativePolicy {
    pub(crate) policy: Arc<pare::Policy>,
    /// The text it was compiled from; `None`: the built-in policy.
    source: Option<String>,
    /// The file it was read from.
    path: Option<String>,
}

/// What a caller hands `shape`: a JavaScript value, or JSON text.
pub enum Given {
    Text(String),
    Value(pare::Value),
}

/// An input read on the calling thread, made text on the thread pool: a string is copied
/// out as UTF-16 (a plain copy) and turned into UTF-8 by the task, so the event loop does not
/// wait for a large text's transcoding (7 MB: about 9 ms on the loop, against 3).
pub enum Deferred {
    Units(Utf16String),
    Given(Given),
}

impl Deferred {
    pub fn read(env: &Env, input: Unknown<'_>) -> napi::Result<Deferred> {
        if input.get_type()? == ValueType::String {
            return Ok(Deferred::Units(Utf16String::from_unknown(input)?));
        }
        Given::read(env, input).map(Deferred::Given)
    }

    pub fn into_given(self) -> napi::Result<Given> {
        match self {
            Deferred::Given(g) => Ok(g),
            Deferred::Units(units) => text_of_units(&units).map(Given::Text),
        }
    }
}

/// UTF-16 as UTF-8; a lone surrogate is refused (it has no UTF-8 form).
pub fn text_of_units(units: &[u16]) -> napi::Result<String> {
    String::from_utf16(units).map_err(|_| {
        let at = char::decode_utf16(units.iter().copied())
            .take_while(Result::is_ok)
            .map(|c| c.map_or(0, char::len_utf8))
            .sum();
        errors::lone_surrogate(at)
    })
}

/// A JavaScript string as UTF-8 text. Node-API writes U+FFFD for a lone surrogate, a
/// character the text does not hold: a text that came back with one is looked at again.
pub fn js_text(input: Unknown<'_>) -> napi::Result<String> {
    let s = String::from_unknown(input)?;
    if s.contains('\u{FFFD}') {
        return text_of_units(&Utf16String::from_unknown(input)?);
    }
    Ok(s)
}

impl Given {
    /// A string, `Buffer` or `Uint8Array` is JSON text (UTF-8); anything else a value.
    pub fn read(env: &Env, input: Unknown<'_>) -> napi::Result<Given> {
        match input.get_type()? {
            ValueType::String => return Ok(Given::Text(js_text(input)?)),
            ValueType::Object if input.is_buffer()? => {
                return text_of(&Buffer::from_unknown(input)?);
            }
            ValueType::Object if input.is_typedarray()? => {
                if let Ok(bytes) = Uint8Array::from_unknown(input) {
                    return text_of(&bytes);
                }
            }
            _ => {}
        }
        convert::to_value(env, input).map(Given::Value)
    }

    /// Take the value out (no copy) for the one request that needs it.
    pub fn into_input(self, text: &mut String) -> Input<'_> {
        match self {
            Given::Text(t) => {
                *text = t;
                Input::Json(text)
            }
            Given::Value(v) => Input::Value(v),
        }
    }
}

fn text_of(bytes: &[u8]) -> napi::Result<Given> {
    std::str::from_utf8(bytes)
        .map(|s| Given::Text(s.to_owned()))
        .map_err(|e| errors::not_utf8(e.valid_up_to()))
}

/// The options of one call, as the package passes them (it has checked their types).
#[napi(object)]
pub struct CallOptions {
    pub level: Option<String>,
    /// `[name, value]` pairs, values as text (`"5"`, `"true"`).
    pub params: Option<Vec<Vec<String>>>,
    pub format: Option<String>,
    pub tokenizer: Option<String>,
    pub budget: Option<u32>,
    pub cursor: Option<String>,
    pub omitted: Option<bool>,
    /// The caller's question, for a `[pack]` policy.
    pub query: Option<String>,
    /// Only these fields (each item one or more comma-separated fields).
    pub fields: Option<Vec<String>>,
}

pub fn format(name: &str) -> napi::Result<Format> {
    Format::parse(name).ok_or_else(|| {
        errors::bad_argument(
            "format",
            name,
            &["json", "pretty", "toon", "auto"],
            format!("format: unknown value {name:?}; allowed: json, pretty, toon, auto"),
        )
    })
}

pub fn tokenizer(name: &str) -> napi::Result<&'static dyn pare::tokens::Tokenizer> {
    pare::tokens::builtin(name).map_err(|_| {
        errors::bad_argument(
            "tokenizer",
            name,
            &["o200k_base", "cl100k_base", "chars4"],
            format!("tokenizer: unknown value {name:?}; allowed: o200k_base, cl100k_base, chars4"),
        )
    })
}

/// One call's options, checked and owned (an async call takes them to another thread).
pub struct Options {
    pub level: Option<String>,
    pub params: Vec<(String, String)>,
    pub format: Format,
    pub tokenizer: &'static dyn pare::tokens::Tokenizer,
    pub budget: Option<usize>,
    pub cursor: Option<String>,
    pub omitted: Option<bool>,
    pub query: Option<String>,
    pub fields: Option<pare::project::Fields>,
}

impl Options {
    pub fn of(o: Option<CallOptions>) -> napi::Result<Options> {
        let o = o.unwrap_or(CallOptions {
            level: None,
            params: None,
            format: None,
            tokenizer: None,
            budget: None,
            cursor: None,
            omitted: None,
            query: None,
            fields: None,
        });
        let params = o
            .params
            .unwrap_or_default()
            .into_iter()
            .map(|pair| match <[String; 2]>::try_from(pair) {
                Ok([name, value]) => Ok((name, value)),
                Err(_) => Err(errors::type_error(
                    "params: each entry must be a [name, value] pair".into(),
                )),
            })
            .collect::<napi::Result<_>>()?;
        Ok(Options {
            level: o.level,
            params,
            format: format(o.format.as_deref().unwrap_or("json"))?,
            tokenizer: tokenizer(o.tokenizer.as_deref().unwrap_or("o200k_base"))?,
            budget: o.budget.map(|b| b as usize),
            cursor: o.cursor,
            omitted: o.omitted,
            query: o.query,
            fields: o
                .fields
                .map(|f| {
                    pare::project::Fields::parse_each(&f).map_err(|e| {
                        errors::bad_argument("fields", &f.join(","), &[], format!("fields: {e}"))
                    })
                })
                .transpose()?,
        })
    }

    pub fn request<'a>(&'a self, input: Input<'a>, policy: &'a pare::Policy) -> Request<'a> {
        Request {
            level: self.level.as_deref(),
            params: &self.params,
            format: self.format,
            tokenizer: self.tokenizer,
            budget: self.budget.map(Budget::tokens),
            cursor: self.cursor.as_deref(),
            omitted_notes: self.omitted,
            query: self.query.as_deref(),
            fields: self.fields.as_ref(),
            // As `pare compact` does, so the text is the same.
            hint: Hint::Flags,
            ..Request::new(input, policy)
        }
    }
}

/// One page of a shaped response and its record, as the package's `Shaped` reads it. The
/// counts the engine did not need are `null`; the package counts them when first read.
#[napi(object)]
pub struct PageOut {
    pub text: String,
    pub note: Option<String>,
    pub tokens_before: Option<u32>,
    pub tokens_after: Option<u32>,
    pub note_tokens: Option<u32>,
    pub tokenizer: String,
    pub format: String,
    pub level: String,
    pub lowered_from: Option<String>,
    pub page: u32,
    pub pages: u32,
    pub next_cursor: Option<String>,
    pub warnings: Vec<String>,
    /// The whole record as JSON (the keys `pare compact --report-json` uses for a page).
    pub record: String,
}

fn count(n: Option<usize>) -> Option<u32> {
    n.and_then(|n| u32::try_from(n).ok())
}

impl From<pare::Page> for PageOut {
    fn from(page: pare::Page) -> PageOut {
        let r = page.record;
        let record = serde_json::to_string(&r).unwrap_or_default();
        PageOut {
            note_tokens: count(r.note_tokens.or(page.note.is_none().then_some(0))),
            text: page.text,
            note: page.note,
            tokens_before: count(r.tokens_before),
            tokens_after: count(r.tokens_after),
            tokenizer: r.tokenizer,
            format: r.format.to_owned(),
            level: r.level,
            lowered_from: r.lowered_from,
            page: r.page as u32,
            pages: r.pages as u32,
            next_cursor: r.next_cursor,
            warnings: r.warnings,
            record,
        }
    }
}

/// The engine's pages for `given`: the first, or with `all` every one. The engine counts
/// only what a budget needs (`measure: false`); the package counts the rest when read.
fn respond_pages(
    opts: &Options,
    policy: &pare::Policy,
    given: Given,
    all: bool,
) -> napi::Result<Vec<PageOut>> {
    let mut text = String::new();
    let mut request = opts.request(given.into_input(&mut text), policy);
    request.measure = false;
    // Only the pages are handed back: a policy the stream can do is written as it reads.
    request.want_value = false;
    let response = respond(request).map_err(errors::respond_error)?;
    let mut pages = vec![PageOut::from(response.page)];
    if all {
        pages.extend(response.rest.into_iter().map(PageOut::from));
    }
    Ok(pages)
}

/// The shaped value as minified JSON (the package parses it: V8's `JSON.parse` builds
/// objects faster than property-by-property calls from here).
fn shaped_value(opts: &Options, policy: &pare::Policy, given: Given) -> napi::Result<String> {
    let mut text = String::new();
    let mut request = opts.request(given.into_input(&mut text), policy);
    request.measure = false;
    let shaped = respond(request).map_err(errors::respond_error)?.shaped;
    match shaped {
        Some(s) => Ok(pare::json::to_compact(&s.value)),
        None => Err(errors::pare_error(
            "this policy packs search results ([pack]): its output is text; use shape()".into(),
        )),
    }
}

/// What an async call does on the thread pool.
enum Work {
    Pages { all: bool },
    Value,
}

/// What an async call hands back.
pub enum Done {
    Pages(Vec<PageOut>),
    Value(String),
}

/// One `shapeAsync`/`pagesAsync`/`shapeValueAsync` call.
pub struct ShapeTask {
    policy: Arc<pare::Policy>,
    opts: Options,
    given: Option<Deferred>,
    work: Work,
}

impl Task for ShapeTask {
    type Output = Done;
    type JsValue = napi::Either<Vec<PageOut>, String>;

    fn compute(&mut self) -> napi::Result<Done> {
        let given = self.given.take().expect("a task runs once").into_given()?;
        match self.work {
            Work::Pages { all } => {
                respond_pages(&self.opts, &self.policy, given, all).map(Done::Pages)
            }
            Work::Value => shaped_value(&self.opts, &self.policy, given).map(Done::Value),
        }
    }

    fn resolve(&mut self, _env: Env, done: Done) -> napi::Result<Self::JsValue> {
        Ok(match done {
            Done::Pages(p) => napi::Either::A(p),
            Done::Value(v) => napi::Either::B(v),
        })
    }
}

impl NativePolicy {
    pub fn compile(source: String, path: Option<String>) -> napi::Result<NativePolicy> {
        let policy = pare::Policy::parse(&source)
            .map_err(|e| errors::policy_error_in(&e, path.as_deref()))?;
        Ok(NativePolicy {
            policy: Arc::new(policy),
            source: Some(source),
            path,
        })
    }

    /// The policy compiled again (the `[mcp]` and `[http]` configurations take one by value).
    pub fn recompile(&self) -> napi::Result<pare::Policy> {
        match &self.source {
            Some(text) => pare::Policy::parse(text).map_err(|e| errors::policy_error(&e)),
            None => Ok(pare::Policy::builtin_default()),
        }
    }

    /// Reads and compiles the policy files its `[mcp]`/`[http]` entries name (`policy =
    /// "other.toml"`), relative to its file (the engine reads no files).
    pub fn resolver(&self) -> impl FnMut(&str) -> Result<pare::Policy, std::io::Error> + use<> {
        let dir = self
            .path
            .as_deref()
            .and_then(|p| std::path::Path::new(p).parent())
            .map(|d| d.to_path_buf())
            .unwrap_or_else(|| std::path::PathBuf::from("."));
        move |rel: &str| {
            pare::Policy::load(&dir.join(rel)).map_err(|e| {
                let kind = match &e {
                    pare::policy::LoadError::Read { error, .. } => error.kind(),
                    _ => std::io::ErrorKind::Other,
                };
                std::io::Error::new(kind, e.to_string())
            })
        }
    }

    fn task(
        &self,
        env: &Env,
        input: Unknown<'_>,
        options: Option<CallOptions>,
        work: Work,
    ) -> napi::Result<AsyncTask<ShapeTask>> {
        let opts = Options::of(options)?;
        let given = Deferred::read(env, input)?;
        Ok(AsyncTask::new(ShapeTask {
            policy: self.policy.clone(),
            opts,
            given: Some(given),
            work,
        }))
    }
}

#[napi]
impl NativePolicy {
    /// Read and compile a policy file (TOML, or JSON when it starts with `{`).
    #[napi(factory)]
    pub fn from_file(path: String) -> napi::Result<NativePolicy> {
        let source = pare::policy::read_text(std::path::Path::new(&path))
            .map_err(|e| errors::pare_error(e.to_string()))?;
        NativePolicy::compile(source, Some(path))
    }

    /// Compile a policy from its text (TOML, or JSON when it starts with `{`).
    #[napi(factory)]
    pub fn from_string(text: String) -> napi::Result<NativePolicy> {
        NativePolicy::compile(text, None)
    }

    /// Compile a policy from an object (the JSON form of the file).
    #[napi(factory)]
    pub fn from_object(env: Env, value: Unknown<'_>) -> napi::Result<NativePolicy> {
        let value = convert::to_value(&env, value)?;
        NativePolicy::compile(pare::json::to_compact(&value), None)
    }

    /// The built-in policy: no ops, every level lossless.
    #[napi(factory)]
    pub fn builtin() -> NativePolicy {
        NativePolicy {
            policy: Arc::new(pare::Policy::builtin_default()),
            source: None,
            path: None,
        }
    }

    #[napi(getter)]
    pub fn levels(&self) -> Vec<String> {
        self.policy.levels().to_vec()
    }

    #[napi(getter)]
    pub fn default_level(&self) -> String {
        self.policy.default_level().to_owned()
    }

    #[napi(getter)]
    pub fn description(&self) -> Option<String> {
        self.policy.description().map(str::to_owned)
    }

    /// The parameters a caller may set, with their defaults, as JSON.
    #[napi(getter)]
    pub fn params_json(&self) -> String {
        serde_json::to_string(&self.policy.options().params).unwrap_or_else(|_| "{}".into())
    }

    #[napi(getter)]
    pub fn source(&self) -> Option<String> {
        self.source.clone()
    }

    #[napi(getter)]
    pub fn path(&self) -> Option<String> {
        self.path.clone()
    }

    /// The first page (the whole response without a budget).
    #[napi]
    pub fn shape(
        &self,
        env: Env,
        input: Unknown<'_>,
        options: Option<CallOptions>,
    ) -> napi::Result<PageOut> {
        let opts = Options::of(options)?;
        let given = Given::read(&env, input)?;
        let mut pages = respond_pages(&opts, &self.policy, given, false)?;
        Ok(pages.remove(0))
    }

    /// Every page under the options' budget.
    #[napi]
    pub fn pages(
        &self,
        env: Env,
        input: Unknown<'_>,
        options: Option<CallOptions>,
    ) -> napi::Result<Vec<PageOut>> {
        let opts = Options::of(options)?;
        let given = Given::read(&env, input)?;
        respond_pages(&opts, &self.policy, given, true)
    }

    /// The shaped value as minified JSON.
    #[napi]
    pub fn shape_value(
        &self,
        env: Env,
        input: Unknown<'_>,
        options: Option<CallOptions>,
    ) -> napi::Result<String> {
        let opts = Options::of(options)?;
        let given = Given::read(&env, input)?;
        shaped_value(&opts, &self.policy, given)
    }

    #[napi(ts_return_type = "Promise<PageOut[]>")]
    pub fn shape_async(
        &self,
        env: Env,
        input: Unknown<'_>,
        options: Option<CallOptions>,
    ) -> napi::Result<AsyncTask<ShapeTask>> {
        self.task(&env, input, options, Work::Pages { all: false })
    }

    #[napi(ts_return_type = "Promise<PageOut[]>")]
    pub fn pages_async(
        &self,
        env: Env,
        input: Unknown<'_>,
        options: Option<CallOptions>,
    ) -> napi::Result<AsyncTask<ShapeTask>> {
        self.task(&env, input, options, Work::Pages { all: true })
    }

    #[napi(ts_return_type = "Promise<string>")]
    pub fn shape_value_async(
        &self,
        env: Env,
        input: Unknown<'_>,
        options: Option<CallOptions>,
    ) -> napi::Result<AsyncTask<ShapeTask>> {
        self.task(&env, input, options, Work::Value)
    }
}
