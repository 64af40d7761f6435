//! A B+-tree synchronized with optimistic lock coupling (OLC). The protocol, and
//! why it is sound, is in `OLC.md` beside this file; the comments here point to it.
//!
//! Shape: leaves hold up to `F` sorted (key, value) words; inner nodes hold up to
//! `F - 1` separators and `F` children. Child `i` of an inner node covers the keys
//! `k` with `keys[i-1] <= k < keys[i]` (missing bounds are the parent's). Splits
//! are *copy-on-split*: a full node is replaced by two new nodes and marked
//! obsolete, so a live node's key range never shrinks. `remove` unlinks a leaf
//! that becomes empty when its parent has another child; otherwise nodes may stay
//! underfull (inner nodes are never merged or freed before the tree is dropped).

use std::marker::PhantomData;
use std::ops::RangeInclusive;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

use crossbeam_epoch::{self as epoch, Guard};

use super::stripes::Stripes;
use super::version::{Restart, Version, VersionLock};
use super::{DEFAULT_FANOUT, IndexKey, IndexValue, OrderedIndex, word_range};

/// After this many restarts caused by conflicts an operation gives up being
/// optimistic and takes the pessimistic path (exclusive lock coupling on the same
/// version words), which cannot restart. The value is *guessed*, not measured: a
/// restart needs a concurrent write to a node on the operation's path, so a few in
/// a row are normal under contention, while 16 in a row means a hot node where
/// waiting for the lock beats re-traversing. Splits do not count as restarts.
pub const DEFAULT_RESTART_LIMIT: u32 = 16;

/// Common prefix of both node kinds (`#[repr(C)]`, so a pointer to a node is a
/// pointer to its header).
#[repr(C)]
struct Header {
    lock: VersionLock,
    /// Written once before the node is published, never after.
    is_leaf: bool,
    /// Leaf: entries. Inner: separators (the node has `count + 1` children).
    count: AtomicU32,
}

type NodePtr = *mut Header;

impl Header {
    fn new(is_leaf: bool) -> Header {
        Header {
            lock: VersionLock::new(),
            is_leaf,
            count: AtomicU32::new(0),
        }
    }
    /// The count, clamped to `cap` so that even a racy read indexes in bounds.
    #[inline]
    fn count(&self, cap: usize) -> usize {
        (self.count.load(Ordering::Relaxed) as usize).min(cap)
    }
    #[inline]
    fn set_count(&self, n: usize) {
        self.count.store(n as u32, Ordering::Relaxed);
    }
}

// All node fields are atomics so that an optimistic reader racing a writer reads
// some previously stored value instead of causing undefined behaviour. Loads and
// stores of node fields are Relaxed: they are ordered by the version word's
// Acquire/Release accesses and fences (`version.rs`).

#[repr(C)]
struct Leaf<const F: usize> {
    h: Header,
    keys: [AtomicU64; F],
    vals: [AtomicU64; F],
}

#[repr(C)]
struct Inner<const F: usize> {
    h: Header,
    /// `keys[..count]`; at most `F - 1` are used.
    keys: [AtomicU64; F],
    /// `children[..=count]`.
    children: [AtomicPtr<Header>; F],
}

/// The number of leading keys in `keys[..count]` satisfying `before` (keys are
/// sorted, so `before` holds for a prefix). Branch-free (the loop count depends on
/// `count` only, the comparison result selects with a conditional move), like
/// `slice::partition_point`, which the baseline tree uses. Every step shrinks
/// `size`, so it terminates whatever a concurrent writer does to the keys (paper
/// §3.3); every index is below `count ≤ keys.len()`.
#[inline]
fn search(keys: &[AtomicU64], count: usize, before: impl Fn(u64) -> bool) -> usize {
    if count == 0 {
        return 0;
    }
    let mut base = 0;
    let mut size = count;
    while size > 1 {
        let half = size / 2;
        let mid = base + half;
        base =
            std::hint::select_unpredictable(before(keys[mid].load(Ordering::Relaxed)), mid, base);
        size -= half;
    }
    base + before(keys[base].load(Ordering::Relaxed)) as usize
}

impl<const F: usize> Leaf<F> {
    fn alloc() -> *mut Leaf<F> {
        Box::into_raw(Box::new(Leaf {
            h: Header::new(true),
            keys: [const { AtomicU64::new(0) }; F],
            vals: [const { AtomicU64::new(0) }; F],
        }))
    }
    #[inline]
    fn count(&self) -> usize {
        self.h.count(F)
    }
    #[inline]
    fn key(&self, i: usize) -> u64 {
        self.keys[i].load(Ordering::Relaxed)
    }
    #[inline]
    fn val(&self, i: usize) -> u64 {
        self.vals[i].load(Ordering::Relaxed)
    }
    #[inline]
    fn set(&self, i: usize, k: u64, v: u64) {
        self.keys[i].store(k, Ordering::Relaxed);
        self.vals[i].store(v, Ordering::Relaxed);
    }
    /// First position in `..count` whose key is ≥ `k`.
    #[inline]
    fn lower_bound(&self, count: usize, k: u64) -> usize {
        search(&self.keys, count, |x| x < k)
    }
    /// The value under `k`, reading `count` entries.
    #[inline]
    fn find(&self, k: u64) -> Option<u64> {
        let count = self.count();
        let pos = self.lower_bound(count, k);
        (pos < count && self.key(pos) == k).then(|| self.val(pos))
    }
    /// Caller holds the lock and `count < F`.
    fn insert_at(&self, count: usize, pos: usize, k: u64, v: u64) {
        for j in (pos..count).rev() {
            self.set(j + 1, self.key(j), self.val(j));
        }
        self.set(pos, k, v);
        self.h.set_count(count + 1);
    }
    /// Caller holds the lock and `pos < count`.
    fn remove_at(&self, count: usize, pos: usize) {
        for j in pos + 1..count {
            self.set(j - 1, self.key(j), self.val(j));
        }
        self.h.set_count(count - 1);
    }
    /// Appends the entries with `from <= key <= hi` and `key < upper` to `out`.
    fn collect(&self, from: u64, hi: u64, upper: Option<u64>, out: &mut Vec<(u64, u64)>) {
        let count = self.count();
        for i in self.lower_bound(count, from)..count {
            let k = self.key(i);
            if k > hi || upper.is_some_and(|u| k >= u) {
                break;
            }
            out.push((k, self.val(i)));
        }
    }
}

