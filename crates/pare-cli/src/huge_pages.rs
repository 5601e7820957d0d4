//! No transparent huge pages for a command that reads, writes and exits; the proxies keep
//! the system's setting.
//!
//! Why: mimalloc asks for huge pages (`madvise(MADV_HUGEPAGE)`) on the memory it reserves,
//! and each 2 MB page is zeroed whole on first touch. A run on a 100 KB file touched half a
//! dozen, a quarter of its CPU, so `main` turned them off ([`one_shot`]). But the runtime
//! allocates before `main`, and those first allocations still took three huge pages in
//! every run (`thp_fault_alloc` in `/proc/vmstat`: 3 per run, `pare --version` included):
//! 6 MB zeroed, about 0.3 ms of a 2.3 ms run. So on glibc Linux they are turned off before
//! the runtime starts too, from the executable's initialisers, which glibc calls with the
//! arguments: no huge pages at all in a one-shot run. `pare mcp` and `pare http` live long
//! and reuse their memory; they keep the system's setting (with huge pages the MCP proxy
//! added 4–9% less latency on a 120 KB result), as do the servers `pare mcp` starts (the
//! setting passes to child processes).
//!
//! ```text
//! pare compact …   → no huge pages, from before the runtime's first allocation
//! pare mcp …       → the system's setting
//! ```

/// Whether the command whose first argument is `first` lives long: the proxies.
pub(crate) fn long_lived(first: &[u8]) -> bool {
    matches!(first, b"mcp" | b"http")
}

/// Turn transparent huge pages off for this process (and what it starts). Only a speed-up:
/// where the kernel refuses (an old kernel, a seccomp filter), nothing else changes.
pub(crate) fn one_shot() {
    let _ = rustix::thread::disable_transparent_huge_pages(true);
}

/// The initialiser, where glibc passes `argc` and `argv` to the executable's
/// `.init_array` functions (as the standard library's own argument handling relies on).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)] // a static in `.init_array`, and the arguments read as C strings
mod before_runtime {
    use std::ffi::{CStr, c_char, c_int};

    type Initialiser = extern "C" fn(c_int, *const *const c_char, *const *const c_char);

    #[used]
    #[unsafe(link_section = ".init_array")]
    static NO_HUGE_PAGES_BEFORE_MAIN: Initialiser = no_huge_pages_before_main;

    extern "C" fn no_huge_pages_before_main(
        argc: c_int,
        argv: *const *const c_char,
        _envp: *const *const c_char,
    ) {
        if argc < 2 || argv.is_null() {
            // No subcommand: `pare` alone prints its help (and exits).
            super::one_shot();
            return;
        }
        // SAFETY: glibc passes the process's `argc` and `argv`: `argv` holds `argc` valid
        // pointers to NUL-terminated strings, which live as long as the process.
        let first = unsafe {
            let arg = *argv.add(1);
            if arg.is_null() {
                return;
            }
            CStr::from_ptr(arg)
        };
        if !super::long_lived(first.to_bytes()) {
            super::one_shot();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_proxies_live_long() {
        assert!(long_lived(b"mcp") && long_lived(b"http"));
        for first in [
            &b"compact"[..],
            b"count",
            b"--version",
            b"",
            b"mcpx",
            b"MCP",
        ] {
            assert!(!long_lived(first), "{first:?}");
        }
    }
}
