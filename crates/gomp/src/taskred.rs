//! Task reductions (`taskgroup task_reduction`, `task in_reduction`,
//! `reduction(task, …)` on `parallel` and work-sharing constructs, `scope`
//! reductions, `taskloop reduction`), as GCC 12 lowers them.
//!
//! GCC describes the reductions of one construct in an array of words it owns
//! (`uintptr_t *` in libgomp's entry points):
//!
//! | word | on entry | we write |
//! |---|---|---|
//! | `d[0]` | number of reductions `cnt` | — |
//! | `d[1]` | bytes of one thread's chunk (all `cnt` private copies, each followed by GCC's "initialized" flag) | — |
//! | `d[2]` | the chunk's alignment | the base of the private copies: chunk `t` is at `d[2] + t × d[1]` |
//! | `d[3]` | allocator (`-1` = default) | — |
//! | `d[4]` | next array of the same construct, 0 if none | — |
//! | `d[5]` | 0 | our handle (see below) in the first array |
//! | `d[6]` | — | the end of the private copies |
//! | `d[7 + 3i]` | address of reduction `i`'s original list item | — |
//! | `d[8 + 3i]` | its offset in a chunk (increasing with `i`) | — |
//! | `d[9 + 3i]` | — | nothing (libgomp's internal use) |
//!
//! The compiler's code does everything but the bookkeeping: it initializes a
//! private copy on first use (the zeroed flag tells it whether it did), and at
//! the end of the construct it combines the chunks of threads `0..team size`
//! into the original list items and calls the unregister entry point. The
//! runtime allocates the chunks zeroed (one per team member, indexed by the
//! OpenMP thread number, never by OS thread: members of one team may run on one
//! worker), tells tasks where their member's copy is
//! ([`remap`]), and frees the chunks. When each step happens is in PROTOCOL.md
//! ("Task reductions").

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ffi::c_void;
use std::sync::Arc;

use crate::ctx::Ctx;
use crate::runtime;

/// At most this many arrays chained through `d[4]` (a guard against a
/// corrupted chain; GCC emits one per construct).
const MAX_CHAIN: usize = 1024;

/// The private copies of one reductions array: `n` zeroed chunks.
pub(crate) struct Chunks {
    ptr: *mut u8,
    layout: Layout,
    /// Bytes of one chunk (`d[1]`).
    size: usize,
    /// Chunks (team members).
    n: usize,
}

// SAFETY: plain memory the compiled code of one team reads and writes, each
// member its own chunk (and the combining thread all of them after the
// construct's barrier or join); we only allocate and free it.
unsafe impl Send for Chunks {}
// SAFETY: as above.
unsafe impl Sync for Chunks {}

impl Chunks {
    fn new(size: usize, align: usize, n: usize) -> Chunks {
        let align = align.max(1);
        if !align.is_power_of_two() {
            runtime::fatal(&format!(
                "task reduction: alignment {align} is not a power of two"
            ));
        }
        let bytes = size
            .checked_mul(n)
            .unwrap_or_else(|| runtime::fatal("task reduction: private copies overflow"));
        let layout = Layout::from_size_align(bytes.max(1), align)
            .unwrap_or_else(|_| runtime::fatal("task reduction: bad private copy layout"));
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        Chunks {
            ptr,
            layout,
            size,
            n,
        }
    }

    fn base(&self) -> usize {
        self.ptr as usize
    }

    fn end(&self) -> usize {
        self.base() + self.size * self.n
    }
}

