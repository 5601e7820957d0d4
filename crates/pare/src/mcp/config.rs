//! Which policy, format and default level shape each tool: the `[mcp]` section of the
//! policy file, resolved once at start-up.

use std::sync::Arc;

use crate::encode::Format;
use crate::params::Scalar;
use crate::policy::Policy;
use crate::schema::mcp::{McpOptions, StructuredContent, ToolList, glob_match};

/// An `[mcp]` section that cannot be used. `E` is the door's error for a policy file an
/// entry names (the engine reads no files: the door's resolver does).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError<E: std::error::Error + 'static> {
    /// `mcp.tools[index].policy` could not be read or compiled.
    #[error("`mcp.tools[{index}].policy` = {reference:?}: {source}")]
    Resolve {
        /// The entry's index in `mcp.tools` (0-based).
        index: usize,
        /// The policy file as the entry names it.
        reference: String,
        /// The door's error for that file.
        #[source]
        source: E,
    },
    /// `mcp.tools[index].level` names no level of the tool's policy.
    #[error("`mcp.tools[{index}].level`: {message}")]
    Level {
        /// The entry's index in `mcp.tools` (0-based).
        index: usize,
        /// What is wrong: the unknown level and the policy's levels.
        message: String,
    },
    /// `mcp.tools[index].params` names a parameter the tool's policy does not declare.
    #[error("`mcp.tools[{index}].params`: {message}")]
    Params {
        /// The entry's index in `mcp.tools` (0-based).
        index: usize,
        /// What is wrong: the unknown parameter and those the policy declares.
        message: String,
    },
}

/// How one tool's results are shaped.
#[derive(Debug, Clone)]
pub struct ToolPolicy {
    /// The policy results are shaped by: the entry's `policy` file, else the one with `[mcp]`.
    pub policy: Arc<Policy>,
    /// The text format of shaped results: the entry's `format`, else `[mcp] format`.
    pub format: Format,
    /// The level used when a call names none (an index into the policy's levels).
    pub default_level: usize,
    /// `Some`: set by `[[mcp.tools]] verbatim`; `None`: by the default rule
    /// ([`crate::mcp::verbatim`]).
    pub verbatim: Option<bool>,
    /// Policy parameters a caller may set per call, with their defaults (which type them).
    pub params: Vec<(String, Scalar)>,
    /// What becomes of the result's `structuredContent`.
    pub structured: StructuredContent,
    /// The tool's own argument that holds the caller's question (`[[mcp.tools]] query`).
    pub query_argument: Option<String>,
    /// A `fields` argument is offered ([`crate::project`]; `[mcp] fields`, or per tool).
    pub fields: bool,
}

impl ToolPolicy {
    /// The policy's level names, least detail first; the last is `full`.
    pub fn levels(&self) -> &[String] {
        self.policy.levels()
    }

    /// The levels that give different outputs, least detail first: of levels alike
    /// ([`crate::Policy::levels_alike`]) the default if it is one of them, else the one with
    /// the most detail. One level: nothing for a caller to choose.
    pub(crate) fn distinct_levels(&self) -> Vec<&str> {
        let levels = self.levels();
        let n = levels.len();
        (0..n)
            .filter(|&i| {
                let alike = |j: usize| self.policy.levels_alike(i, j);
                if alike(self.default_level) {
                    return i == self.default_level;
                }
                !(i + 1..n).any(alike)
            })
            .map(|i| levels[i].as_str())
            .collect()
    }

    /// Whether the level `index` shows the whole input (it runs what `full` runs: nothing;
    /// a `[pack]` policy packs at every level but `full`).
    pub(crate) fn is_lossless(&self, index: usize) -> bool {
        self.policy.levels_alike(index, self.levels().len() - 1)
    }
}

/// One `[[mcp.tools]]` entry, resolved.
#[derive(Debug)]
struct Entry {
    names: Vec<String>,
    /// `None`: the tool is passed through untouched.
    tool: Option<Arc<ToolPolicy>>,
}

/// The proxy's shaping configuration.
#[derive(Debug)]
pub struct Config {
    entries: Vec<Entry>,
    /// For tools no entry matches; `None` when `shape_unmatched = false`.
    default: Option<Arc<ToolPolicy>>,
    /// `[mcp] tool_list`: how `tools/list` reaches the client.
    tool_list: ToolList,
}

