//! The recall index of one session file (`catalog::recall_index`), for the
//! pages of `recallRead` (lib/recall.js).

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::listing::LISTINGS;
use super::session::JsRecallBranch;
use super::{io_to_napi, opt_pos};
use crate::catalog::recall_index::{LinesError, Origin, RecallIndex};

#[napi]
pub struct NativeRecallIndex {
    inner: RecallIndex,
}

/// The recall index of `path`, kept in the listing's cache folder when one is
/// set (with `fresh`, made from the file whatever is kept); `null` when the
/// file is not clean (a manager reads it then).
#[napi(catch_unwind)]
pub fn open_recall_index(path: String, fresh: Option<bool>) -> Result<Option<NativeRecallIndex>> {
    let cache = LISTINGS.cache_dir();
    let path = std::path::Path::new(&path);
    let index = if fresh == Some(true) {
        RecallIndex::open_fresh(path, cache.as_deref())
    } else {
        RecallIndex::open(path, cache.as_deref())
    }
    .map_err(io_to_napi)?;
    Ok(index.map(|inner| NativeRecallIndex { inner }))
}

#[napi]
impl NativeRecallIndex {
    /// "stored", "extended" or "built": how this index was come by.
    #[napi(catch_unwind)]
    pub fn origin(&self) -> &'static str {
        match self.inner.origin {
            Origin::Stored => "stored",
            Origin::Extended => "extended",
            Origin::Built => "built",
        }
    }

    /// The last entry's id (the manager's leaf), or null for a header alone.
    #[napi(catch_unwind)]
    pub fn leaf(&self) -> Option<String> {
        self.inner.leaf().map(str::to_string)
    }

    #[napi(catch_unwind)]
    pub fn has(&self, id: String) -> bool {
        self.inner.get(&id).is_some()
    }

    /// The position of the last session_info entry, or -1.
    #[napi(catch_unwind)]
    pub fn last_info(&self) -> i64 {
        opt_pos(self.inner.last_info())
    }

    #[napi(catch_unwind)]
    pub fn branch(&self, leaf: Option<String>, target: Option<String>) -> JsRecallBranch {
        let branch = self.inner.branch(leaf.as_deref(), target.as_deref());
        JsRecallBranch {
            positions: branch.positions.into(),
            readable: branch.readable.into(),
            target: branch.target.map_or(-1, i64::from),
        }
    }

    /// The position of the newest leaf under entry `id`, or -1 when it is its own leaf.
    #[napi(catch_unwind)]
    pub fn newest_leaf_under(&self, id: String) -> i64 {
        opt_pos(self.inner.newest_leaf_under(&id))
    }

    #[napi(catch_unwind)]
    pub fn id_at(&self, position: u32) -> String {
        self.inner.id(position).to_string()
    }

    /// The lines at `positions`, or null when the file no longer holds them as indexed.
    #[napi(catch_unwind)]
    pub fn lines(&self, positions: Uint32Array) -> Result<Option<Vec<String>>> {
        match self.inner.lines(&positions) {
            Ok(lines) => Ok(Some(lines)),
            Err(LinesError::Changed) => Ok(None),
            Err(LinesError::Io(e)) => Err(io_to_napi(e)),
        }
    }
}
