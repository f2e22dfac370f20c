//! What a line of a session file means, with no I/O: JSON with JavaScript's
//! semantics, JavaScript strings, the index fields of an entry, migrations.
//! Imports nothing else of this crate.

pub mod json;
