//! Texts handed to V8: Latin-1 or UTF-16 as V8 stores strings, as external
//! strings where Node has them, so the main thread neither decodes nor copies.

use super::*;

/// A text as a string, or else as a JSON literal.
pub(super) fn text_js(text: Vec<u8>) -> (Option<Text>, Option<String>) {
    match String::from_utf8(text) {
        Ok(text) => (Some(Text::new(text)), None),
        Err(e) => (
            None,
            Some(crate::format::jsvalue::text_literal(e.as_bytes())),
        ),
    }
}

/// A listing text for JavaScript. Long texts (a listing's message texts run to
/// tens of MB) become external strings, encoded here on the scan thread as V8
/// stores them (Latin-1 where every character fits, else UTF-16): V8 then
/// neither decodes and copies them on the main thread nor moves them in each
/// garbage collection while the listing runs.
pub enum Text {
    Plain(String),
    Latin1(Vec<u8>),
    Utf16(Vec<u16>),
}

/// From this length on, an external string costs less than a copy.
const EXTERNAL_TEXT_FROM: usize = 1024;

impl Text {
    pub(super) fn new(text: String) -> Text {
        // V8 strings stop short of 2^29 characters.
        if text.len() < EXTERNAL_TEXT_FROM || text.len() >= 1 << 28 || external_strings().is_none()
        {
            return Text::Plain(text);
        }
        Text::encoded(text)
    }

    /// The text as V8 stores it: Latin-1 where every character fits, else UTF-16.
    fn encoded(text: String) -> Text {
        use encoding_rs::mem;
        if mem::is_ascii(text.as_bytes()) {
            let len = text.len();
            return Text::Latin1(fitted(text.into_bytes(), len));
        }
        // Both conversions write at most one unit per byte of UTF-8.
        if mem::is_str_latin1(&text) {
            let mut latin1 = vec![0; text.len()];
            let written = mem::convert_utf8_to_latin1_lossy(text.as_bytes(), &mut latin1);
            return Text::Latin1(fitted(latin1, written));
        }
        let mut utf16 = vec![0; text.len()];
        let written = mem::convert_str_to_utf16(&text, &mut utf16);
        Text::Utf16(fitted(utf16, written))
    }
}

/// `units` cut to its first `len`, its memory given back where much is left
/// over (a text grown by doubling; text in scripts of three UTF-8 bytes a
/// character).
fn fitted<T>(mut units: Vec<T>, len: usize) -> Vec<T> {
    units.truncate(len);
    if units.capacity() - len > len / 4 {
        units.shrink_to_fit();
    }
    units
}

/// `node_api_create_external_string_latin1` and `_utf16`.
type CreateExternal<T> = unsafe extern "C" fn(
    sys::napi_env,
    *mut T,
    usize,
    sys::napi_finalize,
    *mut std::ffi::c_void,
    *mut sys::napi_value,
    *mut bool,
) -> sys::napi_status;

struct ExternalStrings {
    /// Takes `char*`; `u8` here, the same pointer.
    latin1: CreateExternal<u8>,
    utf16: CreateExternal<u16>,
}

/// Node-API's external strings (Node-API 10; experimental from Node 20.4),
/// looked up at run time: a link to them would keep the addon from loading in
/// a Node without them.
fn external_strings() -> Option<&'static ExternalStrings> {
    static FOUND: std::sync::OnceLock<Option<ExternalStrings>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            let find = crate::os::host_symbol;
            let latin1 = find(c"node_api_create_external_string_latin1")?;
            let utf16 = find(c"node_api_create_external_string_utf16")?;
            // SAFETY: the symbols have the signatures Node-API documents.
            unsafe {
                Some(ExternalStrings {
                    latin1: std::mem::transmute::<*mut std::ffi::c_void, CreateExternal<u8>>(
                        latin1,
                    ),
                    utf16: std::mem::transmute::<*mut std::ffi::c_void, CreateExternal<u16>>(utf16),
                })
            }
        })
        .as_ref()
}

/// Frees an external text's characters once V8 no longer needs them.
unsafe extern "C" fn free_text<T>(
    _env: sys::napi_env,
    _data: *mut std::ffi::c_void,
    hint: *mut std::ffi::c_void,
) {
    // SAFETY: `hint` is the box `external_text` leaked, given back once.
    drop(unsafe { Box::from_raw(hint as *mut Vec<T>) });
}

/// A string over `chars`, which Node frees with `free_text` when the string
/// is collected (or at once, if it copied them).
unsafe fn external_text<T>(
    env: sys::napi_env,
    create: CreateExternal<T>,
    mut chars: Vec<T>,
    copy: impl FnOnce(*const T, usize, *mut sys::napi_value) -> sys::napi_status,
) -> Result<sys::napi_value> {
    let (ptr, len) = (chars.as_mut_ptr(), chars.len());
    let hint = Box::into_raw(Box::new(chars));
    let mut result = std::ptr::null_mut();
    let mut copied = false;
    // SAFETY: the characters live until `free_text` runs.
    let status = unsafe {
        create(
            env,
            ptr,
            len,
            Some(free_text::<T>),
            hint.cast(),
            &mut result,
            &mut copied,
        )
    };
    if status == sys::Status::napi_ok {
        return Ok(result);
    }
    // On failure Node may still hold the characters (it frees them when the
    // environment ends): copy them rather than take them back.
    // SAFETY: nothing freed them.
    copied_text(unsafe { std::slice::from_raw_parts(ptr, len) }, copy)
}

