//! Search: `SessionSearch` and `searchSessions` (lib/search.js) over the
//! listing's cached texts.

use napi_derive::napi;

use super::listing::LISTINGS;
use super::*;
use crate::catalog::search;
use crate::catalog::summaries;

/// A search's answer (see `search::SearchResult`).
#[napi(object, object_from_js = false)]
pub struct JsSearchResult {
    /// Session indices in the result's order; with `scores`, the matches in
    /// the sessions' order, for JavaScript to sort with the reference's
    /// comparator; with `regex`, the sessions to test.
    pub indices: Uint32Array,
    pub scores: Option<Float64Array>,
    /// A `re:` query: `[start, end)` of its pattern in the query.
    pub regex: Option<Vec<u32>>,
    /// The reference's `session.id.toLowerCase()` throws at this session.
    pub throws_at: Option<u32>,
}

impl From<search::SearchResult> for JsSearchResult {
    fn from(result: search::SearchResult) -> Self {
        let empty = JsSearchResult {
            indices: Vec::new().into(),
            scores: None,
            regex: None,
            throws_at: None,
        };
        match result {
            search::SearchResult::Ranked { order, scores } => JsSearchResult {
                indices: order.into(),
                scores: scores.map(Into::into),
                ..empty
            },
            search::SearchResult::Regex {
                start,
                end,
                candidates,
            } => JsSearchResult {
                indices: candidates.into(),
                regex: Some(vec![start as u32, end as u32]),
                ..empty
            },
            search::SearchResult::Throws(index) => JsSearchResult {
                throws_at: Some(index),
                ..empty
            },
        }
    }
}

/// The sessions of a listing, searchable: texts lowercased once per file
/// version (shared with the listing cache), matched and ranked here.
#[napi(custom_finalize)]
pub struct SessionSearchIndex {
    catalog: search::Catalog,
    /// Make the trigram filters that spare repeated searches most full
    /// scans (a picker's index; not worth it for one search).
    trigrams: bool,
    /// Memory reported to V8 for the texts held.
    reported: i64,
}

impl SessionSearchIndex {
    fn report_memory(&mut self, env: &Env) {
        let now = self.catalog.memory() as i64;
        if env.adjust_external_memory(now - self.reported).is_ok() {
            self.reported = now;
        }
    }
}

impl ObjectFinalize for SessionSearchIndex {
    fn finalize(self, env: Env) -> Result<()> {
        env.adjust_external_memory(-self.reported)?;
        Ok(())
    }
}

#[napi]
impl SessionSearchIndex {
    #[napi(constructor, catch_unwind)]
    pub fn new(trigrams: bool) -> Self {
        SessionSearchIndex {
            catalog: search::Catalog::default(),
            trigrams,
            reported: 0,
        }
    }

    /// Of the listing tokens given, the indices whose texts this index does
    /// not hold: `setSessions` needs their paths.
    #[napi(catch_unwind)]
    pub fn unheld(&self, tokens: Float64Array) -> Uint32Array {
        let tokens: Vec<u64> = tokens.iter().map(|&t| t as u64).collect();
        self.catalog.unheld(&tokens).into()
    }

    /// Sets the sessions in the listing's order: each one's listing token
    /// and `modified.getTime()`, and the paths of those at `path_indices`
    /// (see `unheld`). Returns the indices whose texts the listing cache
    /// does not hold either (JavaScript then sets them from strings).
    #[napi(catch_unwind)]
    pub fn set_sessions(
        &mut self,
        env: &Env,
        paths: Vec<String>,
        path_indices: Uint32Array,
        tokens: Float64Array,
        modified: Float64Array,
    ) -> Uint32Array {
        let files: Vec<(std::path::PathBuf, u64)> = paths
            .into_iter()
            .zip(path_indices.iter())
            .map(|(path, &i)| (path.into(), tokens.get(i as usize).map_or(0, |&t| t as u64)))
            .collect();
        // One lock for all; the texts are made on the catalog's threads.
        let mut versions: Vec<Option<summaries::CachedText>> =
            tokens.iter().map(|_| None).collect();
        for (&i, version) in path_indices.iter().zip(LISTINGS.cache().versions(&files)) {
            if let Some(slot) = versions.get_mut(i as usize) {
                *slot = version.map(summaries::CachedText);
            }
        }
        let indexed: Vec<(usize, u64)> = tokens.iter().map(|&t| t as u64).enumerate().collect();
        let missing = self.catalog.set_sessions(
            &indexed,
            modified.to_vec(),
            self.trigrams,
            crate::parallel::threads(),
            |&i, _| versions[i].as_ref()?.search_text(),
        );
        self.report_memory(env);
        missing.into()
    }

    /// The text of session `index` from its strings; `id` is the session's
    /// string id, or 1 for an undefined one, 2 for null, 3 for anything else.
    #[napi(catch_unwind)]
    pub fn set_session_text(
        &mut self,
        env: &Env,
        index: u32,
        name: Option<Utf16String>,
        id: Either<Utf16String, u32>,
        cwd: Utf16String,
        text: Utf16String,
    ) {
        let id = match id {
            Either::A(id) => search::SessionId::Str(id.to_vec()),
            Either::B(1) => search::SessionId::Undefined,
            Either::B(2) => search::SessionId::Null,
            Either::B(_) => search::SessionId::Other,
        };
        let text = search::SessionText::from_utf16(name.as_deref(), id, &cwd, &text);
        self.catalog.set_text(index as usize, text, self.trigrams);
        self.report_memory(env);
    }

    /// `filterAndSortSessions` over the sessions set, `query` as UTF-16;
    /// `scored` leaves a token query's matches unsorted, with their scores.
    #[napi(catch_unwind)]
    pub fn search(
        &self,
        query: Utf16String,
        recent: bool,
        named: bool,
        scored: bool,
    ) -> JsSearchResult {
        self.catalog
            .search(&query, recent, named, scored, crate::parallel::threads())
            .into()
    }

    /// The reference's order of matches given in the sessions' order, with
    /// their scores (a `re:` query's tiers).
    #[napi(catch_unwind)]
    pub fn rank(&self, indices: Uint32Array, scores: Float64Array, recent: bool) -> JsSearchResult {
        self.catalog
            .rank(indices.to_vec(), scores.to_vec(), recent)
            .into()
    }

    /// Lets go of the texts (and of the memory reported for them).
    #[napi(catch_unwind)]
    pub fn close(&mut self, env: &Env) {
        self.catalog = search::Catalog::default();
        self.report_memory(env);
    }
}

/// The search's `toLowerCase()`, and with `collapse` its
/// `normalizeWhitespaceLower()`, of a string through the UTF-16 path (names,
/// cwds, queries) or the WTF-8 one (message texts): the tests compare them
/// with V8's on every code point.
#[napi(catch_unwind)]
pub fn search_lowercase_for_test(text: Utf16String, wtf8: bool, collapse: bool) -> Utf16String {
    use crate::format::jsstring as js;
    if wtf8 {
        let lower = js::to_lowercase_wtf8(&js::utf16_to_wtf8(&text));
        let out = if collapse {
            js::collapse_whitespace_wtf8(&lower)
        } else {
            lower
        };
        return js::wtf8_to_utf16(&out).into();
    }
    let lower = js::to_lowercase_utf16(&text);
    if collapse {
        js::collapse_whitespace_utf16(&lower).into()
    } else {
        lower.into()
    }
}
