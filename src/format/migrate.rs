//! Migration of v1 (linear, no ids) and v2 (`hookMessage` role) sessions to v3.
//!
//! The plan (which steps, new ids, parent chain, compaction targets) is decided
//! here from entry metadata; it is applied to JSON lines here and to JavaScript
//! objects by the JS layer, so both paths share one set of decisions.

use foldhash::HashSet;

use crate::format::entry::{EntryMeta, Kind};
use crate::format::json::{self, JsValue};
use crate::format::json_text;

pub const CURRENT_SESSION_VERSION: f64 = 3.0;

/// What one entry gets during v1 -> v2.
#[derive(Debug, Clone, PartialEq)]
pub enum V1Change {
    /// A header: `version = 2`.
    Header,
    /// `id = new_id; parentId = parent` and, for a compaction with a numeric
    /// `firstKeptEntryIndex`, `firstKeptEntryId = target id` (when `Some`) and
    /// delete `firstKeptEntryIndex`.
    Entry {
        new_id: String,
        parent: Option<String>,
        first_kept: Option<FirstKept>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum FirstKept {
    /// Only delete `firstKeptEntryIndex`.
    DeleteIndex,
    /// Set `firstKeptEntryId` to this id, then delete the index.
    SetId(String),
    /// The target is a later entry whose id is not assigned yet: the reference
    /// assigns `undefined`, which is not written.
    SetUndefined,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MigrationPlan {
    pub v1: Option<Vec<V1Change>>,
    pub v2: bool,
}

/// A fresh 8-hex-digit entry id not in `taken`: the first 8 digits of a
/// random UUID, as pi's, which are 32 random bits.
pub fn new_entry_id(taken: &dyn Fn(&str) -> bool) -> String {
    for _ in 0..100 {
        let id = format!("{:08x}", random_u32());
        if !taken(&id) {
            return id;
        }
    }
    uuid::Uuid::new_v4().hyphenated().to_string()
}

/// Random bits drawn from the OS a block at a time: one call per id (as
/// `Uuid::new_v4` makes) costs more than the rest of an append.
fn random_u32() -> u32 {
    use std::cell::RefCell;
    const BLOCK: usize = 64;
    thread_local! {
        static POOL: RefCell<(Vec<u32>, usize)> = const { RefCell::new((Vec::new(), 0)) };
    }
    POOL.with(|pool| {
        let (words, next) = &mut *pool.borrow_mut();
        if *next >= words.len() {
            let mut bytes = [0u8; BLOCK * 4];
            getrandom::fill(&mut bytes).expect("the OS random source failed");
            *words = bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            *next = 0;
        }
        *next += 1;
        words[*next - 1]
    })
}

/// `None` when the session is current. A header version that is not a number
/// (NaN) still "migrates" without changes, and the file is rewritten.
pub fn plan(metas: &[EntryMeta]) -> Option<MigrationPlan> {
    let version = metas
        .iter()
        .find(|m| m.kind == Kind::Session)
        .map_or(1.0, |h| h.version());
    if version >= CURRENT_SESSION_VERSION {
        return None;
    }
    let v1 = (version < 2.0).then(|| {
        let mut assigned: HashSet<String> = HashSet::default();
        let mut ids: Vec<Option<String>> = vec![None; metas.len()];
        let mut prev: Option<String> = None;
        let mut changes = Vec::with_capacity(metas.len());
        for (i, meta) in metas.iter().enumerate() {
            if meta.kind == Kind::Session {
                changes.push(V1Change::Header);
                continue;
            }
            let new_id = new_entry_id(&|id| assigned.contains(id));
            assigned.insert(new_id.clone());
            ids[i] = Some(new_id.clone());
            let first_kept = match (meta.kind, meta.first_kept_index()) {
                (Kind::Compaction, Some(n)) => {
                    let target = (n >= 0.0 && n.fract() == 0.0)
                        .then_some(n as usize)
                        .filter(|&t| t < metas.len());
                    Some(match target {
                        Some(t) if metas[t].kind != Kind::Session => match &ids[t] {
                            Some(id) => FirstKept::SetId(id.clone()),
                            None if metas[t].id_is_string => {
                                FirstKept::SetId(metas[t].id.to_string())
                            }
                            None => FirstKept::SetUndefined,
                        },
                        _ => FirstKept::DeleteIndex,
                    })
                }
                _ => None,
            };
            changes.push(V1Change::Entry {
                new_id: new_id.clone(),
                parent: prev.replace(new_id),
                first_kept,
            });
        }
        changes
    });
    Some(MigrationPlan {
        v1,
        v2: version < CURRENT_SESSION_VERSION,
    })
}

#[derive(Debug, PartialEq)]
pub enum MigrateError {
    /// Assigning `id` to a primitive entry throws in strict mode JavaScript.
    CannotCreateProperty(String),
}

fn describe_primitive(value: &JsValue) -> String {
    match value {
        JsValue::Num(n) => {
            let mut out = Vec::new();
            json_text::write_number(&mut out, *n);
            format!("number '{}'", String::from_utf8_lossy(&out))
        }
        JsValue::Str(s) => format!("string '{}'", String::from_utf8_lossy(s)),
        JsValue::Bool(b) => format!("boolean '{b}'"),
        _ => "object".to_string(),
    }
}

/// Applies the plan to one parsed entry (position `i`).
pub fn apply(plan: &MigrationPlan, i: usize, entry: &mut JsValue) -> Result<(), MigrateError> {
    let is_object = matches!(entry, JsValue::Obj(_));
    if let Some(changes) = &plan.v1 {
        match &changes[i] {
            V1Change::Header => entry.set("version", JsValue::Num(2.0)),
            V1Change::Entry {
                new_id,
                parent,
                first_kept,
            } => {
                if !is_object && !matches!(entry, JsValue::Arr(_)) {
                    return Err(MigrateError::CannotCreateProperty(format!(
                        "Cannot create property 'id' on {}",
                        describe_primitive(entry)
                    )));
                }
                entry.set("id", JsValue::str(new_id));
                entry.set(
                    "parentId",
                    parent.as_deref().map_or(JsValue::Null, JsValue::str),
                );
                match first_kept {
                    Some(FirstKept::SetId(id)) => entry.set("firstKeptEntryId", JsValue::str(id)),
                    Some(FirstKept::SetUndefined) => entry.remove("firstKeptEntryId"),
                    _ => {}
                }
                if first_kept.is_some() {
                    entry.remove("firstKeptEntryIndex");
                }
            }
        }
    }
    if plan.v2 {
        let is_header = entry.get("type").and_then(|t| t.as_str()).as_deref() == Some("session");
        if is_header {
            entry.set("version", JsValue::Num(CURRENT_SESSION_VERSION));
        } else if entry.get("type").and_then(|t| t.as_str()).as_deref() == Some("message") {
            if let Some(message) = entry.get_mut("message") {
                if message.get("role").and_then(|r| r.as_str()).as_deref() == Some("hookMessage") {
                    message.set("role", JsValue::str("custom"));
                }
            }
        }
    }
    Ok(())
}

/// Migrates the lines of a file; returns the rewritten lines.
pub fn migrate_lines(plan: &MigrationPlan, lines: &[&[u8]]) -> Result<Vec<Vec<u8>>, MigrateError> {
    let mut out = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let text = json::decode_lossy(line);
        // Every line given here was accepted by the entry reader, so it parses.
        let mut value = json::parse(&text).unwrap_or(JsValue::Null);
        apply(plan, i, &mut value)?;
        out.push(json_text::stringify(&value));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::entry::{read_line, LineRead};

    fn metas(lines: &[&str]) -> Vec<EntryMeta> {
        lines
            .iter()
            .map(|l| match read_line(l.as_bytes()) {
                LineRead::Entry(m) => m,
                LineRead::Skipped => panic!(),
            })
            .collect()
    }

    #[test]
    fn v1_gets_ids_parents_and_compaction_targets() {
        let lines = [
            r#"{"type":"session","id":"s","timestamp":"t"}"#,
            r#"{"type":"message","message":{"role":"hookMessage"}}"#,
            r#"{"type":"compaction","summary":"x","firstKeptEntryIndex":1}"#,
        ];
        let plan = plan(&metas(&lines)).unwrap();
        let bytes: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
        let out = migrate_lines(&plan, &bytes).unwrap();
        let out: Vec<String> = out
            .into_iter()
            .map(|l| String::from_utf8(l).unwrap())
            .collect();
        assert_eq!(
            out[0],
            r#"{"type":"session","id":"s","timestamp":"t","version":3}"#
        );
        let id1 = &out[1][out[1].find("\"id\":\"").unwrap() + 6..][..8];
        assert_eq!(
            out[1],
            format!(
                r#"{{"type":"message","message":{{"role":"custom"}},"id":"{id1}","parentId":null}}"#
            )
        );
        assert!(out[2].ends_with(&format!(
            r#""parentId":"{id1}","firstKeptEntryId":"{id1}"}}"#
        )));
        assert!(!out[2].contains("firstKeptEntryIndex"));
    }

    #[test]
    fn current_files_are_left_alone_and_primitives_fail_in_v1() {
        assert_eq!(plan(&metas(&[r#"{"type":"session","version":3}"#])), None);
        let lines = [r#"{"type":"session","id":"s"}"#, "5"];
        let plan = plan(&metas(&lines)).unwrap();
        let bytes: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
        assert_eq!(
            migrate_lines(&plan, &bytes),
            Err(MigrateError::CannotCreateProperty(
                "Cannot create property 'id' on number '5'".into()
            ))
        );
    }
}
