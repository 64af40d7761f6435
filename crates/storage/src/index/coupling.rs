//! The baseline of the paper's experiment: the same B+-tree shape with one
//! reader-writer lock per node and traditional lock coupling (hand-over-hand:
//! the child is locked before the parent is released).
//!
//! - Lookups and scans take shared locks all the way down.
//! - Updates take shared locks on inner nodes and an exclusive lock on the leaf
//!   (Bayer–Schkolnick's optimistic descent). If the leaf is full, they start over
//!   with exclusive locks from the root and split full nodes on the way down
//!   (eager splitting, so the parent always has room).
//! - Splits are in place (a new right sibling); the root node never moves (its
//!   contents move down a level when it splits). Nodes are never freed before the
//!   tree, so no reclamation scheme is needed. `remove` never merges or unlinks.

use std::marker::PhantomData;
use std::ops::RangeInclusive;

use parking_lot::RwLock;

use super::stripes::Stripes;
use super::{DEFAULT_FANOUT, IndexKey, IndexValue, OrderedIndex, word_range};

/// A pointer to a node owned by the tree (allocated by `Box`, freed by the tree's
/// `Drop`).
#[derive(Clone, Copy)]
struct NodeRef<const F: usize>(*const Node<F>);

// SAFETY: a `NodeRef` is only dereferenced as `&Node` while the tree lives, and
// `Node` is `Sync` apart from holding these pointers (its state is behind an
// `RwLock`); it is freed only by the tree's `Drop`, which has exclusive access.
unsafe impl<const F: usize> Send for NodeRef<F> {}
// SAFETY: as above.
unsafe impl<const F: usize> Sync for NodeRef<F> {}

impl<const F: usize> NodeRef<F> {
    const NULL: NodeRef<F> = NodeRef(std::ptr::null());
    fn alloc(body: Body<F>) -> NodeRef<F> {
        NodeRef(Box::into_raw(Box::new(Node {
            body: RwLock::new(body),
        })))
    }
}

struct Node<const F: usize> {
    body: RwLock<Body<F>>,
}

enum Body<const F: usize> {
    Leaf(LeafBody<F>),
    Inner(InnerBody<F>),
}

struct LeafBody<const F: usize> {
    count: usize,
    keys: [u64; F],
    vals: [u64; F],
}

struct InnerBody<const F: usize> {
    /// Separators; `count + 1` children.
    count: usize,
    /// Height above the leaves: 1 means the children are leaves.
    level: u32,
    keys: [u64; F],
    children: [NodeRef<F>; F],
}

impl<const F: usize> LeafBody<F> {
    fn new() -> Self {
        LeafBody {
            count: 0,
            keys: [0; F],
            vals: [0; F],
        }
    }
    fn lower_bound(&self, k: u64) -> usize {
        self.keys[..self.count].partition_point(|&x| x < k)
    }
    fn find(&self, k: u64) -> Option<u64> {
        let pos = self.lower_bound(k);
        (pos < self.count && self.keys[pos] == k).then(|| self.vals[pos])
    }
    /// Upsert; `None` if the key is new and the leaf is full.
    fn insert_if_room(&mut self, k: u64, v: u64) -> Option<Option<u64>> {
        let pos = self.lower_bound(k);
        if pos < self.count && self.keys[pos] == k {
            return Some(Some(std::mem::replace(&mut self.vals[pos], v)));
        }
        if self.count == F {
            return None;
        }
        self.keys.copy_within(pos..self.count, pos + 1);
        self.vals.copy_within(pos..self.count, pos + 1);
        self.keys[pos] = k;
        self.vals[pos] = v;
        self.count += 1;
        Some(None)
    }
    fn remove(&mut self, k: u64) -> Option<u64> {
        let pos = self.lower_bound(k);
        if pos >= self.count || self.keys[pos] != k {
            return None;
        }
        let old = self.vals[pos];
        self.keys.copy_within(pos + 1..self.count, pos);
        self.vals.copy_within(pos + 1..self.count, pos);
        self.count -= 1;
        Some(old)
    }
    fn collect(&self, from: u64, hi: u64, upper: Option<u64>, out: &mut Vec<(u64, u64)>) {
        for i in self.lower_bound(from)..self.count {
            let k = self.keys[i];
            if k > hi || upper.is_some_and(|u| k >= u) {
                break;
            }
            out.push((k, self.vals[i]));
        }
    }
}

impl<const F: usize> InnerBody<F> {
    fn new(level: u32) -> Self {
        InnerBody {
            count: 0,
            level,
            keys: [0; F],
            children: [NodeRef::NULL; F],
        }
    }
    fn child_index(&self, k: u64) -> usize {
        self.keys[..self.count].partition_point(|&x| x <= k)
    }
    /// Inserts `right` after child `i`, separated by `sep`. The node is not full.
    fn insert_after(&mut self, i: usize, sep: u64, right: NodeRef<F>) {
        debug_assert!(self.count < F - 1);
        self.keys.copy_within(i..self.count, i + 1);
        self.children.copy_within(i + 1..self.count + 1, i + 2);
        self.keys[i] = sep;
        self.children[i + 1] = right;
        self.count += 1;
    }
}

