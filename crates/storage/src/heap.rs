//! Giving freed heap memory back to the operating system.
//!
//! Why: a merge builds a table's new main beside the old one and frees the
//! old one once no snapshot reads it — megabytes per column, every few
//! seconds under CH-benCHmark. glibc serves such blocks from its heap
//! arenas once its dynamic mmap threshold has risen (it rises to the size of
//! every mapped block freed, up to 32 MiB), and a freed block in the middle
//! of an arena stays resident: measured, the process held about twice the
//! column mirror's own bytes extra (README, "Memory of the dual format").
//! `malloc_trim(0)` returns the whole free pages of every arena (glibc ≥ 2.8
//! releases free chunks inside the heap too, not only its top), without
//! changing where later blocks come from.

/// Returns the free pages of malloc's arenas to the kernel; whether any
/// memory was released. A no-op (`false`) where the allocator has no such
/// call.
pub fn release_free_heap() -> bool {
    release()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn release() -> bool {
    // SAFETY: malloc_trim takes each arena's lock itself and only returns
    // free pages; it is safe to call at any time from any thread.
    unsafe { libc::malloc_trim(0) == 1 }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release() -> bool {
    false
}