impl<const F: usize> Inner<F> {
    fn alloc() -> *mut Inner<F> {
        Box::into_raw(Box::new(Inner {
            h: Header::new(false),
            keys: [const { AtomicU64::new(0) }; F],
            children: [const { AtomicPtr::new(std::ptr::null_mut()) }; F],
        }))
    }
    #[inline]
    fn count(&self) -> usize {
        self.h.count(F - 1)
    }
    #[inline]
    fn key(&self, i: usize) -> u64 {
        self.keys[i].load(Ordering::Relaxed)
    }
    #[inline]
    fn child(&self, i: usize) -> NodePtr {
        self.children[i].load(Ordering::Relaxed)
    }
    #[inline]
    fn set_key(&self, i: usize, k: u64) {
        self.keys[i].store(k, Ordering::Relaxed);
    }
    #[inline]
    fn set_child(&self, i: usize, c: NodePtr) {
        self.children[i].store(c, Ordering::Relaxed);
    }
    /// The child covering `k`: the number of separators ≤ `k`.
    #[inline]
    fn child_index(&self, count: usize, k: u64) -> usize {
        search(&self.keys, count, |x| x <= k)
    }
    /// Position of child `c` (caller holds the lock; `c` is a child).
    fn position_of(&self, c: NodePtr) -> usize {
        (0..=self.count())
            .find(|&i| self.child(i) == c)
            .expect("a locked node's child is in its parent")
    }
    /// Replaces child `old` by `left` and `right` separated by `sep`. Caller holds
    /// the lock and the node is not full.
    fn replace_child(&self, old: NodePtr, left: NodePtr, sep: u64, right: NodePtr) {
        let n = self.count();
        debug_assert!(n < F - 1, "split into a full parent");
        let i = self.position_of(old);
        for j in (i..n).rev() {
            self.set_key(j + 1, self.key(j));
        }
        for j in (i + 1..=n).rev() {
            self.set_child(j + 1, self.child(j));
        }
        self.set_key(i, sep);
        self.set_child(i, left);
        self.set_child(i + 1, right);
        self.h.set_count(n + 1);
    }
    /// Removes child `c` and one separator next to it; the neighbour absorbs its
    /// key range. Caller holds the lock and the node has at least two children.
    fn remove_child(&self, c: NodePtr) {
        let n = self.count();
        debug_assert!(n >= 1);
        let i = self.position_of(c);
        // Child i-1 (or child 1 when i == 0) takes over child i's range.
        let key_gone = i.saturating_sub(1);
        for j in key_gone + 1..n {
            self.set_key(j - 1, self.key(j));
        }
        for j in i + 1..=n {
            self.set_child(j - 1, self.child(j));
        }
        self.h.set_count(n - 1);
    }
}

/// # Safety
/// `p` must not be freed while the guard `_g` (which bounds the returned
/// reference) is alive: the caller is pinned by it and `p` is
/// the root pointer, a child pointer read from a node that was validated (or held
/// locked) after the read, or a pointer already dereferenced under the same guard
/// (OLC.md, "Reclamation").
#[inline]
unsafe fn header(p: NodePtr, _g: &Guard) -> &Header {
    // SAFETY: the caller guarantees `p` is live while `_g` is; every node starts with its
    // header (`#[repr(C)]`).
    unsafe { &*p }
}

/// # Safety
/// As [`header`], and `p` is a leaf of fan-out `F`.
#[inline]
unsafe fn as_leaf<const F: usize>(p: NodePtr, _g: &Guard) -> &Leaf<F> {
    // SAFETY: the caller guarantees `p` is live while `_g` is and was allocated as a
    // `Leaf<F>` (`is_leaf` is immutable, the fan-out is the tree's).
    unsafe { &*p.cast::<Leaf<F>>() }
}

/// # Safety
/// As [`header`], and `p` is an inner node of fan-out `F`.
#[inline]
unsafe fn as_inner<const F: usize>(p: NodePtr, _g: &Guard) -> &Inner<F> {
    // SAFETY: as in `as_leaf`, for `Inner<F>`.
    unsafe { &*p.cast::<Inner<F>>() }
}

/// # Safety
/// `p` was allocated by `Leaf::<F>::alloc` or `Inner::<F>::alloc` and nobody can
/// access it any more.
unsafe fn free_node<const F: usize>(p: NodePtr) {
    // SAFETY: `is_leaf` tells which of the two `Box` types allocated `p`; the
    // caller guarantees exclusive, final access.
    unsafe {
        if (*p).is_leaf {
            drop(Box::from_raw(p.cast::<Leaf<F>>()));
        } else {
            drop(Box::from_raw(p.cast::<Inner<F>>()));
        }
    }
}