impl Config {
    /// No policy file: the built-in policy (no ops: lossless), format `auto`.
    pub fn builtin() -> Config {
        Config::from_policy(Policy::builtin_default(), &mut |_: &str| {
            Err::<Policy, std::io::Error>(std::io::Error::other("no files"))
        })
        .expect("the built-in policy is valid")
    }

    /// The configuration of `policy`'s `[mcp]` section; `resolve` compiles the policy file
    /// an entry names (`policy = "other.toml"`, relative to the door's policy file).
    pub fn from_policy<E: std::error::Error + 'static>(
        policy: Policy,
        resolve: &mut dyn FnMut(&str) -> Result<Policy, E>,
    ) -> Result<Config, ConfigError<E>> {
        let mcp: McpOptions = policy.options().mcp.clone().unwrap_or_default();
        let own = Arc::new(policy);
        let mut entries = Vec::with_capacity(mcp.tools.len());
        for (index, t) in mcp.tools.iter().enumerate() {
            if !t.shape {
                entries.push(Entry {
                    names: t.names.clone(),
                    tool: None,
                });
                continue;
            }
            let policy = match &t.policy {
                Some(rel) => Arc::new(resolve(rel).map_err(|source| ConfigError::Resolve {
                    index,
                    reference: rel.clone(),
                    source,
                })?),
                None => own.clone(),
            };
            let default_level = match &t.level {
                Some(name) => policy.level_index(name).map_err(|e| ConfigError::Level {
                    index,
                    message: e.to_string(),
                })?,
                None => default_level(&policy),
            };
            let format = t.format.unwrap_or(mcp.format).format();
            let params = caller_params(&policy, &t.params)
                .map_err(|message| ConfigError::Params { index, message })?;
            entries.push(Entry {
                names: t.names.clone(),
                tool: Some(Arc::new(ToolPolicy {
                    default_level,
                    policy,
                    format,
                    verbatim: t.verbatim,
                    params,
                    structured: t.structured_content.unwrap_or(mcp.structured_content),
                    query_argument: t.query.clone(),
                    fields: t.fields.unwrap_or(mcp.fields),
                })),
            });
        }
        let default = mcp.shape_unmatched.then(|| {
            Arc::new(ToolPolicy {
                default_level: default_level(&own),
                policy: own,
                format: mcp.format.format(),
                verbatim: None,
                params: Vec::new(),
                structured: mcp.structured_content,
                query_argument: None,
                fields: mcp.fields,
            })
        });
        Ok(Config {
            entries,
            default,
            tool_list: mcp.tool_list,
        })
    }

    /// How `tools/list` reaches the client (`[mcp] tool_list`).
    pub fn tool_list(&self) -> ToolList {
        self.tool_list
    }

    /// How the tool `name` is shaped; `None` when it is passed through untouched.
    pub fn tool(&self, name: &str) -> Option<Arc<ToolPolicy>> {
        for e in &self.entries {
            if e.names.iter().any(|g| glob_match(g, name)) {
                return e.tool.clone();
            }
        }
        self.default.clone()
    }
}

/// The named parameters with their defaults; an error names the unknown one and the
/// allowed names.
fn caller_params(policy: &Policy, names: &[String]) -> Result<Vec<(String, Scalar)>, String> {
    let declared = &policy.options().params;
    names
        .iter()
        .map(|name| match declared.get(name) {
            Some(default) => Ok((name.clone(), default.clone())),
            None if declared.is_empty() => Err(format!(
                "unknown parameter `{name}`: the tool's policy declares no `[params]`"
            )),
            None => Err(format!(
                "unknown parameter `{name}`; the tool's policy declares: {}",
                declared.keys().cloned().collect::<Vec<_>>().join(", ")
            )),
        })
        .collect()
}

fn default_level(policy: &Policy) -> usize {
    policy
        .level_index(policy.default_level())
        .expect("the default level exists")
}

/// What a door does with a policy file, for the tests (the engine itself reads no files):
/// read it, and resolve its entries' policy files relative to it.
#[cfg(test)]
pub(crate) mod testing {
    use std::path::Path;

    use super::Config;
    use crate::policy::Policy;