impl Drop for Chunks {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// One reductions array as registered: its private copies and its entries.
struct Array {
    chunks: Arc<Chunks>,
    /// (original address, offset in a chunk), in GCC's order (by offset).
    by_offset: Vec<(usize, usize)>,
    /// The same, sorted by original address.
    by_addr: Vec<(usize, usize)>,
}

/// The task reductions visible in a taskgroup (or a `parallel` with
/// `reduction(task, …)`): the arrays registered for it, then those of the
/// enclosing ones (`outer`), innermost first, as in OpenMP's scoping.
pub(crate) struct Registration {
    arrays: Vec<Array>,
    outer: Option<Arc<Registration>>,
}

/// Reads word `i` of GCC's array.
///
/// # Safety
/// `d` points to a reductions array of at least `i + 1` words.
unsafe fn word(d: *const usize, i: usize) -> usize {
    // SAFETY: the caller's contract.
    unsafe { d.add(i).read() }
}

/// The arrays of the chain starting at `data` (linked through `d[4]`).
///
/// # Safety
/// `data` is a reductions array as GCC emits it, and so is every array its
/// `d[4]` chain names.
unsafe fn chain(data: *mut usize) -> Vec<*mut usize> {
    let mut out = Vec::new();
    let mut d = data;
    while !d.is_null() {
        if out.len() == MAX_CHAIN {
            runtime::fatal("task reduction: the chain of reduction arrays does not end");
        }
        out.push(d);
        // SAFETY: the caller's contract; word 4 is the link.
        d = unsafe { word(d, 4) } as *mut usize;
    }
    out
}

/// Allocates the private copies of every array of `data`'s chain for a team of
/// `n`, zeroed.
///
/// # Safety
/// As for [`chain`].
pub(crate) unsafe fn allocate(data: *mut usize, n: usize) -> Vec<Arc<Chunks>> {
    // SAFETY: forwarded.
    let arrays = unsafe { chain(data) };
    arrays
        .into_iter()
        .map(|d| {
            // SAFETY: words 1 and 2 of a reductions array: size and alignment.
            let (size, align) = unsafe { (word(d, 1), word(d, 2)) };
            Arc::new(Chunks::new(size, align, n))
        })
        .collect()
}

impl Registration {
    /// Registers GCC's array chain at `data` on the private copies `chunks`
    /// (one per array, from [`allocate`]; shared by the members of a
    /// work-sharing construct): writes the copies' base and end into each
    /// array (`d[2]`, `d[6]`).
    ///
    /// # Safety
    /// As for [`chain`]; the arrays are writable and nobody else accesses them
    /// meanwhile.
    pub(crate) unsafe fn new(
        data: *mut usize,
        chunks: &[Arc<Chunks>],
        outer: Option<Arc<Registration>>,
    ) -> Registration {
        // SAFETY: forwarded.
        let list = unsafe { chain(data) };
        if list.len() != chunks.len() {
            runtime::fatal(
                "task reduction: members of a construct registered different reductions",
            );
        }
        let mut arrays = Vec::with_capacity(list.len());
        for (&d, c) in list.iter().zip(chunks) {
            // SAFETY: words 0 and 1 of a reductions array.
            let (cnt, size) = unsafe { (word(d, 0), word(d, 1)) };
            if size != c.size {
                runtime::fatal(
                    "task reduction: members of a construct registered different reductions",
                );
            }
            let by_offset: Vec<(usize, usize)> = (0..cnt)
                // SAFETY: a reductions array has 3 words per entry after 7.
                .map(|i| unsafe { (word(d, 7 + 3 * i), word(d, 8 + 3 * i)) })
                .collect();
            let mut by_addr = by_offset.clone();
            by_addr.sort_unstable();
            // SAFETY: the caller's contract: the array is ours to write.
            unsafe {
                d.add(2).write(c.base());
                d.add(6).write(c.end());
            }
            arrays.push(Array {
                chunks: c.clone(),
                by_offset,
                by_addr,
            });
        }
        Registration { arrays, outer }
    }

    /// The registrations from this one outwards.
    fn scopes(&self) -> impl Iterator<Item = &Registration> {
        std::iter::successors(Some(self), |r| r.outer.as_deref())
    }