impl<const F: usize> Body<F> {
    fn is_full(&self) -> bool {
        match self {
            Body::Leaf(l) => l.count >= F,
            Body::Inner(n) => n.count >= F - 1,
        }
    }
    fn level(&self) -> u32 {
        match self {
            Body::Leaf(_) => 0,
            Body::Inner(n) => n.level,
        }
    }
    /// Splits a full node in place: keeps the left half, returns the separator and
    /// the right half.
    fn split(&mut self) -> (u64, Body<F>) {
        match self {
            Body::Leaf(l) => {
                let m = l.count / 2;
                let mut r = LeafBody::new();
                let n = l.count - m;
                r.keys[..n].copy_from_slice(&l.keys[m..l.count]);
                r.vals[..n].copy_from_slice(&l.vals[m..l.count]);
                r.count = n;
                l.count = m;
                (r.keys[0], Body::Leaf(r))
            }
            Body::Inner(inner) => {
                let n = inner.count;
                let m = n / 2;
                let mut r = InnerBody::new(inner.level);
                r.keys[..n - m - 1].copy_from_slice(&inner.keys[m + 1..n]);
                r.children[..n - m].copy_from_slice(&inner.children[m + 1..=n]);
                r.count = n - m - 1;
                inner.children[m + 1..=n].fill(NodeRef::NULL);
                inner.count = m;
                (inner.keys[m], Body::Inner(r))
            }
        }
    }
}

/// A B+-tree with a reader-writer lock per node and lock coupling.
pub struct RwLockCouplingBTree<K, V, const F: usize = DEFAULT_FANOUT> {
    root: Box<Node<F>>,
    stripes: Stripes,
    _kv: PhantomData<fn() -> (K, V)>,
}

impl<K: IndexKey, V: IndexValue, const F: usize> Default for RwLockCouplingBTree<K, V, F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: IndexKey, V: IndexValue, const F: usize> RwLockCouplingBTree<K, V, F> {
    pub fn new() -> Self {
        const { assert!(F >= 4, "fan-out must be at least 4") };
        RwLockCouplingBTree {
            root: Box::new(Node {
                body: RwLock::new(Body::Leaf(LeafBody::new())),
            }),
            stripes: Stripes::new(),
            _kv: PhantomData,
        }
    }

    /// The node behind a pointer read from one of this tree's nodes.
    fn node(&self, p: NodeRef<F>) -> &Node<F> {
        debug_assert!(!p.0.is_null());
        // SAFETY: `p` was read from a node of this tree (the type is private and
        // only stored in this tree's nodes); nodes are freed only by `Drop`, which
        // needs `&mut self`, and never move (they are boxed; splits move pointers).
        unsafe { &*p.0 }
    }

    pub fn lookup(&self, key: K) -> Option<V> {
        let k = key.to_word();
        let mut g = self.root.body.read();
        loop {
            let next = match &*g {
                Body::Leaf(l) => return l.find(k).map(V::from_word),
                Body::Inner(n) => self.node(n.children[n.child_index(k)]),
            };
            // Lock the child, then release the parent (the assignment drops it).
            g = next.body.read();
        }
    }

    /// Shared locks down to the leaf's parent, an exclusive lock on the leaf.
    fn with_leaf_write<R>(&self, k: u64, f: impl FnOnce(&mut LeafBody<F>) -> R) -> R {
        loop {
            let mut g = self.root.body.read();
            if let Body::Leaf(_) = &*g {
                drop(g);
                let mut w = self.root.body.write();
                if let Body::Leaf(l) = &mut *w {
                    return f(l);
                }
                continue; // the root split meanwhile
            }
            loop {
                let Body::Inner(n) = &*g else {
                    unreachable!("only inner nodes are read-locked here")
                };
                let child = self.node(n.children[n.child_index(k)]);
                if n.level == 1 {
                    let mut w = child.body.write();
                    drop(g);
                    let Body::Leaf(l) = &mut *w else {
                        unreachable!("children of level-1 nodes are leaves")
                    };
                    return f(l);
                }
                g = child.body.read();
            }
        }
    }

    pub fn insert(&self, key: K, value: V) -> Option<V> {
        let (k, v) = (key.to_word(), value.to_word());
        let old = match self.with_leaf_write(k, |l| l.insert_if_room(k, v)) {
            Some(old) => old,
            None => self.insert_splitting(k, v),
        };
        if old.is_none() {
            self.stripes.add_len(1);
        }
        old.map(V::from_word)
    }

