//! Shared task records ([`TaskRef`]): an `Arc<TaskRec>` whose memory goes back
//! to a free list of the thread that lets go of the last reference, and comes
//! from the creating thread's list, instead of the global allocator.
//!
//! Why: a record is made per deferred task and freed when the last of its
//! queues (parent's, taskgroup's, team's) lets go; glibc's per-thread cache
//! holds 7 blocks of a size, so a task tree with dozens of records alive, freed
//! in bursts when the team queue is pruned, took malloc's and free's slow paths
//! for almost every record (callgrind, 2026-11-26: 280 of 1 380 instructions
//! per task of a tree of 2 046). `std`'s `Arc` cannot take another allocator
//! on stable Rust, hence this small counted pointer.
//!
//! A reused block holds nothing of its last record: the record is dropped in
//! place before its block enters the list, and a new one is written whole.

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::cell::RefCell;
use std::ops::Deref;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering, fence};

use crate::task::TaskRec;

/// Free blocks a thread keeps at most; more are given back to the allocator.
/// Guessed: the team's throttle lets 64 tasks per member be outstanding, and
/// a producer or a `taskwait` frees about that many at a time; at a few
/// hundred bytes each, a full list costs a thread tens of KB.
const FREE_RECORDS_MAX: usize = 128;

struct Block {
    /// References alive.
    refs: AtomicUsize,
    rec: TaskRec,
}

/// A counted reference to a task record (see the module docs).
pub(crate) struct TaskRef {
    ptr: NonNull<Block>,
}

// Records are shared between the team's members like an `Arc<TaskRec>`.
const _: () = {
    const fn shareable<T: Send + Sync>() {}
    shareable::<TaskRec>();
};

// SAFETY: as for `Arc<TaskRec>`: `TaskRec` is Send and Sync (checked above),
// and the count is atomic.
unsafe impl Send for TaskRef {}
// SAFETY: as above.
unsafe impl Sync for TaskRef {}

/// The calling thread's free blocks; freed when the thread exits.
struct FreeList(Vec<NonNull<Block>>);

impl Drop for FreeList {
    fn drop(&mut self) {
        for b in self.0.drain(..) {
            // SAFETY: each block was allocated with this layout and holds no
            // record (dropped before it entered the list).
            unsafe { dealloc(b.as_ptr().cast(), Layout::new::<Block>()) }
        }
    }
}

thread_local! {
    static FREE: RefCell<FreeList> = const { RefCell::new(FreeList(Vec::new())) };
}

fn take_block() -> NonNull<Block> {
    let reused = FREE.try_with(|f| f.borrow_mut().0.pop()).ok().flatten();
    reused.unwrap_or_else(|| {
        let layout = Layout::new::<Block>();
        // SAFETY: `Block` has a non-zero size.
        let p = unsafe { alloc(layout) };
        NonNull::new(p.cast()).unwrap_or_else(|| handle_alloc_error(layout))
    })
}

/// Gives an empty block back: to the thread's list, or (full, or the thread
/// is exiting) to the allocator.
fn give_block(b: NonNull<Block>) {
    let kept = FREE
        .try_with(|f| {
            let mut f = f.borrow_mut();
            if f.0.len() < FREE_RECORDS_MAX {
                f.0.push(b);
                true
            } else {
                false
            }
        })
        .unwrap_or(false);
    if !kept {
        // SAFETY: allocated in `take_block` with this layout; its record was
        // dropped and nothing refers to it.
        unsafe { dealloc(b.as_ptr().cast(), Layout::new::<Block>()) }
    }
}

impl TaskRef {
    pub fn new(rec: TaskRec) -> TaskRef {
        let ptr = take_block();
        // SAFETY: `ptr` is a block of `Block`'s layout that nothing else uses
        // (fresh, or taken off the free list); writing initializes it whole.
        unsafe {
            ptr.as_ptr().write(Block {
                refs: AtomicUsize::new(1),
                rec,
            })
        };
        TaskRef { ptr }
    }

    /// A record written in place by `init` (not built elsewhere and moved
    /// in: a record is a few hundred bytes, its argument block included).
    /// `init` gets a slot valid for writing a `TaskRec` and must initialize
    /// every field of it; if it unwinds, the slot is leaked, never used.
    pub fn new_with(init: impl FnOnce(*mut TaskRec)) -> TaskRef {
        let ptr = take_block();
        // SAFETY: `ptr` is a block of `Block`'s layout that nothing else uses
        // (fresh, or taken off the free list); `init` initializes the record
        // (its contract), the count is written here.
        unsafe {
            (&raw mut (*ptr.as_ptr()).refs).write(AtomicUsize::new(1));
            init(&raw mut (*ptr.as_ptr()).rec);
        }
        TaskRef { ptr }
    }

    fn block(&self) -> &Block {
        // SAFETY: the block stays initialized while a reference (this one)
        // is alive.
        unsafe { self.ptr.as_ref() }
    }

    #[cfg(test)]
    pub fn ptr_eq(a: &TaskRef, b: &TaskRef) -> bool {
        a.ptr == b.ptr
    }

    /// The record's address as a handle that keeps one reference, for
    /// [`TaskRef::from_raw`] to take back.
    pub fn into_raw(self) -> usize {
        let p = self.ptr.as_ptr() as usize;
        std::mem::forget(self);
        p
    }

    /// # Safety
    /// `raw` came from [`TaskRef::into_raw`] and is taken back once.
    pub unsafe fn from_raw(raw: usize) -> TaskRef {
        TaskRef {
            // SAFETY: the caller's contract: a non-null block pointer.
            ptr: unsafe { NonNull::new_unchecked(raw as *mut Block) },
        }
    }
}

impl Clone for TaskRef {
    fn clone(&self) -> TaskRef {
        // Relaxed: a new reference is made from an existing one, which keeps
        // the block alive meanwhile (as `Arc::clone`).
        self.block().refs.fetch_add(1, Ordering::Relaxed);
        TaskRef { ptr: self.ptr }
    }
}

impl Deref for TaskRef {
    type Target = TaskRec;

    fn deref(&self) -> &TaskRec {
        &self.block().rec
    }
}

impl Drop for TaskRef {
    fn drop(&mut self) {
        // Release: pairs with the Acquire fence of whoever drops the last
        // reference, so every holder's use of the record happens before the
        // record is dropped (as in `Arc`).
        if self.block().refs.fetch_sub(1, Ordering::Release) != 1 {
            return;
        }
        fence(Ordering::Acquire);
        // SAFETY: this was the last reference: nobody else reads the block;
        // the record is dropped once, and the block then holds no record.
        unsafe { std::ptr::drop_in_place(&raw mut (*self.ptr.as_ptr()).rec) };
        give_block(self.ptr);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn free_len() -> usize {
        FREE.with(|f| f.borrow().0.len())
    }

    #[test]
    fn the_free_list_is_bounded() {
        let recs: Vec<TaskRef> = (0..FREE_RECORDS_MAX + 10)
            .map(|_| crate::task::test_record())
            .collect();
        drop(recs);
        assert_eq!(free_len(), FREE_RECORDS_MAX);
    }

    #[test]
    fn a_handle_keeps_one_reference() {
        let a = crate::task::test_record();
        let raw = a.clone().into_raw();
        drop(a);
        // SAFETY: `raw` came from `into_raw` above, taken back once.
        let b = unsafe { TaskRef::from_raw(raw) };
        assert_eq!(b.block().refs.load(Ordering::Relaxed), 1);
    }
}