/// Frees `p` once every thread pinned now has unpinned.
///
/// # Safety
/// `p` is unreachable from the tree (unlinked before this call, and marked
/// obsolete so nobody will lock it again) and retired only once.
unsafe fn retire<const F: usize>(p: NodePtr, g: &Guard) {
    // SAFETY: threads that could still hold `p` read it while pinned before the
    // unlink, so they are pinned now; crossbeam-epoch runs the closure only after
    // all of them unpinned. Threads pinning later cannot reach `p`.
    unsafe { g.defer_unchecked(move || free_node::<F>(p)) }
}

/// Where an optimistic descent ended.
struct Descent {
    leaf: NodePtr,
    v: Version,
    /// The leaf's parent and the version its read started at. Not yet validated
    /// after the leaf's version was read: the caller does that last.
    parent: Option<(NodePtr, Version)>,
    /// The leaf's exclusive upper key bound (None: +∞), from the path.
    upper: Option<u64>,
}

/// A node held locked by this thread, with the version it was locked at.
type Locked = (NodePtr, Version);

/// Statistics of the restart loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OlcStats {
    /// Optimistic attempts abandoned because of a conflict.
    pub restarts: u64,
    /// Operations that ran the pessimistic path.
    pub pessimistic: u64,
}

/// Shape of a quiescent tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TreeShape {
    /// Levels including the leaves (1: the root is a leaf).
    pub height: usize,
    pub inner_nodes: usize,
    pub leaves: usize,
    pub entries: usize,
}

/// A B+-tree with optimistic lock coupling. `F` is the fan-out (entries per leaf,
/// children per inner node; ≥ 4); tests use small ones to split at every level.
pub struct OlcBTree<K, V, const F: usize = DEFAULT_FANOUT> {
    root: AtomicPtr<Header>,
    restart_limit: u32,
    stripes: Stripes,
    _kv: PhantomData<fn() -> (K, V)>,
}

impl<K: IndexKey, V: IndexValue, const F: usize> Default for OlcBTree<K, V, F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: IndexKey, V: IndexValue, const F: usize> OlcBTree<K, V, F> {
    pub fn new() -> Self {
        Self::with_restart_limit(DEFAULT_RESTART_LIMIT)
    }

    /// A tree whose operations go pessimistic after `limit` conflict restarts;
    /// 0 makes every operation pessimistic (tests use that to cover the path).
    pub fn with_restart_limit(limit: u32) -> Self {
        const {
            assert!(
                F >= 4 && F < u32::MAX as usize,
                "fan-out must be at least 4"
            )
        };
        OlcBTree {
            root: AtomicPtr::new(Leaf::<F>::alloc().cast()),
            restart_limit: limit,
            stripes: Stripes::new(),
            _kv: PhantomData,
        }
    }

    pub fn restart_limit(&self) -> u32 {
        self.restart_limit
    }

    pub fn stats(&self) -> OlcStats {
        OlcStats {
            restarts: self.stripes.restarts(),
            pessimistic: self.stripes.fallbacks(),
        }
    }

    pub fn lookup(&self, key: K) -> Option<V> {
        let k = key.to_word();
        self.run(
            &mut (),
            |_, g| self.lookup_opt(k, g),
            |_, g| self.lookup_pess(k, g),
        )
        .map(V::from_word)
    }

    /// Inserts or overwrites; returns the previous value.
    pub fn insert(&self, key: K, value: V) -> Option<V> {
        let (k, v) = (key.to_word(), value.to_word());
        self.run(
            &mut (),
            |_, g| self.insert_opt(k, v, g),
            |_, g| self.insert_pess(k, v, g),
        )
        .map(V::from_word)
    }

    /// Removes `key`. A leaf that becomes empty is unlinked if its parent has
    /// another child; nodes are never merged, so a shrinking tree may keep
    /// underfull leaves and inner nodes (down to one child) until it is dropped.
    pub fn remove(&self, key: K) -> Option<V> {
        let k = key.to_word();
        self.run(
            &mut (),
            |_, g| self.remove_opt(k, g),
            |_, g| self.remove_pess(k, g),
        )
        .map(V::from_word)
    }

    /// Calls `f` on the entries in `range` in ascending order until it returns
    /// false. Reads one leaf at a time (optimistically, validated) into a buffer and
    /// calls `f` after the read, with nothing locked or pinned; the next leaf is
    /// found by a new descent from the leaf's upper bound (paper §3.4: "large range
    /// scans should be broken up into several per-node traversals").
    pub fn range(&self, range: RangeInclusive<K>, mut f: impl FnMut(K, V) -> bool) {
        let Some((lo, hi)) = word_range(&range) else {
            return;
        };
        let mut buf = Vec::with_capacity(F);
        let mut from = lo;
        loop {
            let upper = self.run(
                &mut buf,
                |buf, g| self.leaf_snapshot_opt(from, hi, buf, g),
                |buf, g| self.leaf_snapshot_pess(from, hi, buf, g),
            );
            for &(k, v) in &buf {
                if !f(K::from_word(k), V::from_word(v)) {
                    return;
                }
            }
            match upper {
                // `u > from` always holds for a validated path; checking it keeps
                // the loop finite regardless.
                Some(u) if u <= hi && u > from => from = u,
                _ => return,
            }
        }
    }

