//! What goes wrong in a session, as the errors JavaScript throws: an I/O
//! failure, a plain `Error` or `TypeError`, an entry not found; and the
//! messages of a session file deleted, replaced or changed after it was read.

use std::path::Path;

use super::file_pool::Gone;
use super::index::NullishMessage;
use super::store::IoFailure;
use crate::format::migrate::MigrateError;

#[derive(Debug, Clone, PartialEq)]
pub enum SessionError {
    Io(IoFailure),
    /// A plain `Error` with this message.
    Message(String),
    /// A `TypeError` with this message, where the reference hits one.
    Type(String),
    /// `Entry ${id} not found`: JavaScript spells the id.
    EntryNotFound,
}

impl From<IoFailure> for SessionError {
    fn from(e: IoFailure) -> Self {
        SessionError::Io(e)
    }
}

impl From<NullishMessage> for SessionError {
    fn from(e: NullishMessage) -> Self {
        let what = if e.is_null { "null" } else { "undefined" };
        SessionError::Type(format!("Cannot read properties of {what} (reading 'role')"))
    }
}

impl From<MigrateError> for SessionError {
    fn from(e: MigrateError) -> Self {
        match e {
            MigrateError::CannotCreateProperty(m) => SessionError::Type(m),
        }
    }
}

/// The error of a session whose file no longer holds the lines it read: the
/// entries are never built from another entry's bytes.
pub(super) fn file_gone(path: &Path, how: Gone) -> SessionError {
    let what = match how {
        Gone::Io(e) => return SessionError::Io(e),
        Gone::Deleted => "was deleted",
        Gone::Replaced => "was replaced by another file",
    };
    SessionError::Message(format!(
        "Session file {what} after it was opened: {}",
        path.display()
    ))
}

pub(super) fn file_changed(path: &Path) -> SessionError {
    SessionError::Message(format!(
        "Session file was changed on disk after it was opened (truncated or rewritten): {}",
        path.display()
    ))
}

pub(super) fn not_a_session(path: &Path) -> SessionError {
    SessionError::Message(format!(
        "Session file is not a valid pi session: {}",
        path.display()
    ))
}