    /// Maps `p` (an original list item, or any member's private copy of one)
    /// to member `id`'s copy; also returns the original list item.
    fn remap(&self, p: usize, id: usize) -> Option<(usize, usize)> {
        for r in self.scopes() {
            for a in &r.arrays {
                if let Ok(k) = a.by_addr.binary_search_by_key(&p, |&(orig, _)| orig) {
                    let (orig, off) = a.by_addr[k];
                    return Some((a.copy(id, off), orig));
                }
            }
        }
        for r in self.scopes() {
            for a in &r.arrays {
                let c = &a.chunks;
                if (c.base()..c.end()).contains(&p) && c.size > 0 {
                    let off = (p - c.base()) % c.size;
                    let orig = match a.by_offset.binary_search_by_key(&off, |&(_, o)| o) {
                        Ok(k) => a.by_offset[k].0,
                        Err(_) => 0,
                    };
                    return Some((a.copy(id, off), orig));
                }
            }
        }
        None
    }
}

impl Array {
    /// Address of member `id`'s copy at `off` in its chunk.
    fn copy(&self, id: usize, off: usize) -> usize {
        if id >= self.chunks.n {
            runtime::fatal(&format!(
                "task reduction: thread {id} of a team of more than the {} the reduction was registered for",
                self.chunks.n
            ));
        }
        self.chunks.base() + id * self.chunks.size + off
    }
}

/// Stores the owning handle of `reg` in `d[5]` of GCC's first array, for
/// [`take_handle`] at `GOMP_taskgroup_reduction_unregister`.
///
/// # Safety
/// `data` is a writable reductions array.
pub(crate) unsafe fn store_handle(data: *mut usize, reg: Arc<Registration>) {
    // SAFETY: the caller's contract; word 5 is the runtime's.
    unsafe { data.add(5).write(Arc::into_raw(reg) as usize) }
}

/// Takes back the handle [`store_handle`] put into `data`; `None` if there is
/// none.
///
/// # Safety
/// `data` is a reductions array whose word 5 is 0 or a handle from
/// [`store_handle`] not taken yet.
pub(crate) unsafe fn take_handle(data: *mut usize) -> Option<Arc<Registration>> {
    // SAFETY: the caller's contract.
    let raw = unsafe { word(data, 5) } as *const Registration;
    if raw.is_null() {
        return None;
    }
    // SAFETY: as above; cleared so the handle is taken once.
    unsafe { data.add(5).write(0) };
    // SAFETY: `raw` came from `Arc::into_raw` in `store_handle`, taken once.
    Some(unsafe { Arc::from_raw(raw) })
}

/// `GOMP_task_reduction_remap`: for `i < cnt`, replaces `ptrs[i]` (an original
/// list item, or a private copy of one) by the calling member's private copy;
/// for `i < cntorig` also stores the original list item in `ptrs[cnt + i]`.
///
/// # Safety
/// `ptrs` is valid for reads and writes of `cnt + cntorig` pointers.
pub(crate) unsafe fn remap(ctx: &Ctx, cnt: usize, cntorig: usize, ptrs: *mut *mut c_void) {
    ctx.with_reductions(|reg| {
        let Some(reg) = reg else {
            runtime::fatal("GOMP_task_reduction_remap: in_reduction outside any task reduction");
        };
        // SAFETY: forwarded contract.
        unsafe { remap_in(reg, ctx.num, cnt, cntorig, ptrs) }
    });
}

/// [`remap`] for member `id` in `reg`.
///
/// # Safety
/// As for [`remap`].
unsafe fn remap_in(
    reg: &Registration,
    id: usize,
    cnt: usize,
    cntorig: usize,
    ptrs: *mut *mut c_void,
) {
    for i in 0..cnt {
        // SAFETY: `i < cnt`, within the caller's bounds.
        let p = unsafe { ptrs.add(i).read() } as usize;
        let Some((copy, orig)) = reg.remap(p, id) else {
            runtime::fatal(&format!(
                "GOMP_task_reduction_remap: no task_reduction or reduction(task, ...) \
                 matches the in_reduction item at {p:#x}"
            ));
        };
        // SAFETY: as above.
        unsafe { ptrs.add(i).write(copy as *mut c_void) };
        if i < cntorig {
            if orig == 0 {
                runtime::fatal(&format!(
                    "GOMP_task_reduction_remap: no original list item for {p:#x}"
                ));
            }
            // SAFETY: `cnt + i < cnt + cntorig`, within the caller's bounds.
            unsafe { ptrs.add(cnt + i).write(orig as *mut c_void) };
        }
    }
}

/// `GOMP_taskgroup_reduction_register`: the innermost taskgroup of `ctx` (just
/// opened by the compiler's code) gets private copies for every member of the
/// team, zeroed.
///
/// # Safety
/// `data` is a reductions array chain as GCC emits it, writable, alive until
/// `GOMP_taskgroup_reduction_unregister(data)`.
pub(crate) unsafe fn taskgroup_register(ctx: &Ctx, data: *mut usize) {
    // SAFETY: forwarded.
    let chunks = unsafe { allocate(data, ctx.team.n) };
    let mut groups = ctx.groups.borrow_mut();
    let Some(g) = groups.last_mut() else {
        runtime::fatal("GOMP_taskgroup_reduction_register outside a taskgroup");
    };
    // SAFETY: forwarded.
    let reg = Arc::new(unsafe { Registration::new(data, &chunks, g.red.take()) });
    g.red = Some(reg.clone());
    // SAFETY: forwarded.
    unsafe { store_handle(data, reg) };
}

/// `GOMP_taskgroup_reduction_unregister`: releases what the registration of
/// `data` holds; the private copies are freed once no task of the group can
/// use them (at once: the group has ended).
///
/// # Safety
/// `data` was registered by [`taskgroup_register`] or `GOMP_parallel_reductions`.
pub(crate) unsafe fn taskgroup_unregister(data: *mut usize) {
    // SAFETY: forwarded.
    if unsafe { take_handle(data) }.is_none() {
        runtime::fatal("GOMP_taskgroup_reduction_unregister of reductions not registered");
    }
}

/// A member enters a work-sharing construct (or `scope`) with task reductions
/// `data` whose private copies `chunks` the construct shares: opens the
/// member's taskgroup for the construct and registers its array on them.
///
/// # Safety
/// As for [`taskgroup_register`], until `GOMP_workshare_task_reduction_unregister`.
pub(crate) unsafe fn workshare_register(ctx: &Ctx, data: *mut usize, chunks: &[Arc<Chunks>]) {
    crate::task::open_group(ctx, true);
    let mut groups = ctx.groups.borrow_mut();
    let Some(g) = groups.last_mut() else {
        runtime::fatal("task reduction: the construct's taskgroup went missing");
    };
    // SAFETY: forwarded.
    let reg = unsafe { Registration::new(data, chunks, g.red.take()) };
    g.red = Some(Arc::new(reg));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reductions array of two items at offsets 0 and 16, chunks of 32 bytes.
    fn array(a: usize, b: usize) -> Vec<usize> {
        vec![2, 32, 16, usize::MAX, 0, 0, 0, a, 0, 0, b, 16, 0]
    }

    #[test]
    fn registers_and_remaps_by_address_and_by_copy() {
        let mut d = array(0x1000, 0x2000);
        let p = d.as_mut_ptr();
        // SAFETY: `d` is a well-formed array of one link.
        let chunks = unsafe { allocate(p, 3) };
        // SAFETY: as above.
        let reg = unsafe { Registration::new(p, &chunks, None) };
        let base = d[2];
        assert_eq!(base % 16, 0);
        assert_eq!(d[6], base + 96);
        assert_eq!(reg.remap(0x1000, 0), Some((base, 0x1000)));
        assert_eq!(reg.remap(0x2000, 2), Some((base + 64 + 16, 0x2000)));
        // Member 1's copy of the second item, remapped for member 2.
        assert_eq!(reg.remap(base + 32 + 16, 2), Some((base + 64 + 16, 0x2000)));
        assert_eq!(reg.remap(0x3000, 0), None);
        // SAFETY: the chunks are zeroed and 96 bytes long.
        let zero = unsafe { std::slice::from_raw_parts(base as *const u8, 96) };
        assert!(zero.iter().all(|&b| b == 0));
    }

    #[test]
    fn inner_registrations_shadow_outer_ones() {
        let mut outer = array(0x1000, 0x2000);
        let mut inner = vec![1, 8, 8, usize::MAX, 0, 0, 0, 0x1000, 0, 0];
        let (po, pi) = (outer.as_mut_ptr(), inner.as_mut_ptr());
        // SAFETY: well-formed arrays.
        let outer_reg = Arc::new(unsafe { Registration::new(po, &allocate(po, 2), None) });
        // SAFETY: as above.
        let inner_reg = unsafe { Registration::new(pi, &allocate(pi, 2), Some(outer_reg)) };
        assert_eq!(inner_reg.remap(0x1000, 1), Some((inner[2] + 8, 0x1000)));
        assert_eq!(
            inner_reg.remap(0x2000, 1),
            Some((outer[2] + 32 + 16, 0x2000))
        );
    }

    #[test]
    fn the_handle_round_trips_once() {
        let mut d = array(0x1000, 0x2000);
        let p = d.as_mut_ptr();
        // SAFETY: well-formed array; word 5 starts at 0.
        unsafe {
            let reg = Arc::new(Registration::new(p, &allocate(p, 1), None));
            store_handle(p, reg.clone());
            assert_eq!(Arc::strong_count(&reg), 2);
            assert!(take_handle(p).is_some());
            assert!(take_handle(p).is_none());
            assert_eq!(Arc::strong_count(&reg), 1);
        }
    }
}
