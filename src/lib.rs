//! pi-session-native: the session store of the pi coding agent in Rust.
//!
//! The crate is built in layers, each a folder, each importing only the ones
//! below it (ARCHITECTURE.md; the test module `layers` below holds the code to it):
//!
//! - `format`: what a line means (no I/O, imports nothing of ours);
//! - `os`: what differs between operating systems, the only place that names
//!   an OS call;
//! - `parallel`: how work is split over threads;
//! - `session`: one session file, read, indexed and written;
//! - `catalog`: many session files: listing, search, usage, doctor, over one
//!   incremental scan;
//! - `binding`: the only napi code; it translates and nothing else.

pub mod catalog;
pub mod format;
pub mod os;
pub mod parallel;
pub mod session;

// Under `cargo test` napi does not register the exports, so they look unused.
#[cfg_attr(test, allow(dead_code))]
mod binding;

/// The rules of the layers, held against the code: every `crate::`, `super::`
/// and child-module path of every file under `src/` is an import of the
/// module it names, and no module may import one of a layer it must not
/// know, nor reach itself again through others.
#[cfg(test)]
mod layers {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    /// The top-level modules each top-level module may import (itself always).
    fn may_import(layer: &str) -> &'static [&'static str] {
        match layer {
            "format" | "os" | "parallel" => &[],
            "session" => &["format", "os", "parallel"],
            "catalog" => &["format", "os", "parallel", "session"],
            "binding" => &["format", "os", "parallel", "session", "catalog"],
            _ => &[],
        }
    }

    /// `src/a/mod.rs` is `a`, `src/a/b.rs` is `a::b`, `src/lib.rs` is ``.
    fn module_of(relative: &Path) -> String {
        let mut parts: Vec<String> = relative
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        let file = parts.pop().unwrap_or_default();
        let stem = file.trim_end_matches(".rs");
        if stem != "mod" && stem != "lib" {
            parts.push(stem.to_string());
        }
        parts.join("::")
    }

    /// The code of a file without its comments (doc links name modules too,
    /// but they import nothing).
    fn code_of(text: &str) -> String {
        text.lines()
            .map(|line| match line.find("//") {
                Some(at) if !line[..at].contains('"') => &line[..at],
                _ => line,
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The paths after `crate::`, `super::` or a child module's name, with
    /// `{a, b::c}` groups opened: each as the segments it names.
    fn paths_in(code: &str, module: &str, modules: &BTreeSet<String>) -> Vec<Vec<String>> {
        let parent: Vec<&str> = module.split("::").filter(|s| !s.is_empty()).collect();
        let mut found = Vec::new();
        let bytes = code.as_bytes();
        let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        let mut i = 0;
        while i < bytes.len() {
            if !is_ident(bytes[i]) || (i > 0 && (is_ident(bytes[i - 1]) || bytes[i - 1] == b':')) {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && is_ident(bytes[i]) {
                i += 1;
            }
            let word = &code[start..i];
            if !code[i..].starts_with("::") {
                continue;
            }
            let base: Vec<String> = match word {
                "crate" => Vec::new(),
                "super" => parent[..parent.len().saturating_sub(1)]
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
                child => {
                    let mut path: Vec<String> = parent.iter().map(|s| s.to_string()).collect();
                    path.push(child.to_string());
                    if !modules.contains(&path.join("::")) {
                        continue;
                    }
                    path
                }
            };
            // The rest of the path: segments, and a `{...}` group opened.
            let rest_end = code[i..]
                .find(|c: char| !(c.is_alphanumeric() || "_:{}, \n*".contains(c)))
                .map_or(code.len(), |n| i + n);
            for tail in expand(&code[i + 2..rest_end]) {
                let mut path = base.clone();
                path.extend(tail);
                found.push(path);
            }
            i = rest_end;
        }
        found
    }

    /// `a::{b, c::d}` as [[a, b], [a, c, d]]; a plain path as itself.
    fn expand(text: &str) -> Vec<Vec<String>> {
        let text = text.trim();
        let Some(open) = text.find('{') else {
            let segments = text
                .split("::")
                .map(str::trim)
                .take_while(|s| !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_'))
                .map(String::from)
                .collect();
            return vec![segments];
        };
        let head: Vec<String> = text[..open]
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        let (mut depth, mut piece, mut out) = (0, String::new(), Vec::new());
        for c in text[open + 1..].chars() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(std::mem::take(&mut piece));
                    continue;
                }
                _ => {}
            }
            piece.push(c);
        }
        out.push(piece);
        out.iter()
            .flat_map(|p| expand(p))
            .map(|tail| head.iter().cloned().chain(tail).collect())
            .collect()
    }

    /// The module a path names: its longest prefix that is one.
    fn target(path: &[String], modules: &BTreeSet<String>) -> Option<String> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].join("::"))
            .find(|m| modules.contains(m))
    }

    /// What breaks the rules in `files` (module, source): imports across the
    /// layers they must not cross, then circles between modules.
    fn violations(files: &[(String, String)]) -> Vec<String> {
        let modules: BTreeSet<String> = files.iter().map(|(m, _)| m.clone()).collect();
        let mut imports: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        let mut broken = Vec::new();
        for (module, text) in files {
            let from_layer = module.split("::").next().unwrap_or_default();
            // In a file's inline test module `super` is the file itself.
            let code = code_of(text);
            let (own, tests) = code.split_at(code.find("#[cfg(test)]\nmod ").unwrap_or(code.len()));
            // A test may use a module of its own layer as a fixture (the
            // watch's tests list folders through discovery): that is no
            // import of the shipped code, so it draws no edge for circles.
            let in_tests = paths_in(&tests.replace("super::", "self::"), module, &modules);
            let shipped = paths_in(own, module, &modules);
            let count = shipped.len();
            for (n, path) in shipped.into_iter().chain(in_tests).enumerate() {
                let Some(to) = target(&path, &modules) else {
                    continue;
                };
                let to_layer = to.split("::").next().unwrap_or_default();
                if module.is_empty() || to.is_empty() || &to == module {
                    continue;
                }
                if to_layer != from_layer && !may_import(from_layer).contains(&to_layer) {
                    broken.push(format!("{module} imports {to} ({})", path.join("::")));
                }
                if n < count {
                    imports.entry(module).or_default().insert(to);
                }
            }
        }
        // A circle: a module that one of its imports leads back to.
        for start in &modules {
            let mut seen = BTreeSet::new();
            let mut stack = vec![(start.clone(), vec![start.clone()])];
            while let Some((at, trail)) = stack.pop() {
                for next in imports.get(at.as_str()).into_iter().flatten() {
                    if next == start && trail.iter().min() == Some(start) {
                        broken.push(format!("circle: {} -> {start}", trail.join(" -> ")));
                    } else if seen.insert(next.clone()) {
                        let mut longer = trail.clone();
                        longer.push(next.clone());
                        stack.push((next.clone(), longer));
                    }
                }
            }
        }
        broken
    }

    #[test]
    fn the_layers_import_only_downwards_and_no_module_in_a_circle() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        let mut stack = vec![src.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let module = module_of(path.strip_prefix(&src).unwrap());
                    files.push((module, std::fs::read_to_string(&path).unwrap()));
                }
            }
        }
        assert!(files.len() > 30, "only {} files read", files.len());
        let broken = violations(&files);
        assert!(broken.is_empty(), "{}", broken.join("\n"));
    }

    #[test]
    fn the_check_finds_an_upward_import_and_a_circle() {
        let file = |m: &str, text: &str| (m.to_string(), text.to_string());
        let files = [
            file("format", "pub mod json;"),
            file("format::json", "use crate::session::store::IoFailure;"),
            file("session", "pub mod store;\nuse store::read;"),
            file("session::store", "use crate::format::json;"),
            file("catalog", "pub mod a; pub mod b;"),
            file("catalog::a", "use crate::catalog::{b::Thing, c};"),
            file(
                "catalog::b",
                "fn f() { crate::catalog::a::g() } // crate::binding",
            ),
            file(
                "catalog::c",
                "#[cfg(test)]\nmod tests { use crate::catalog::a; use crate::binding; }",
            ),
            file("binding", "use crate::catalog::a;"),
        ];
        assert_eq!(
            violations(&files),
            [
                "format::json imports session::store (session::store::IoFailure)",
                "catalog::c imports binding (binding)",
                "circle: catalog::a -> catalog::b -> catalog::a",
                "circle: format::json -> session::store -> format::json",
            ]
        );
    }
}