/// A string copied from `chars` by `copy`.
fn copied_text<T>(
    chars: &[T],
    copy: impl FnOnce(*const T, usize, *mut sys::napi_value) -> sys::napi_status,
) -> Result<sys::napi_value> {
    let mut result = std::ptr::null_mut();
    check_status!(
        copy(chars.as_ptr(), chars.len(), &mut result),
        "Failed to create a listing text"
    )?;
    Ok(result)
}

/// A text V8 copies, encoded here as it stores strings (so it does not decode
/// UTF-8 on the main thread): for texts parsed at once and then dropped, which
/// the young generation frees sooner than external strings' memory.
pub struct Copied(Text);

impl Copied {
    pub(super) fn new(text: String) -> Copied {
        // V8 strings stop short of 2^29 characters; napi reports the error.
        if text.len() >= 1 << 28 {
            return Copied(Text::Plain(text));
        }
        Copied(Text::encoded(text))
    }
}

impl ToNapiValue for Copied {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        // SAFETY: napi calls on the caller's env, over characters alive here.
        unsafe {
            match val.0 {
                Text::Plain(text) => String::to_napi_value(env, text),
                Text::Latin1(chars) => copied_text(&chars, |p, n, r| {
                    sys::napi_create_string_latin1(env, p.cast(), n as isize, r)
                }),
                Text::Utf16(chars) => copied_text(&chars, |p, n, r| {
                    sys::napi_create_string_utf16(env, p, n as isize, r)
                }),
            }
        }
    }
}

impl ToNapiValue for Text {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        let latin1 = |p: *const u8, n: usize, r: *mut sys::napi_value| {
            // SAFETY: `p` points to `n` valid bytes (nothing freed them).
            unsafe { sys::napi_create_string_latin1(env, p.cast(), n as isize, r) }
        };
        let utf16 = |p: *const u16, n: usize, r: *mut sys::napi_value| {
            // SAFETY: as above, `n` UTF-16 units.
            unsafe { sys::napi_create_string_utf16(env, p, n as isize, r) }
        };
        // `Text::new` chose an external form only where the functions exist;
        // without them (not reached) the characters are copied.
        let api = external_strings();
        // SAFETY: napi calls on the caller's env.
        unsafe {
            match val {
                Text::Plain(text) => String::to_napi_value(env, text),
                Text::Latin1(chars) => match api {
                    Some(api) => external_text(env, api.latin1, chars, latin1),
                    None => copied_text(&chars, latin1),
                },
                Text::Utf16(chars) => match api {
                    Some(api) => external_text(env, api.utf16, chars, utf16),
                    None => copied_text(&chars, utf16),
                },
            }
        }
    }
}

/// The UTF-8 of a JavaScript string, with one spare byte of capacity (for the
/// newline an append adds). Read as UTF-16 into a buffer kept for the thread:
/// asking Node-API for UTF-8 makes V8 flatten a string `JSON.stringify` built
/// in pieces into a new one, then measure and encode it (two passes); its
/// UTF-16 is copied from the pieces, and `encoding_rs` encodes it in one.
/// A lone surrogate becomes U+FFFD, as in a string taken as UTF-8.
pub(super) fn utf8_of(text: &napi::JsString) -> Result<Vec<u8>> {
    thread_local! {
        static SCRATCH: std::cell::RefCell<(Vec<u16>, Vec<u8>)> =
            const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
    }
    let len = text.utf16_len()?;
    SCRATCH.with(|scratch| {
        let (units, bytes) = &mut *scratch.borrow_mut();
        if units.len() < len + 1 {
            units.resize(len + 1, 0);
        }
        let mut written = 0usize;
        // SAFETY: `units` has room for `len + 1` units (the string and the
        // terminating zero Node-API writes) and outlives the call.
        let status = unsafe {
            napi::sys::napi_get_value_string_utf16(
                text.value().env,
                text.value().value,
                units.as_mut_ptr(),
                len + 1,
                &mut written,
            )
        };
        if status != napi::sys::Status::napi_ok {
            return Err(Error::from_reason("Failed to read a string"));
        }
        // At most 3 bytes a unit.
        if bytes.len() < written * 3 {
            bytes.resize(written * 3, 0);
        }
        let end = encoding_rs::mem::convert_utf16_to_utf8(&units[..written], bytes);
        let mut out = Vec::with_capacity(end + 1);
        out.extend_from_slice(&bytes[..end]);
        Ok(out)
    })
}