    /// Entry count: exact when quiescent, approximate under concurrent updates.
    pub fn len(&self) -> usize {
        self.stripes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The restart loop: optimistic attempts until `restart_limit` conflicts, then
    /// the pessimistic path. One epoch pin covers the whole operation.
    #[inline]
    fn run<S, T>(
        &self,
        state: &mut S,
        mut optimistic: impl FnMut(&mut S, &Guard) -> Result<T, Restart>,
        pessimistic: impl FnOnce(&mut S, &Guard) -> T,
    ) -> T {
        let guard = epoch::pin();
        let mut restarts = 0;
        loop {
            if restarts >= self.restart_limit {
                self.stripes.add_fallback();
                return pessimistic(state, &guard);
            }
            match optimistic(state, &guard) {
                Ok(r) => return r,
                Err(Restart::Conflict) => {
                    restarts += 1;
                    self.stripes.add_restart();
                }
                Err(Restart::Structural) => {}
            }
        }
    }

    #[inline]
    fn is_full(&self, p: NodePtr, g: &Guard) -> bool {
        // SAFETY: callers pass nodes they hold locked (live while pinned).
        let h = unsafe { header(p, g) };
        if h.is_leaf {
            h.count(F) >= F
        } else {
            h.count(F - 1) >= F - 1
        }
    }

    // ---- optimistic paths ---------------------------------------------------------

    /// Optimistic lock coupling from the root to the leaf for `k` (the paper's
    /// Figure 2). With `split_full`, a full inner node on the way is split and the
    /// descent ends with `Restart::Structural` (eager splitting, so a parent always
    /// has room for a separator).
    #[inline]
    fn descend_opt(&self, k: u64, split_full: bool, g: &Guard) -> Result<Descent, Restart> {
        // Acquire: pairs with the Release store of a new root, so its contents are
        // visible.
        let mut node = self.root.load(Ordering::Acquire);
        // SAFETY: the root pointer, loaded while pinned.
        let mut v = unsafe { header(node, g) }.lock.read_lock_or_restart()?;
        // Acquire: as above.
        if node != self.root.load(Ordering::Acquire) {
            return Err(Restart::Conflict);
        }
        let mut parent: Option<(NodePtr, Version)> = None;
        let mut upper = None;
        loop {
            // SAFETY: `node` is the root or a child read from a node validated
            // after the read (below), under the guard.
            let h = unsafe { header(node, g) };
            if h.is_leaf {
                return Ok(Descent {
                    leaf: node,
                    v,
                    parent,
                    upper,
                });
            }
            // SAFETY: as above; `is_leaf` is false.
            let inner = unsafe { as_inner::<F>(node, g) };
            let count = inner.count();
            if split_full && count >= F - 1 {
                self.split_opt(node, v, parent, g)?;
                return Err(Restart::Structural);
            }
            if let Some((p, pv)) = parent {
                // SAFETY: dereferenced before under the same guard.
                unsafe { header(p, g) }.lock.check_or_restart(pv)?;
            }
            let idx = inner.child_index(count, k);
            let child = inner.child(idx);
            if idx < count {
                upper = Some(inner.key(idx));
            }
            // Validate `node` before dereferencing `child` (paper's line 25).
            h.lock.check_or_restart(v)?;
            debug_assert!(!child.is_null());
            parent = Some((node, v));
            node = child;
            // SAFETY: `child` was read from `node`, validated just above.
            v = unsafe { header(node, g) }.lock.read_lock_or_restart()?;
        }
    }

    /// Validates the parent and the leaf at the end of a read (paper's lines 35–37).
    #[inline]
    fn finish_read(&self, d: &Descent, g: &Guard) -> Result<(), Restart> {
        if let Some((p, pv)) = d.parent {
            // SAFETY: dereferenced during the descent under the same guard.
            unsafe { header(p, g) }.lock.check_or_restart(pv)?;
        }
        // SAFETY: as above.
        unsafe { header(d.leaf, g) }.lock.check_or_restart(d.v)
    }

    fn lookup_opt(&self, k: u64, g: &Guard) -> Result<Option<u64>, Restart> {
        let d = self.descend_opt(k, false, g)?;
        // SAFETY: a leaf returned by the descent (reached through validated
        // pointers under `g`).
        let found = unsafe { as_leaf::<F>(d.leaf, g) }.find(k);
        self.finish_read(&d, g)?;
        Ok(found)
    }

    fn leaf_snapshot_opt(
        &self,
        from: u64,
        hi: u64,
        buf: &mut Vec<(u64, u64)>,
        g: &Guard,
    ) -> Result<Option<u64>, Restart> {
        buf.clear();
        let d = self.descend_opt(from, false, g)?;
        // SAFETY: as in `lookup_opt`.
        unsafe { as_leaf::<F>(d.leaf, g) }.collect(from, hi, d.upper, buf);
        self.finish_read(&d, g)?;
        Ok(d.upper)
    }

    /// Upgrades the leaf, then validates the parent (as the paper's insert does);
    /// on failure releases the leaf unchanged.
    fn upgrade_leaf(&self, d: &Descent, g: &Guard) -> Result<(), Restart> {
        // SAFETY: dereferenced during the descent under the same guard.
        let lh = unsafe { header(d.leaf, g) };
        lh.lock.upgrade_or_restart(d.v)?;
        if let Some((p, pv)) = d.parent {
            // SAFETY: as above.
            if let Err(e) = unsafe { header(p, g) }.lock.check_or_restart(pv) {
                lh.lock.unlock_unchanged(d.v);
                return Err(e);
            }
        }
        Ok(())
    }

    fn insert_opt(&self, k: u64, val: u64, g: &Guard) -> Result<Option<u64>, Restart> {
        let d = self.descend_opt(k, true, g)?;
        // SAFETY: as in `lookup_opt`.
        let leaf = unsafe { as_leaf::<F>(d.leaf, g) };
        let count = leaf.count();
        let pos = leaf.lower_bound(count, k);
        let exists = pos < count && leaf.key(pos) == k;
        if !exists && count >= F {
            self.split_opt(d.leaf, d.v, d.parent, g)?;
            return Err(Restart::Structural);
        }
        // A successful upgrade at `d.v` validates `count`, `pos` and `exists`.
        self.upgrade_leaf(&d, g)?;
        let old = if exists {
            let old = leaf.val(pos);
            leaf.vals[pos].store(val, Ordering::Relaxed);
            Some(old)
        } else {
            leaf.insert_at(count, pos, k, val);
            self.stripes.add_len(1);
            None
        };
        leaf.h.lock.unlock_modified(d.v);
        Ok(old)
    }

    fn remove_opt(&self, k: u64, g: &Guard) -> Result<Option<u64>, Restart> {
        let d = self.descend_opt(k, false, g)?;
        // SAFETY: as in `lookup_opt`.
        let leaf = unsafe { as_leaf::<F>(d.leaf, g) };
        let count = leaf.count();
        let pos = leaf.lower_bound(count, k);
        if pos >= count || leaf.key(pos) != k {
            self.finish_read(&d, g)?;
            return Ok(None);
        }
        let parent_locked = match d.parent {
            // The leaf would become empty: lock the parent too (top-down, as every
            // writer does) so `remove_locked` can unlink it.
            Some((p, pv)) if count == 1 => {
                // SAFETY: dereferenced during the descent under the same guard.
                let ph = unsafe { header(p, g) };
                ph.lock.upgrade_or_restart(pv)?;
                if let Err(e) = leaf.h.lock.upgrade_or_restart(d.v) {
                    ph.lock.unlock_unchanged(pv);
                    return Err(e);
                }
                Some((p, pv))
            }
            _ => {
                self.upgrade_leaf(&d, g)?;
                None
            }
        };
        Ok(self.remove_locked(d.leaf, d.v, parent_locked, k, g))
    }

    /// Splits `node` (read at `v`, parent read at the paired version) after
    /// upgrading both, parent first.
    fn split_opt(
        &self,
        node: NodePtr,
        v: Version,
        parent: Option<(NodePtr, Version)>,
        g: &Guard,
    ) -> Result<(), Restart> {
        // SAFETY: both were dereferenced during the descent under the same guard.
        let h = unsafe { header(node, g) };
        match parent {
            Some((p, pv)) => {
                // SAFETY: as above.
                let ph = unsafe { header(p, g) };
                ph.lock.upgrade_or_restart(pv)?;
                if let Err(e) = h.lock.upgrade_or_restart(v) {
                    ph.lock.unlock_unchanged(pv);
                    return Err(e);
                }
            }
            None => {
                h.lock.upgrade_or_restart(v)?;
                // The root pointer only changes under the root's lock, which we
                // hold. Acquire: pairs with the Release store of a new root.
                if self.root.load(Ordering::Acquire) != node {
                    h.lock.unlock_unchanged(v);
                    return Err(Restart::Conflict);
                }
            }
        }
        self.split_locked(node, v, parent, g);
        Ok(())
    }

    // ---- structure modifications (caller holds the locks) ---------------------------

    /// Replaces the full, locked `node` by two new nodes in its locked parent (or
    /// under a new root), unlocks both, marks `node` obsolete and retires it.
    fn split_locked(&self, node: NodePtr, v: Version, parent: Option<Locked>, g: &Guard) {
        // SAFETY: we hold `node` locked; it is live under the guard.
        let h = unsafe { header(node, g) };
        let (left, sep, right) = if h.is_leaf {
            // SAFETY: as above, and a leaf.
            let leaf = unsafe { as_leaf::<F>(node, g) };
            let n = leaf.count();
            let m = n / 2;
            let (l, r) = (Leaf::<F>::alloc(), Leaf::<F>::alloc());
            // SAFETY: freshly allocated, not yet shared.
            let (lr, rr) = unsafe { (&*l, &*r) };
            for i in 0..m {
                lr.set(i, leaf.key(i), leaf.val(i));
            }
            for i in m..n {
                rr.set(i - m, leaf.key(i), leaf.val(i));
            }
            lr.h.set_count(m);
            rr.h.set_count(n - m);
            (l.cast::<Header>(), leaf.key(m), r.cast::<Header>())
        } else {
            // SAFETY: as above, and an inner node.
            let inner = unsafe { as_inner::<F>(node, g) };
            let n = inner.count();
            let m = n / 2;
            let (l, r) = (Inner::<F>::alloc(), Inner::<F>::alloc());
            // SAFETY: freshly allocated, not yet shared.
            let (lr, rr) = unsafe { (&*l, &*r) };
            for i in 0..m {
                lr.set_key(i, inner.key(i));
            }
            for i in 0..=m {
                lr.set_child(i, inner.child(i));
            }
            for i in m + 1..n {
                rr.set_key(i - m - 1, inner.key(i));
            }
            for i in m + 1..=n {
                rr.set_child(i - m - 1, inner.child(i));
            }
            lr.h.set_count(m);
            rr.h.set_count(n - m - 1);
            (l.cast::<Header>(), inner.key(m), r.cast::<Header>())
        };
        match parent {
            Some((p, pv)) => {
                // SAFETY: we hold the parent locked; an inner node.
                let pi = unsafe { as_inner::<F>(p, g) };
                pi.replace_child(node, left, sep, right);
                pi.h.lock.unlock_modified(pv);
            }
            None => {
                let root = Inner::<F>::alloc();
                // SAFETY: freshly allocated, not yet shared.
                let rr = unsafe { &*root };
                rr.set_key(0, sep);
                rr.set_child(0, left);
                rr.set_child(1, right);
                rr.h.set_count(1);
                // Release: publishes the new root's (and children's) contents to
                // the Acquire loads of the root pointer.
                self.root.store(root.cast(), Ordering::Release);
            }
        }
        h.lock.unlock_obsolete(v);
        // SAFETY: `node` is no longer referenced by its parent (or the root
        // pointer) and is obsolete; this is its only retirement.
        unsafe { retire::<F>(node, g) };
    }

    /// Removes `k` from the locked `leaf`; unlinks the leaf if it empties and the
    /// locked `parent` (if given) has another child. Unlocks everything.
    fn remove_locked(
        &self,
        leaf_ptr: NodePtr,
        v: Version,
        parent: Option<Locked>,
        k: u64,
        g: &Guard,
    ) -> Option<u64> {
        // SAFETY: we hold the leaf locked; live under the guard.
        let leaf = unsafe { as_leaf::<F>(leaf_ptr, g) };
        let count = leaf.count();
        let pos = leaf.lower_bound(count, k);
        let unlock_parent = |modified: bool| {
            if let Some((p, pv)) = parent {
                // SAFETY: we hold the parent locked.
                let ph = unsafe { header(p, g) };
                if modified {
                    ph.lock.unlock_modified(pv);
                } else {
                    ph.lock.unlock_unchanged(pv);
                }
            }
        };
        if pos >= count || leaf.key(pos) != k {
            leaf.h.lock.unlock_unchanged(v);
            unlock_parent(false);
            return None;
        }
        let old = leaf.val(pos);
        self.stripes.add_len(-1);
        if let Some((p, _)) = parent
            && count == 1
            // SAFETY: we hold the parent locked.
            && unsafe { as_inner::<F>(p, g) }.count() >= 1
        {
            // SAFETY: as above.
            unsafe { as_inner::<F>(p, g) }.remove_child(leaf_ptr);
            leaf.h.lock.unlock_obsolete(v);
            unlock_parent(true);
            // SAFETY: unlinked from its parent just now and obsolete; retired once.
            unsafe { retire::<F>(leaf_ptr, g) };
        } else {
            leaf.remove_at(count, pos);
            leaf.h.lock.unlock_modified(v);
            unlock_parent(false);
        }
        Some(old)
    }

    // ---- pessimistic paths: exclusive lock coupling on the same words ---------------

    /// Locks the current root exclusively.
    fn lock_root(&self, g: &Guard) -> Locked {
        loop {
            // Acquire: pairs with the Release store of a new root.
            let r = self.root.load(Ordering::Acquire);
            // SAFETY: the root pointer, loaded while pinned.
            let h = unsafe { header(r, g) };
            // Err: the root was replaced while we waited; reload it.
            if let Ok(v) = h.lock.lock_exclusive() {
                // Acquire: as above. Only the root's lock holder changes the root.
                if self.root.load(Ordering::Acquire) == r {
                    return (r, v);
                }
                h.lock.unlock_unchanged(v);
            }
        }
    }

    /// Locks `child`, read from a node we hold locked: it cannot be obsolete,
    /// since replacing or unlinking it needs the parent's lock.
    fn lock_child(&self, child: NodePtr, g: &Guard) -> Version {
        // SAFETY: read from a node we hold locked, under the guard.
        unsafe { header(child, g) }
            .lock
            .lock_exclusive()
            .expect("a locked node's child is never obsolete")
    }

    /// Exclusive lock coupling down to the leaf for `k`. Returns the locked leaf,
    /// its parent still locked if `keep_parent` (otherwise unlocked), and the
    /// leaf's upper bound.
    fn descend_pess(
        &self,
        k: u64,
        keep_parent: bool,
        g: &Guard,
    ) -> (Locked, Option<Locked>, Option<u64>) {
        let (mut node, mut v) = self.lock_root(g);
        let mut parent: Option<Locked> = None;
        let mut upper = None;
        loop {
            // SAFETY: held locked.
            let h = unsafe { header(node, g) };
            if h.is_leaf {
                return ((node, v), parent, upper);
            }
            // SAFETY: held locked, an inner node.
            let inner = unsafe { as_inner::<F>(node, g) };
            let count = inner.count();
            let idx = inner.child_index(count, k);
            if idx < count {
                upper = Some(inner.key(idx));
            }
            let child = inner.child(idx);
            let cv = self.lock_child(child, g);
            if let Some((p, pv)) = parent.take() {
                // SAFETY: held locked.
                unsafe { header(p, g) }.lock.unlock_unchanged(pv);
            }
            if keep_parent {
                parent = Some((node, v));
            } else {
                h.lock.unlock_unchanged(v);
            }
            (node, v) = (child, cv);
        }
    }

    fn lookup_pess(&self, k: u64, g: &Guard) -> Option<u64> {
        let ((leaf, v), _, _) = self.descend_pess(k, false, g);
        // SAFETY: held locked, a leaf.
        let l = unsafe { as_leaf::<F>(leaf, g) };
        let r = l.find(k);
        l.h.lock.unlock_unchanged(v);
        r
    }

    fn leaf_snapshot_pess(
        &self,
        from: u64,
        hi: u64,
        buf: &mut Vec<(u64, u64)>,
        g: &Guard,
    ) -> Option<u64> {
        buf.clear();
        let ((leaf, v), _, upper) = self.descend_pess(from, false, g);
        // SAFETY: held locked, a leaf.
        let l = unsafe { as_leaf::<F>(leaf, g) };
        l.collect(from, hi, upper, buf);
        l.h.lock.unlock_unchanged(v);
        upper
    }

    fn remove_pess(&self, k: u64, g: &Guard) -> Option<u64> {
        let ((leaf, v), parent, _) = self.descend_pess(k, true, g);
        self.remove_locked(leaf, v, parent, k, g)
    }

    /// Exclusive lock coupling with eager splits: a full child is split while its
    /// parent is held (the parent is never full: it was split when it was the
    /// child), then the descent starts over.
    fn insert_pess(&self, k: u64, val: u64, g: &Guard) -> Option<u64> {
        'restart: loop {
            let (mut node, mut v) = self.lock_root(g);
            if self.is_full(node, g) {
                self.split_locked(node, v, None, g);
                continue 'restart;
            }
            loop {
                // SAFETY: held locked (and not full).
                let h = unsafe { header(node, g) };
                if h.is_leaf {
                    // SAFETY: as above, a leaf.
                    let leaf = unsafe { as_leaf::<F>(node, g) };
                    let count = leaf.count();
                    let pos = leaf.lower_bound(count, k);
                    let old = if pos < count && leaf.key(pos) == k {
                        let old = leaf.val(pos);
                        leaf.vals[pos].store(val, Ordering::Relaxed);
                        Some(old)
                    } else {
                        leaf.insert_at(count, pos, k, val);
                        self.stripes.add_len(1);
                        None
                    };
                    h.lock.unlock_modified(v);
                    return old;
                }
                // SAFETY: held locked, an inner node.
                let inner = unsafe { as_inner::<F>(node, g) };
                let child = inner.child(inner.child_index(inner.count(), k));
                let cv = self.lock_child(child, g);
                if self.is_full(child, g) {
                    self.split_locked(child, cv, Some((node, v)), g);
                    continue 'restart;
                }
                h.lock.unlock_unchanged(v);
                (node, v) = (child, cv);
            }
        }
    }

