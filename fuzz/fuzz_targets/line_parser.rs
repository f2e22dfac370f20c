//! One session line, as arbitrary bytes.
//!
//! Nothing here may panic, and the readers must agree with one another:
//! - `json::parse` (on the lossily decoded text, as the reference decodes files)
//!   and `Cursor::skip_value` (on the raw and on the decoded bytes) accept the
//!   same texts;
//! - `stringify(parse(x))` is a fixed point: it parses again to the same
//!   value, is valid UTF-8, and an object in that form is canonical;
//! - `canonical_members(line)` is `Some` only when the line is exactly
//!   `stringify(parse(line))`, and its spans hold the members' values;
//! - for a canonical line, `patch_line` (the text splice) gives what
//!   `rewrite_line` (parse, change, stringify) gives;
//! - `entry::read_line` (which reads raw bytes without building the value)
//!   finds what `JSON.parse` + `if (entry)` finds: the same lines skipped, and
//!   the same type, id, parentId, targetId, label, message role, timestamp.
//!
//! An input that nests is also read, once by each reader, as a much deeper
//! copy (`shared/deep.rs`), for stack overflows in recursive code.
#![no_main]

#[path = "shared/deep.rs"]
mod deep;

use libfuzzer_sys::fuzz_target;
use pi_session_native::format::entry::{self, EntryMeta, Kind, LineRead, Role};
use pi_session_native::format::json::{self, Cursor, JsValue};
use pi_session_native::format::json_text::{self, Change};

fuzz_target!(|data: &[u8]| {
    check_line(data);
    deep::with_deep_copy(data, check_deep_line);
});

fn check_line(data: &[u8]) {
    let text = json::decode_lossy(data);
    let parsed = json::parse(&text);

    // The skipping cursor agrees with the parser on what a whole text is, on
    // the raw bytes as well (read_line checks the grammar on raw bytes).
    assert_eq!(
        skips_whole(data),
        parsed.is_ok(),
        "skip_value (raw) and parse disagree"
    );
    assert_eq!(
        skips_whole(&text),
        parsed.is_ok(),
        "skip_value (decoded) and parse disagree"
    );

    check_read_line(data, &text, parsed.as_ref().ok());

    if let Ok(value) = &parsed {
        let once = json_text::stringify(value);
        assert!(
            std::str::from_utf8(&once).is_ok(),
            "stringify wrote invalid UTF-8: {once:?}"
        );
        let again = json::parse(&once).expect("stringify output must parse");
        assert_eq!(
            json_text::stringify(&again),
            once,
            "stringify(parse(stringify(v))) differs"
        );
        if once.first() == Some(&b'{') {
            assert!(
                json_text::canonical_members(&once).is_some(),
                "stringify output not recognised as canonical: {:?}",
                String::from_utf8_lossy(&once)
            );
        }
    }

    if let Some(members) = json_text::canonical_members(data) {
        let value = parsed.as_ref().expect("a canonical line must parse");
        assert_eq!(
            json_text::stringify(value),
            data,
            "canonical_members accepted a line that is not stringify(parse(line))"
        );
        check_spans(data, value, &members);
        for changes in change_sets(data, &members, value) {
            check_patch(data, &changes);
        }
    }
}

/// Each reader once on a deeply nested line.
fn check_deep_line(data: &[u8]) {
    let text = json::decode_lossy(data);
    let parsed = json::parse(&text);
    assert_eq!(
        skips_whole(data),
        parsed.is_ok(),
        "skip_value and parse disagree"
    );
    assert_eq!(
        entry::line_is_skipped(data),
        matches!(entry::read_line(data), LineRead::Skipped),
        "line_is_skipped and read_line disagree"
    );
    if let Ok(value) = &parsed {
        let once = json_text::stringify(value);
        if let Some(members) = json_text::canonical_members(&once) {
            if let Some(&(key, ..)) = members.first() {
                if let Ok(key) = std::str::from_utf8(key) {
                    let _ = json_text::patch_line(&once, &[(key, None)]);
                }
            }
        }
    }
}

