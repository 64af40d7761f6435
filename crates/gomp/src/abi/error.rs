//! The `error` directive with `at(execution)` (OpenMP 5.1 §2.5.4), which
//! GCC 12 lowers to `GOMP_warning` (`severity(warning)`) and `GOMP_error`
//! (`severity(fatal)`, the default). Messages go to stderr in libgomp's
//! words; a fatal one ends the program with exit status 1, as libgomp's does.

use std::ffi::{CStr, c_char};
use std::io::Write;

/// The directive's message: `len` bytes at `msg`, or up to its NUL when
/// `len` is `usize::MAX` (GCC's "NUL-terminated"); `None` without one.
///
/// # Safety
/// `msg` is null, or valid for `len` bytes, or NUL-terminated when `len` is
/// `usize::MAX`.
unsafe fn message(msg: *const c_char, len: usize) -> Option<String> {
    if msg.is_null() {
        return None;
    }
    let bytes = if len == usize::MAX {
        // SAFETY: the caller's contract: NUL-terminated.
        unsafe { CStr::from_ptr(msg) }.to_bytes()
    } else {
        // SAFETY: the caller's contract: `len` readable bytes.
        unsafe { std::slice::from_raw_parts(msg.cast::<u8>(), len) }
    };
    Some(String::from_utf8_lossy(bytes).into_owned())
}

/// The line reported for a directive with message `m`.
fn line(fatal: bool, m: Option<&str>) -> String {
    let mut s = String::from("maestro-gomp: ");
    if fatal {
        s.push_str("fatal error: ");
    }
    s.push_str("error directive encountered");
    if let Some(m) = m {
        s.push_str(": ");
        s.push_str(m);
    }
    s
}

/// `#pragma omp error at(execution) severity(warning) [message(msg)]`:
/// reports the message and goes on.
///
/// # Safety
/// As for [`message`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_warning(msg: *const c_char, len: usize) {
    // SAFETY: forwarded contract.
    let m = unsafe { message(msg, len) };
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", line(false, m.as_deref()));
    let _ = err.flush();
}

/// `#pragma omp error at(execution) [severity(fatal)] [message(msg)]`:
/// reports the message and ends the program (exit status 1).
///
/// # Safety
/// As for [`message`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_error(msg: *const c_char, len: usize) -> ! {
    // SAFETY: forwarded contract.
    let m = unsafe { message(msg, len) };
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{}", line(true, m.as_deref()));
    let _ = err.flush();
    drop(err);
    std::process::exit(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_with_and_without_length() {
        let text = b"stop here, and more";
        // SAFETY: 9 readable bytes; a NUL-terminated literal; null.
        unsafe {
            assert_eq!(
                message(text.as_ptr().cast(), 9).as_deref(),
                Some("stop here")
            );
            assert_eq!(
                message(c"whole".as_ptr(), usize::MAX).as_deref(),
                Some("whole")
            );
            assert_eq!(message(std::ptr::null(), usize::MAX), None);
        }
        assert_eq!(
            line(true, Some("x")),
            "maestro-gomp: fatal error: error directive encountered: x"
        );
        assert_eq!(
            line(false, None),
            "maestro-gomp: error directive encountered"
        );
    }
}
