//! Deep nesting for both targets.
//!
//! Inputs are a few KiB, too small to nest deeply enough to overflow the stack
//! in recursive code: a frame can be 30 bytes or less, so that takes some
//! 300,000 levels in the 8 MiB main thread. An input that already nests (holds
//! `[[[[[[[[` or `{"":{"":{"":{"":`) is also read as a deep copy: each empty
//! array `[]` made arrays about `LEVELS` deep and each empty object `{}` objects
//! half as deep (`{"":{"":...{}...}}`), the levels shared among them. The copy
//! is valid JSON where the input was (inside strings it is only longer text)
//! and keeps its shape around those values.
//!
//! A deep copy takes about a second to read, so it is read only while deep
//! copies have taken under a fifth of the time this process has run. The first
//! nesting input always qualifies, so replaying one input reads its copy.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const LEVELS: usize = 500_000;

/// Calls `check` with the deep copy of `data`, when it nests and it is its turn.
pub fn with_deep_copy(data: &[u8], check: impl FnOnce(&[u8])) {
    static START: OnceLock<Instant> = OnceLock::new();
    static SPENT_NANOS: AtomicU64 = AtomicU64::new(0);
    let elapsed = START.get_or_init(Instant::now).elapsed();
    let spent = Duration::from_nanos(SPENT_NANOS.load(Ordering::Relaxed));
    // PISN_FUZZ_DEEP_ALWAYS=1 reads every copy (to replay a corpus through them).
    static ALWAYS: OnceLock<bool> = OnceLock::new();
    let always = *ALWAYS.get_or_init(|| std::env::var_os("PISN_FUZZ_DEEP_ALWAYS").is_some());
    if !always && spent > elapsed / 5 {
        return;
    }
    let Some(deep) = deepened(data) else {
        return;
    };
    let began = Instant::now();
    check(&deep);
    SPENT_NANOS.fetch_add(began.elapsed().as_nanos() as u64, Ordering::Relaxed);
}

fn deepened(data: &[u8]) -> Option<Vec<u8>> {
    let has = |pattern: &[u8]| data.windows(pattern.len()).any(|w| w == pattern);
    if !has(b"[[[[[[[[") && !has(br#"{"":{"":{"":{"":"#) {
        return None;
    }
    let empties = data
        .windows(2)
        .filter(|w| *w == b"[]" || *w == b"{}")
        .count();
    if empties == 0 {
        return None;
    }
    let levels = (LEVELS / empties).max(1);
    let mut out = Vec::with_capacity(data.len() + 3 * LEVELS);
    let mut i = 0;
    while i < data.len() {
        match &data[i..] {
            [b'[', b']', ..] => {
                out.extend(std::iter::repeat_n(b'[', levels));
                out.extend(std::iter::repeat_n(b']', levels));
                i += 2;
            }
            [b'{', b'}', ..] => {
                for _ in 0..levels / 2 {
                    out.extend_from_slice(br#"{"":"#);
                }
                out.extend_from_slice(b"{}");
                out.extend(std::iter::repeat_n(b'}', levels / 2));
                i += 2;
            }
            _ => {
                out.push(data[i]);
                i += 1;
            }
        }
    }
    Some(out)
}
