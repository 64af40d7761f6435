//! `heap::release_free_heap` returns freed blocks from the middle of a malloc
//! arena — what a merge leaves behind — to the kernel. One test in its own
//! binary: resident memory is the process's.

#![cfg(all(target_os = "linux", target_env = "gnu"))]

use std::hint::black_box;

use maestro_storage::heap::release_free_heap;

/// Resident bytes of this process (`/proc/self/statm`'s second field).
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("procfs");
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("statm's resident field");
    // SAFETY: sysconf reads a constant of the system.
    pages * unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize
}

#[test]
fn freed_blocks_inside_the_heap_leave_memory_once_released() {
    const BLOCK: usize = 64 << 10; // below glibc's mmap threshold: heap
    const BLOCKS: usize = 1024; // 64 MiB
    let mut blocks: Vec<Vec<u8>> = (0..BLOCKS).map(|_| vec![1u8; BLOCK]).collect();
    // The last block stays, so the freed ones are not the arena's top
    // (which free() trims by itself).
    let last = blocks.pop().expect("blocks");
    let held = resident_bytes();
    drop(black_box(blocks));
    let after_free = resident_bytes();
    assert!(
        after_free + (16 << 20) > held,
        "free() alone returned most of it ({held} -> {after_free} bytes): nothing left to test"
    );
    assert!(release_free_heap(), "malloc_trim released nothing");
    let after_release = resident_bytes();
    assert!(
        after_release + (48 << 20) <= after_free,
        "resident {after_free} -> {after_release} bytes: the 64 MiB freed stayed"
    );
    black_box(last);
}