    // ---- quiescent inspection --------------------------------------------------------

    /// Height and node counts. `&mut self`: no operation can run meanwhile.
    pub fn shape(&mut self) -> TreeShape {
        self.check_invariants().expect("tree invariants")
    }

    /// Checks the B+-tree invariants (sorted keys within each node's bounds,
    /// leaves at one depth, counts in range, no lock or obsolete bit set, the
    /// entry counter equal to the number of entries) and returns the shape.
    pub fn check_invariants(&mut self) -> Result<TreeShape, String> {
        // SAFETY: `&mut self` excludes concurrent operations, so every reachable
        // node is live and unchanging; the unprotected guard is only used to name
        // a lifetime for `header`/`as_leaf`/`as_inner`.
        let g = unsafe { epoch::unprotected() };
        let mut shape = TreeShape::default();
        let mut leaf_depth = None;
        let mut stack = vec![(*self.root.get_mut(), None::<u64>, None::<u64>, 1usize)];
        while let Some((p, lo, hi, depth)) = stack.pop() {
            if p.is_null() {
                return Err("null child".into());
            }
            // SAFETY: reachable node of a quiescent tree.
            let h = unsafe { header(p, g) };
            let ver = h.lock.load();
            if ver.is_locked() || ver.is_obsolete() {
                return Err(format!("reachable node with version {ver:?}"));
            }
            let in_bounds = |k: u64| lo.is_none_or(|lo| k >= lo) && hi.is_none_or(|hi| k < hi);
            let sorted = |ks: &[u64]| ks.windows(2).all(|w| w[0] < w[1]);
            if h.is_leaf {
                // SAFETY: as above, a leaf.
                let leaf = unsafe { as_leaf::<F>(p, g) };
                let n = h.count.load(Ordering::Relaxed) as usize;
                if n > F {
                    return Err(format!("leaf count {n} > {F}"));
                }
                let keys: Vec<u64> = (0..n).map(|i| leaf.key(i)).collect();
                if !sorted(&keys) || !keys.iter().all(|&k| in_bounds(k)) {
                    return Err(format!(
                        "leaf keys {keys:?} unsorted or outside {lo:?}..{hi:?}"
                    ));
                }
                if *leaf_depth.get_or_insert(depth) != depth {
                    return Err(format!("leaves at depths {leaf_depth:?} and {depth}"));
                }
                shape.leaves += 1;
                shape.entries += n;
            } else {
                // SAFETY: as above, an inner node.
                let inner = unsafe { as_inner::<F>(p, g) };
                let n = h.count.load(Ordering::Relaxed) as usize;
                if n > F - 1 {
                    return Err(format!("inner count {n} > {}", F - 1));
                }
                let keys: Vec<u64> = (0..n).map(|i| inner.key(i)).collect();
                if !sorted(&keys) || !keys.iter().all(|&k| in_bounds(k)) {
                    return Err(format!(
                        "inner keys {keys:?} unsorted or outside {lo:?}..{hi:?}"
                    ));
                }
                for i in 0..=n {
                    let clo = if i == 0 { lo } else { Some(keys[i - 1]) };
                    let chi = if i == n { hi } else { Some(keys[i]) };
                    stack.push((inner.child(i), clo, chi, depth + 1));
                }
                shape.inner_nodes += 1;
            }
            shape.height = shape.height.max(depth);
        }
        if shape.entries != self.len() {
            return Err(format!(
                "len() {} but {} entries",
                self.len(),
                shape.entries
            ));
        }
        Ok(shape)
    }
}