/// Whether `Cursor::skip_value` consumes the whole text (whitespace around).
fn skips_whole(s: &[u8]) -> bool {
    let mut cur = Cursor::new(s);
    if cur.skip_value().is_err() {
        return false;
    }
    cur.skip_ws();
    cur.i == s.len()
}

/// The spans of `canonical_members` are the members' values, keys in order.
fn check_spans(line: &[u8], value: &JsValue, members: &[(&[u8], usize, usize)]) {
    let JsValue::Obj(parsed_members) = value else {
        panic!("canonical_members of a non-object");
    };
    assert_eq!(members.len(), parsed_members.len(), "member count differs");
    for ((key, start, end), (parsed_key, parsed_value)) in members.iter().zip(parsed_members) {
        // patch_line finds the key text at `start - key.len() - 3`.
        let key_start = start
            .checked_sub(key.len() + 3)
            .expect("member span starts before its key");
        assert_eq!(line[key_start], b'"');
        assert_eq!(&line[key_start + 1..key_start + 1 + key.len()], *key);
        assert_eq!(&line[start - 2..*start], b"\":");
        let mut quoted = Vec::new();
        json_text::write_string(&mut quoted, parsed_key);
        assert_eq!(
            &quoted[1..quoted.len() - 1],
            *key,
            "raw key is not the parsed key"
        );
        assert_eq!(
            &line[*start..*end],
            json_text::stringify(parsed_value).as_slice(),
            "member span is not the member's value"
        );
    }
}

/// Change sets like the ones `branch_session` makes, plus some built from the
/// line's own members. Keys in one set are distinct (they come from an object
/// spread) and values are JSON texts in `JSON.stringify` form (`key_json`).
fn change_sets<'a>(
    line: &[u8],
    members: &[(&[u8], usize, usize)],
    value: &'a JsValue,
) -> Vec<Vec<Change<'a>>> {
    let text = |s: &str| Some(s.as_bytes().to_vec());
    let mut sets: Vec<Vec<Change<'a>>> = vec![
        vec![("parentId", text("null"))],
        vec![
            ("parentId", text("\"z\"")),
            ("firstKeptEntryId", text("\"k\"")),
        ],
        vec![("parentId", None), ("firstKeptEntryId", None)],
        vec![
            ("id", text("\"a\\\"b\\u001f\\ud800\"")),
            ("x y é", text("1e+21")),
        ],
        vec![("", text("[]")), ("type", None)],
    ];
    // Keys the line has: replace the first member's value with the last's and
    // drop the last, including keys JSON spells with escapes (the finding
    // fuzz/artifacts-found/line_parser-patch-escaped-key, fixed).
    let JsValue::Obj(parsed) = value else {
        return sets;
    };
    let usable = |k: &'a [u8]| -> Option<&'a str> { std::str::from_utf8(k).ok() };
    if let (Some((first, _)), Some((last, _)), Some(&(_, ls, le))) =
        (parsed.first(), parsed.last(), members.last())
    {
        if let (Some(first), Some(last)) = (usable(first), usable(last)) {
            let last_text = Some(line[ls..le].to_vec());
            if first == last {
                sets.push(vec![(first, text("false"))]);
                sets.push(vec![(first, None)]);
            } else {
                sets.push(vec![(first, last_text), (last, None)]);
            }
        }
    }
    sets
}

fn check_patch(line: &[u8], changes: &[Change]) {
    let fast = json_text::patch_line(line, changes).expect("patch of a canonical line");
    let slow = json_text::rewrite_line(line, |v| {
        for (key, to) in changes {
            match to {
                Some(text) => v.set(key, json::parse(text).expect("change text parses")),
                None => v.remove(key),
            }
        }
    })
    .expect("rewrite of a canonical line");
    assert_eq!(
        String::from_utf8_lossy(&fast),
        String::from_utf8_lossy(&slow),
        "patch_line and rewrite_line differ for {changes:?}"
    );
}

