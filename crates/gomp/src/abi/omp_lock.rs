//! OpenMP locks in the storage of GCC's `omp.h`: `omp_lock_t` is 4 bytes (the lock
//! word itself), `omp_nest_lock_t` 16 bytes 8-aligned (word, count, owner). A nest
//! lock is owned by a *task*; the owner's identity is the address of its context.

use std::ffi::c_int;
use std::sync::atomic::AtomicU32;

use crate::ctx::{Ctx, with_current};
use crate::wordlock::{self, NestLock};

/// `omp_lock_t` as GCC's `omp.h` declares it.
#[repr(C, align(4))]
pub struct OmpLock {
    _x: [u8; 4],
}

/// `omp_nest_lock_t` as GCC's `omp.h` declares it on LP64.
#[repr(C, align(8))]
pub struct OmpNestLock {
    _x: [u8; 16],
}

const _: () = assert!(std::mem::size_of::<NestLock>() <= 16);
const _: () = assert!(std::mem::align_of::<NestLock>() <= 8);

/// # Safety
/// `lock` points to an `omp_lock_t` only used through this API.
unsafe fn word<'a>(lock: *mut OmpLock) -> &'a AtomicU32 {
    // SAFETY: 4 bytes, 4-aligned, accessed only atomically by this module.
    unsafe { AtomicU32::from_ptr(lock.cast::<u32>()) }
}

/// # Safety
/// `lock` points to an `omp_nest_lock_t` only used through this API.
unsafe fn nest<'a>(lock: *mut OmpNestLock) -> &'a NestLock {
    // SAFETY: 16 bytes, 8-aligned (checked above to fit `NestLock`), whose fields
    // are atomics; only this module accesses the storage.
    unsafe { &*lock.cast::<NestLock>() }
}

fn me() -> usize {
    with_current(|c| c as *const Ctx as usize)
}

/// # Safety
/// `lock` points to writable `omp_lock_t` storage not in use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_init_lock(lock: *mut OmpLock) {
    // SAFETY: forwarded contract.
    unsafe { word(lock) }.store(0, std::sync::atomic::Ordering::Relaxed);
}

/// # Safety
/// As for [`omp_init_lock`]; the hint is ignored.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_init_lock_with_hint(lock: *mut OmpLock, _hint: c_int) {
    // SAFETY: forwarded contract.
    unsafe { omp_init_lock(lock) }
}

/// # Safety
/// `lock` was initialized and is unlocked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_destroy_lock(_lock: *mut OmpLock) {}

/// # Safety
/// `lock` was initialized.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_set_lock(lock: *mut OmpLock) {
    // SAFETY: forwarded contract.
    wordlock::lock(unsafe { word(lock) });
}

/// # Safety
/// `lock` is held by the calling task.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_unset_lock(lock: *mut OmpLock) {
    // SAFETY: forwarded contract.
    wordlock::unlock(unsafe { word(lock) });
}

/// # Safety
/// `lock` was initialized.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_test_lock(lock: *mut OmpLock) -> c_int {
    // SAFETY: forwarded contract.
    c_int::from(wordlock::try_lock(unsafe { word(lock) }))
}

/// # Safety
/// `lock` points to writable `omp_nest_lock_t` storage not in use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_init_nest_lock(lock: *mut OmpNestLock) {
    // SAFETY: forwarded contract.
    unsafe { nest(lock) }.init();
}

/// # Safety
/// As for [`omp_init_nest_lock`]; the hint is ignored.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_init_nest_lock_with_hint(lock: *mut OmpNestLock, _hint: c_int) {
    // SAFETY: forwarded contract.
    unsafe { omp_init_nest_lock(lock) }
}

/// # Safety
/// `lock` was initialized and is unlocked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_destroy_nest_lock(_lock: *mut OmpNestLock) {}

/// # Safety
/// `lock` was initialized.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_set_nest_lock(lock: *mut OmpNestLock) {
    // SAFETY: forwarded contract.
    unsafe { nest(lock) }.lock(me());
}

/// # Safety
/// `lock` is held by the calling task.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_unset_nest_lock(lock: *mut OmpNestLock) {
    // SAFETY: forwarded contract.
    unsafe { nest(lock) }.unlock();
}

/// Returns the new nesting count, 0 if another task holds the lock.
///
/// # Safety
/// `lock` was initialized.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_test_nest_lock(lock: *mut OmpNestLock) -> c_int {
    // SAFETY: forwarded contract.
    let n = unsafe { nest(lock) }.try_lock(me());
    c_int::try_from(n).unwrap_or(c_int::MAX)
}