impl<K, V, const F: usize> Drop for OlcBTree<K, V, F> {
    fn drop(&mut self) {
        let mut stack = vec![*self.root.get_mut()];
        while let Some(p) = stack.pop() {
            // SAFETY: `&mut self`: no operation runs, every reachable node is live
            // and reachable once (retired nodes are unreachable and owned by the
            // epoch collector). Children are collected before the node is freed.
            unsafe {
                if !(*p).is_leaf {
                    let inner = &*p.cast::<Inner<F>>();
                    for i in 0..=inner.count() {
                        stack.push(inner.child(i));
                    }
                }
                free_node::<F>(p);
            }
        }
    }
}

impl<K: IndexKey, V: IndexValue, const F: usize> OrderedIndex for OlcBTree<K, V, F> {
    type Key = K;
    type Value = V;
    fn lookup(&self, key: K) -> Option<V> {
        OlcBTree::lookup(self, key)
    }
    fn insert(&self, key: K, value: V) -> Option<V> {
        OlcBTree::insert(self, key, value)
    }
    fn remove(&self, key: K) -> Option<V> {
        OlcBTree::remove(self, key)
    }
    fn range(&self, range: RangeInclusive<K>, f: &mut dyn FnMut(K, V) -> bool) {
        OlcBTree::range(self, range, f)
    }
    fn len(&self) -> usize {
        OlcBTree::len(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_against_btreemap_small_fanout() {
        let mut t = OlcBTree::<u64, u64, 4>::new();
        let mut r = std::collections::BTreeMap::new();
        let mut rng = fastrand::Rng::with_seed(7);
        for i in 0..20_000u64 {
            let k = rng.u64(0..3000);
            match rng.u8(0..4) {
                0 => assert_eq!(t.remove(k), r.remove(&k), "remove {k} at {i}"),
                1 => assert_eq!(t.lookup(k), r.get(&k).copied()),
                _ => assert_eq!(t.insert(k, i), r.insert(k, i), "insert {k} at {i}"),
            }
        }
        let shape = t.check_invariants().unwrap();
        assert!(shape.height >= 4, "{shape:?}");
        assert_eq!(t.len(), r.len());
        let all = t.scan_from(0, usize::MAX);
        assert_eq!(all, r.into_iter().collect::<Vec<_>>());
        assert_eq!(t.stats(), OlcStats::default(), "no contention, no restarts");
    }

    #[test]
    fn pessimistic_only_tree_is_correct() {
        let mut t = OlcBTree::<u64, u64, 5>::with_restart_limit(0);
        for k in (0..5000u64).rev() {
            assert_eq!(t.insert(k * 3, k), None);
        }
        for k in 0..5000u64 {
            assert_eq!(t.lookup(k * 3), Some(k));
            assert_eq!(t.lookup(k * 3 + 1), None);
        }
        for k in (0..5000u64).step_by(2) {
            assert_eq!(t.remove(k * 3), Some(k));
        }
        let shape = t.check_invariants().unwrap();
        assert_eq!(shape.entries, 2500);
        assert!(t.stats().pessimistic > 0);
        assert_eq!(t.stats().restarts, 0);
    }

    #[test]
    fn emptied_leaves_are_unlinked() {
        let mut t = OlcBTree::<u64, u64, 4>::new();
        for k in 0..1000u64 {
            t.insert(k, k);
        }
        let before = t.shape();
        for k in 0..990u64 {
            assert_eq!(t.remove(k), Some(k));
        }
        let after = t.check_invariants().unwrap();
        // Every parent keeps one (possibly empty) child: with fan-out 4 and
        // sequential inserts most parents have two leaves, so about half remain.
        assert!(
            after.leaves * 10 < before.leaves * 6,
            "{before:?} → {after:?}"
        );
        assert_eq!(t.first_at_or_after(0), Some((990, 990)));
        for k in 990..1000u64 {
            t.remove(k);
        }
        assert!(t.is_empty());
        t.check_invariants().unwrap();
        assert_eq!(t.first_at_or_after(0), None);
        t.insert(5, 5);
        assert_eq!(t.scan_from(0, 10), vec![(5, 5)]);
    }

    #[test]
    fn node_sizes_match_the_paper() {
        assert_eq!(std::mem::size_of::<Leaf<DEFAULT_FANOUT>>(), 4096);
        assert_eq!(std::mem::size_of::<Inner<DEFAULT_FANOUT>>(), 4096);
    }

    #[test]
    fn scan_stops_and_respects_bounds() {
        let t = OlcBTree::<u64, u64, 4>::new();
        for k in 0..200u64 {
            t.insert(k * 2, k);
        }
        let mut got = vec![];
        t.range(11..=31, |k, _| {
            got.push(k);
            true
        });
        assert_eq!(got, (12..=30).step_by(2).collect::<Vec<_>>());
        let mut n = 0;
        t.range(0..=u64::MAX, |_, _| {
            n += 1;
            n < 7
        });
        assert_eq!(n, 7);
    }
}
