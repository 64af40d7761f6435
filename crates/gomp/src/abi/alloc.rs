//! The memory-allocator API (`omp_init_allocator` … `omp_free`) and the
//! `GOMP_alloc`/`GOMP_free` pair GCC emits for the `allocate` directive and
//! clause; the semantics are in `crate::alloc`.

use std::ffi::{c_int, c_void};

use crate::alloc::{self, Allocator, Handle, Trait};

/// Makes an allocator for `memspace` with `ntraits` traits; `omp_null_allocator`
/// (0) if a trait or the memory space is not one we can honour.
///
/// # Safety
/// `traits` points to `ntraits` readable `omp_alloctrait_t` (or `ntraits <= 0`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_init_allocator(
    memspace: usize,
    ntraits: c_int,
    traits: *const Trait,
) -> Handle {
    let traits: &[Trait] = match usize::try_from(ntraits) {
        Ok(n) if n > 0 && !traits.is_null() => {
            // SAFETY: the caller's contract: `n` readable traits.
            unsafe { std::slice::from_raw_parts(traits, n) }
        }
        _ => &[],
    };
    match Allocator::new(memspace, traits) {
        Ok(a) => alloc::register(a),
        Err(_) => alloc::NULL_ALLOCATOR,
    }
}

/// # Safety
/// `allocator` is null, predefined, or from `omp_init_allocator` and not
/// destroyed before.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_destroy_allocator(allocator: Handle) {
    // SAFETY: the caller's contract.
    unsafe { alloc::unregister(allocator) }
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_set_default_allocator(allocator: Handle) {
    alloc::set_default_allocator(allocator);
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_get_default_allocator() -> Handle {
    alloc::default_allocator()
}

/// # Safety
/// `allocator` is a valid handle (null: the default allocator).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_alloc(size: usize, allocator: Handle) -> *mut c_void {
    // SAFETY: forwarded contract.
    unsafe { alloc::allocate(size, 0, allocator, false).cast() }
}

/// # Safety
/// As for [`omp_alloc`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_aligned_alloc(
    alignment: usize,
    size: usize,
    allocator: Handle,
) -> *mut c_void {
    // SAFETY: forwarded contract.
    unsafe { alloc::allocate(size, alignment, allocator, false).cast() }
}

/// # Safety
/// As for [`omp_alloc`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_calloc(nmemb: usize, size: usize, allocator: Handle) -> *mut c_void {
    match nmemb.checked_mul(size) {
        // SAFETY: forwarded contract.
        Some(n) => unsafe { alloc::allocate(n, 0, allocator, true).cast() },
        None => std::ptr::null_mut(),
    }
}

/// # Safety
/// As for [`omp_alloc`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_aligned_calloc(
    alignment: usize,
    nmemb: usize,
    size: usize,
    allocator: Handle,
) -> *mut c_void {
    match nmemb.checked_mul(size) {
        // SAFETY: forwarded contract.
        Some(n) => unsafe { alloc::allocate(n, alignment, allocator, true).cast() },
        None => std::ptr::null_mut(),
    }
}

/// Frees `ptr` (null: nothing), whatever allocator it came from.
///
/// # Safety
/// `ptr` is null or came from one of these functions and was not freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_free(ptr: *mut c_void, _allocator: Handle) {
    // SAFETY: forwarded contract.
    unsafe { alloc::free(ptr.cast()) }
}

/// Moves `ptr`'s contents to a new allocation of `size` bytes by `allocator`
/// (`omp_null_allocator`: the one that made `ptr`) and frees `ptr`; a null
/// `ptr` allocates, a zero `size` frees and returns null. On failure `ptr`
/// stays valid and null is returned. Within one pool the new block replaces
/// the old in the count (`alloc::reallocate`).
///
/// # Safety
/// As for [`omp_alloc`] and [`omp_free`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_realloc(
    ptr: *mut c_void,
    size: usize,
    allocator: Handle,
    _free_allocator: Handle,
) -> *mut c_void {
    if ptr.is_null() {
        // SAFETY: the caller's contract on `allocator`.
        return unsafe { omp_alloc(size, allocator) };
    }
    if size == 0 {
        // SAFETY: the caller's contract: `ptr` is live and ours.
        unsafe { alloc::free(ptr.cast()) };
        return std::ptr::null_mut();
    }
    // SAFETY: the caller's contract: `ptr` is live and ours, `allocator` is
    // valid (null: the one that made `ptr`), `size > 0`.
    unsafe { alloc::reallocate(ptr.cast(), size, allocator).cast() }
}

/// The `allocate` directive's allocation (GCC ≥ 11).
///
/// # Safety
/// As for [`omp_aligned_alloc`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_alloc(
    alignment: usize,
    size: usize,
    allocator: Handle,
) -> *mut c_void {
    // SAFETY: forwarded contract.
    let p = unsafe { alloc::allocate(size, alignment, allocator, false) };
    if p.is_null() && size > 0 {
        // The directive has no way to report it (libgomp aborts too).
        crate::runtime::fatal(&format!(
            "GOMP_alloc: out of memory allocating {size} bytes"
        ));
    }
    p.cast()
}

/// # Safety
/// As for [`omp_free`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_free(ptr: *mut c_void, _allocator: Handle) {
    // SAFETY: forwarded contract.
    unsafe { alloc::free(ptr.cast()) }
}
