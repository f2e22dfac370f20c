//! What a line of a session file means, with no I/O: JSON with the exact
//! semantics of JavaScript, JavaScript's strings, the index fields of one
//! entry, the version migrations. Imports nothing else of this crate.

pub mod entry;
pub mod json;
pub mod json_text;
pub mod jsstring;
pub mod jsvalue;
pub mod lazy;
pub mod migrate;