    pub(crate) fn load(path: &Path) -> Result<Config, String> {
        let read = |p: &Path| -> Result<Policy, std::io::Error> {
            let text = std::fs::read_to_string(p)?;
            Policy::parse(&text).map_err(std::io::Error::other)
        };
        let dir = path.parent().unwrap_or(Path::new("."));
        let policy = read(path).map_err(|e| e.to_string())?;
        Config::from_policy(policy, &mut |rel: &str| read(&dir.join(rel)))
            .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::testing::load;
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn first_matching_entry_wins_and_unmatched_use_the_files_own_ops() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "other.toml",
            "levels = [\"brief\", \"full\"]\n[[ops]]\nop = \"prune\"\n",
        );
        let main = write(
            dir.path(),
            "main.toml",
            "[mcp]\nformat = \"json\"\n[[mcp.tools]]\nmatch = [\"secret_*\"]\nshape = false\n\
             [[mcp.tools]]\nmatch = [\"search_*\", \"read_graph\"]\npolicy = \"other.toml\"\nformat = \"toon\"\n",
        );
        let c = load(&main).unwrap();
        assert!(c.tool("secret_key").is_none());
        let t = c.tool("search_nodes").unwrap();
        assert_eq!(t.levels(), ["brief", "full"]);
        assert_eq!(t.format, Format::Toon);
        let d = c.tool("anything").unwrap();
        assert_eq!(d.format, Format::Json);
        assert_eq!(d.levels()[d.default_level], "standard");
    }

    #[test]
    fn tool_list_is_read_from_the_mcp_section() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "p.toml", "[mcp]\ntool_list = \"compact\"\n");
        assert_eq!(load(&p).unwrap().tool_list(), ToolList::Compact);
        assert_eq!(Config::builtin().tool_list(), ToolList::Server);
    }

    #[test]
    fn shape_unmatched_false_passes_other_tools_through() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(dir.path(), "p.toml", "[mcp]\nshape_unmatched = false\n");
        assert!(load(&p).unwrap().tool("x").is_none());
    }

    #[test]
    fn a_bad_level_or_missing_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = write(
            dir.path(),
            "p.toml",
            "[mcp]\n[[mcp.tools]]\nmatch = [\"x\"]\nlevel = \"huge\"\n",
        );
        let e = load(&p).unwrap_err().to_string();
        assert!(
            e.contains("mcp.tools[0].level") && e.contains("huge"),
            "{e}"
        );
        let p = write(
            dir.path(),
            "q.toml",
            "[mcp]\n[[mcp.tools]]\nmatch = [\"x\"]\npolicy = \"nope.toml\"\n",
        );
        let e = load(&p).unwrap_err().to_string();
        assert!(e.contains("nope.toml"), "{e}");
    }

    #[test]
    fn caller_params_must_be_the_policys_and_levels_collapse() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "n.toml",
            "levels = [\"minimal\", \"standard\", \"full\"]\n[params]\nmaxGapMinutes = 2.0\n\
             [[ops]]\nop = \"prune\"\n",
        );
        let p = write(
            dir.path(),
            "p.toml",
            "[mcp]\ntool_list = \"compact\"\n[[mcp.tools]]\nmatch = [\"x\"]\npolicy = \"n.toml\"\nparams = [\"maxGapMinutes\"]\n",
        );
        let c = load(&p).unwrap();
        assert_eq!(c.tool_list(), ToolList::Compact);
        let t = c.tool("x").unwrap();
        assert_eq!(
            t.params,
            [("maxGapMinutes".to_owned(), Scalar::Number(2.0))]
        );
        assert_eq!(t.distinct_levels(), ["standard", "full"]);
        assert!(!t.is_lossless(1) && t.is_lossless(2));
        assert!(Config::builtin().tool("y").unwrap().distinct_levels().len() == 1);

        let p = write(
            dir.path(),
            "q.toml",
            "[mcp]\n[[mcp.tools]]\nmatch = [\"x\"]\npolicy = \"n.toml\"\nparams = [\"maxGap\"]\n",
        );
        let e = load(&p).unwrap_err().to_string();
        assert!(
            e.contains("mcp.tools[0].params")
                && e.contains("maxGap")
                && e.contains("declares: maxGapMinutes"),
            "{e}"
        );
    }
}
