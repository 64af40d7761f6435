//! `GroupTable`: a hash table from packed keys to dense group ids, with one
//! accumulator column per aggregate. Keys and their hashes are stored by group
//! id, so growing the table and merging never rehash a key.

use hashbrown::HashTable;

use super::acc::Acc;
use super::spec::AggFunc;
use crate::keys::hash_key;

pub(crate) struct GroupTable<const N: usize> {
    map: HashTable<u32>,
    pub(crate) keys: Vec<[i64; N]>,
    pub(crate) hashes: Vec<u64>,
    pub(crate) accs: Vec<Acc>,
}

impl<const N: usize> GroupTable<N> {
    pub(crate) fn new(funcs: &[AggFunc]) -> Self {
        GroupTable {
            map: HashTable::new(),
            keys: Vec::new(),
            hashes: Vec::new(),
            accs: funcs.iter().map(|&f| Acc::new(f)).collect(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// The group of `key` (hash `h`), created if new.
    #[inline]
    pub(crate) fn group_of(&mut self, key: [i64; N], h: u64) -> u32 {
        let keys = &self.keys;
        if let Some(&g) = self.map.find(h, |&g| keys[g as usize] == key) {
            return g;
        }
        let g = u32::try_from(self.keys.len()).expect("fewer than 2^32 groups");
        self.keys.push(key);
        self.hashes.push(h);
        for a in &mut self.accs {
            a.push_group();
        }
        let hashes = &self.hashes;
        self.map.insert_unique(h, g, |&g| hashes[g as usize]);
        g
    }

    /// The group ids of `keys` into `gids`. Runs of equal keys (clustered
    /// input, e.g. lineitem by order key) cost one comparison per row.
    pub(crate) fn assign(&mut self, keys: &[[i64; N]], gids: &mut Vec<u32>) {
        gids.clear();
        if N == 0 {
            if self.keys.is_empty() {
                self.group_of([0; N], hash_key(&[0; N]));
            }
            gids.resize(keys.len(), 0);
            return;
        }
        let mut last: Option<([i64; N], u32)> = None;
        for &k in keys {
            let g = match last {
                Some((lk, lg)) if lk == k => lg,
                _ => {
                    let g = self.group_of(k, hash_key(&k));
                    last = Some((k, g));
                    g
                }
            };
            gids.push(g);
        }
    }

    /// Merges the groups of `src` for which `take(hash)` holds.
    pub(crate) fn merge_from(&mut self, src: &GroupTable<N>, take: impl Fn(u64) -> bool) {
        for (sg, (&key, &h)) in src.keys.iter().zip(&src.hashes).enumerate() {
            if !take(h) {
                continue;
            }
            let dg = self.group_of(key, h);
            for (d, s) in self.accs.iter_mut().zip(&src.accs) {
                d.merge(dg, s, sg as u32);
            }
        }
    }
}
