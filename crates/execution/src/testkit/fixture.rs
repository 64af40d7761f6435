//! A seeded random table with a column of every type.

use maestro_storage::column::{DictColumn, StrHeap};

use crate::col::Col;

pub(crate) struct Fixture {
    pub n: usize,
    /// Small-domain integer key 0..40.
    pub k: Vec<i64>,
    /// Wide-domain integer 0..n (many duplicates, many distinct).
    pub id: Vec<i64>,
    pub q: Vec<i32>,
    /// Decimal(2) in -100.00..100.00.
    pub v: Vec<i64>,
    /// Decimal(2) in 0.00..0.10.
    pub disc: Vec<i64>,
    pub day: Vec<i32>,
    pub tag: DictColumn,
    pub tags: Vec<&'static str>,
    pub text: StrHeap,
    pub texts: Vec<String>,
}

const TAGS: [&str; 6] = ["AIR", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"];
const WORDS: [&str; 6] = [
    "special", "requests", "green", "blue", "pending", "deposits",
];

impl Fixture {
    pub(crate) fn new(n: usize, seed: u64) -> Fixture {
        let mut rng = fastrand::Rng::with_seed(seed);
        let tags: Vec<&'static str> = (0..n).map(|_| TAGS[rng.usize(0..TAGS.len())]).collect();
        let texts: Vec<String> = (0..n)
            .map(|_| {
                let w = rng.usize(0..4);
                (0..w)
                    .map(|_| WORDS[rng.usize(0..WORDS.len())])
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        Fixture {
            n,
            k: (0..n).map(|_| rng.i64(0..40)).collect(),
            id: (0..n).map(|_| rng.i64(0..n.max(1) as i64)).collect(),
            q: (0..n).map(|_| rng.i32(0..50)).collect(),
            v: (0..n).map(|_| rng.i64(-10_000..10_000)).collect(),
            disc: (0..n).map(|_| rng.i64(0..=10)).collect(),
            day: (0..n).map(|_| rng.i32(8_000..11_000)).collect(),
            tag: DictColumn::from_strs(tags.iter().copied()),
            tags,
            text: StrHeap::from_strs(texts.iter().map(String::as_str)),
            texts,
        }
    }

    pub(crate) fn k(&self) -> Col<'_> {
        Col::i64(&self.k)
    }
    pub(crate) fn id(&self) -> Col<'_> {
        Col::i64(&self.id)
    }
    pub(crate) fn q(&self) -> Col<'_> {
        Col::i32(&self.q)
    }
    pub(crate) fn v(&self) -> Col<'_> {
        Col::decimal_raw(&self.v, 2)
    }
    pub(crate) fn disc(&self) -> Col<'_> {
        Col::decimal_raw(&self.disc, 2)
    }
    pub(crate) fn day(&self) -> Col<'_> {
        Col::date(&self.day)
    }
    pub(crate) fn tag(&self) -> Col<'_> {
        Col::dict(&self.tag)
    }
    pub(crate) fn text(&self) -> Col<'_> {
        Col::heap(&self.text)
    }
}