    /// Exclusive lock coupling from the root, splitting every full node met.
    fn insert_splitting(&self, k: u64, v: u64) -> Option<u64> {
        let mut g = self.root.body.write();
        if g.is_full() {
            let level = g.level() + 1;
            let mut left = std::mem::replace(&mut *g, Body::Inner(InnerBody::new(level)));
            let (sep, right) = left.split();
            let Body::Inner(root) = &mut *g else {
                unreachable!()
            };
            root.keys[0] = sep;
            root.children[0] = NodeRef::alloc(left);
            root.children[1] = NodeRef::alloc(right);
            root.count = 1;
        }
        loop {
            let next = match &mut *g {
                Body::Leaf(l) => {
                    return l.insert_if_room(k, v).expect("eager splitting leaves room");
                }
                Body::Inner(n) => {
                    let i = n.child_index(k);
                    let child = self.node(n.children[i]);
                    let mut cg = child.body.write();
                    if cg.is_full() {
                        let (sep, right) = cg.split();
                        let right = NodeRef::alloc(right);
                        n.insert_after(i, sep, right);
                        if k >= sep {
                            // Unreachable for others until we release the parent.
                            cg = self.node(right).body.write();
                        }
                    }
                    cg
                }
            };
            g = next;
        }
    }

    pub fn remove(&self, key: K) -> Option<V> {
        let k = key.to_word();
        let old = self.with_leaf_write(k, |l| l.remove(k));
        if old.is_some() {
            self.stripes.add_len(-1);
        }
        old.map(V::from_word)
    }

    /// Copies the entries of the leaf covering `from` (bounded by `hi` and the
    /// leaf's upper bound) into `buf`; returns the upper bound.
    fn leaf_snapshot(&self, from: u64, hi: u64, buf: &mut Vec<(u64, u64)>) -> Option<u64> {
        buf.clear();
        let mut upper = None;
        let mut g = self.root.body.read();
        loop {
            let next = match &*g {
                Body::Leaf(l) => {
                    l.collect(from, hi, upper, buf);
                    return upper;
                }
                Body::Inner(n) => {
                    let i = n.child_index(from);
                    if i < n.count {
                        upper = Some(n.keys[i]);
                    }
                    self.node(n.children[i])
                }
            };
            g = next.body.read();
        }
    }

    /// As [`OrderedIndex::range`]: one leaf at a time under its shared lock, `f`
    /// called with no lock held.
    pub fn range(&self, range: RangeInclusive<K>, mut f: impl FnMut(K, V) -> bool) {
        let Some((lo, hi)) = word_range(&range) else {
            return;
        };
        let mut buf = Vec::with_capacity(F);
        let mut from = lo;
        loop {
            let upper = self.leaf_snapshot(from, hi, &mut buf);
            for &(k, v) in &buf {
                if !f(K::from_word(k), V::from_word(v)) {
                    return;
                }
            }
            match upper {
                Some(u) if u <= hi && u > from => from = u,
                _ => return,
            }
        }
    }

    pub fn len(&self) -> usize {
        self.stripes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Height including the leaf level.
    pub fn height(&self) -> usize {
        self.root.body.read().level() as usize + 1
    }
}

impl<K, V, const F: usize> Drop for RwLockCouplingBTree<K, V, F> {
    fn drop(&mut self) {
        let mut stack = Vec::new();
        let push_children = |b: &Body<F>, stack: &mut Vec<NodeRef<F>>| {
            if let Body::Inner(n) = b {
                stack.extend_from_slice(&n.children[..=n.count]);
            }
        };
        push_children(self.root.body.get_mut(), &mut stack);
        while let Some(p) = stack.pop() {
            // SAFETY: `&mut self`: no one else uses the tree; every non-root node
            // is referenced by exactly one live child slot and freed once.
            let mut node = unsafe { Box::from_raw(p.0.cast_mut()) };
            push_children(node.body.get_mut(), &mut stack);
        }
    }
}

impl<K: IndexKey, V: IndexValue, const F: usize> OrderedIndex for RwLockCouplingBTree<K, V, F> {
    type Key = K;
    type Value = V;
    fn lookup(&self, key: K) -> Option<V> {
        RwLockCouplingBTree::lookup(self, key)
    }
    fn insert(&self, key: K, value: V) -> Option<V> {
        RwLockCouplingBTree::insert(self, key, value)
    }
    fn remove(&self, key: K) -> Option<V> {
        RwLockCouplingBTree::remove(self, key)
    }
    fn range(&self, range: RangeInclusive<K>, f: &mut dyn FnMut(K, V) -> bool) {
        RwLockCouplingBTree::range(self, range, f)
    }
    fn len(&self) -> usize {
        RwLockCouplingBTree::len(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_against_btreemap_small_fanout() {
        let t = RwLockCouplingBTree::<u64, u64, 4>::new();
        let mut r = std::collections::BTreeMap::new();
        let mut rng = fastrand::Rng::with_seed(11);
        for i in 0..20_000u64 {
            let k = rng.u64(0..3000);
            match rng.u8(0..4) {
                0 => assert_eq!(t.remove(k), r.remove(&k)),
                1 => assert_eq!(t.lookup(k), r.get(&k).copied()),
                _ => assert_eq!(t.insert(k, i), r.insert(k, i)),
            }
        }
        assert!(t.height() >= 4);
        assert_eq!(t.len(), r.len());
        assert_eq!(
            t.scan_from(0, usize::MAX),
            r.into_iter().collect::<Vec<_>>()
        );
    }
}
