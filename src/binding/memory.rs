//! Asking V8 to hand back the memory its collections emptied: it keeps those
//! pages resident for its next allocations until a memory-reducing collection,
//! which a process that let go of what it wrote may wait long for.

use super::*;

use std::ffi::c_void;

/// `v8::Isolate::GetCurrent()`: the isolate of the calling thread.
type GetCurrent = unsafe extern "C" fn() -> *mut c_void;
/// `v8::Isolate::MemoryPressureNotification(MemoryPressureLevel)`, a member
/// function called with the isolate as its first argument: on x86-64 System
/// V, arm64 (AAPCS64, Apple's too) and Windows x64/arm64 a non-virtual member
/// function takes `this` where a free function takes its first argument, and
/// the enum (an `int`) as the second. (Not so on 32-bit Windows, `thiscall`,
/// which is not a target of this package.)
type PressureNotification = unsafe extern "C" fn(*mut c_void, i32);

struct V8Memory {
    current: GetCurrent,
    notify: PressureNotification,
}

/// V8's functions, looked up at run time in the host process: where they are
/// not exported (another engine: Bun, Deno), asking does nothing.
fn v8_memory() -> Option<&'static V8Memory> {
    static FOUND: std::sync::OnceLock<Option<V8Memory>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| {
            let current = crate::os::host_cxx_symbol(
                c"_ZN2v87Isolate10GetCurrentEv",
                c"?GetCurrent@Isolate@v8@@SAPEAV12@XZ",
            )?;
            let notify = crate::os::host_cxx_symbol(
                c"_ZN2v87Isolate26MemoryPressureNotificationENS_19MemoryPressureLevelE",
                c"?MemoryPressureNotification@Isolate@v8@@QEAAXW4MemoryPressureLevel@2@@Z",
            )?;
            // SAFETY: the symbols are V8's functions of these signatures (above).
            unsafe {
                Some(V8Memory {
                    current: std::mem::transmute::<*mut c_void, GetCurrent>(current),
                    notify: std::mem::transmute::<*mut c_void, PressureNotification>(notify),
                })
            }
        })
        .as_ref()
}

/// Tells V8 of memory pressure (`critical`: `kCritical`, a full memory-reducing
/// collection now; else `kModerate`, an incremental one started now), from the
/// JavaScript thread. Returns whether it could: false where the host has no V8
/// functions to call.
#[napi]
pub fn request_memory_back(critical: bool) -> bool {
    let Some(v8) = v8_memory() else {
        return false;
    };
    // SAFETY: called by JavaScript, so on a thread that has entered its
    // isolate; GetCurrent answers that isolate.
    let isolate = unsafe { (v8.current)() };
    if isolate.is_null() {
        return false;
    }
    // MemoryPressureLevel: kNone 0, kModerate 1, kCritical 2.
    let level = if critical { 2 } else { 1 };
    // SAFETY: the isolate is this thread's, and the call is V8's own API.
    unsafe { (v8.notify)(isolate, level) };
    true
}