/// The Map key `read_line` gives a member value, as far as it can be told from
/// the parsed value (`None` for objects and arrays: each gets its own key).
fn key_of(value: Option<&JsValue>) -> Option<String> {
    Some(match value {
        None => entry::UNDEFINED_KEY.to_string(),
        Some(JsValue::Null) => entry::NULL_KEY.to_string(),
        Some(JsValue::Bool(true)) => "\0true".to_string(),
        Some(JsValue::Bool(false)) => "\0false".to_string(),
        Some(JsValue::Num(n)) => entry::key_of_number(*n).into_string(),
        Some(JsValue::Str(s)) => String::from_utf8_lossy(s).into_owned(),
        Some(JsValue::Arr(_) | JsValue::Obj(_)) => return None,
    })
}

fn same_key(meta_key: &str, value: Option<&JsValue>, what: &str) {
    match key_of(value) {
        Some(k) => assert_eq!(meta_key, k, "{what} key differs"),
        None => assert!(meta_key.starts_with("\0object#"), "{what} key {meta_key:?}"),
    }
}

fn check_read_line(raw: &[u8], decoded: &[u8], parsed: Option<&JsValue>) {
    let read = entry::read_line(raw);
    assert_eq!(
        entry::line_is_skipped(raw),
        matches!(read, LineRead::Skipped),
        "line_is_skipped and read_line disagree"
    );
    // The reference decodes the file before it parses: the raw bytes and the
    // decoded text are the same line to it.
    assert_eq!(
        format!("{read:?}"),
        format!("{:?}", entry::read_line(decoded)),
        "read_line differs on the lossily decoded line"
    );
    let value = match (parsed, read) {
        (None, LineRead::Skipped) => return,
        (None, LineRead::Entry(_)) => panic!("read_line took a line JSON.parse rejects"),
        (Some(v), LineRead::Skipped) => {
            assert!(!v.truthy(), "read_line skipped a truthy value");
            return;
        }
        (Some(v), LineRead::Entry(meta)) => {
            assert!(v.truthy(), "read_line took a falsy value");
            (v, meta)
        }
    };
    let (value, meta) = value;
    if !matches!(value, JsValue::Obj(_)) {
        assert_eq!(format!("{meta:?}"), format!("{:?}", EntryMeta::opaque()));
        return;
    }
    let kind = match value.get("type") {
        Some(JsValue::Str(t)) => Kind::from_type(&String::from_utf8_lossy(t)),
        _ => Kind::Other,
    };
    assert_eq!(meta.kind, kind, "type differs");
    same_key(&meta.id, value.get("id"), "id");
    assert_eq!(
        meta.id_is_string,
        matches!(value.get("id"), Some(JsValue::Str(_)))
    );
    same_key(&meta.parent, value.get("parentId"), "parentId");
    assert_eq!(
        meta.parent_truthy,
        value.get("parentId").is_some_and(JsValue::truthy),
        "parentId truthiness differs"
    );
    same_key(meta.target(), value.get("targetId"), "targetId");
    same_key(
        meta.first_kept(),
        value.get("firstKeptEntryId"),
        "firstKeptEntryId",
    );
    assert_eq!(
        meta.label_truthy,
        value.get("label").is_some_and(JsValue::truthy),
        "label truthiness differs"
    );
    let time = match value.get("timestamp") {
        Some(JsValue::Str(s)) => entry::iso_time(&String::from_utf8_lossy(s)),
        _ => None,
    };
    assert_eq!(meta.time, time, "timestamp differs");
    let index = match value.get("firstKeptEntryIndex") {
        Some(JsValue::Num(n)) => Some(*n),
        _ => None,
    };
    assert_eq!(
        meta.first_kept_index(),
        index,
        "firstKeptEntryIndex differs"
    );
    let role = if kind != Kind::Message {
        Role::NotMessage
    } else {
        match value.get("message") {
            None => Role::MessageUndefined,
            Some(JsValue::Null) => Role::MessageNull,
            Some(message @ JsValue::Obj(_)) => match message.get("role") {
                Some(JsValue::Str(r)) => Role::parse(&String::from_utf8_lossy(r)),
                _ => Role::NotString,
            },
            Some(_) => Role::NotString,
        }
    };
    assert_eq!(meta.role, role, "message role differs");
}
