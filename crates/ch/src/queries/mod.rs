//! The 22 CH-benCHmark analytical queries (BenchBase's texts, in each file's
//! header), hand-planned over one MVCC snapshot: scans of the versioned
//! TPC-C tables (`Table::scan` with the query's snapshot, so a query never
//! takes a lock and never sees part of a transaction) and hash joins and
//! aggregations in plain Rust collections.
//!
//! Each query returns an [`Answer`] whose header is the query's select list
//! (aliases as in the text) and whose rows follow its ORDER BY (ties broken
//! by the remaining columns so answers are deterministic).

use crate::answer::Answer;
use crate::db::Snap;

mod keys;
mod q01;
mod q02;
mod q03;
mod q04;
mod q05;
mod q06;
mod q07;
mod q08;
mod q09;
mod q10;
mod q11;
mod q12;
mod q13;
mod q14;
mod q15;
mod q16;
mod q17;
mod q18;
mod q19;
mod q20;
mod q21;
mod q22;

/// One query: its number and its plan.
#[derive(Clone, Copy)]
pub struct Query {
    pub number: u8,
    pub run: fn(&Snap) -> Answer,
}

/// The 22 queries, by number.
pub const QUERIES: &[Query] = &[
    Query {
        number: 1,
        run: q01::run,
    },
    Query {
        number: 2,
        run: q02::run,
    },
    Query {
        number: 3,
        run: q03::run,
    },
    Query {
        number: 4,
        run: q04::run,
    },
    Query {
        number: 5,
        run: q05::run,
    },
    Query {
        number: 6,
        run: q06::run,
    },
    Query {
        number: 7,
        run: q07::run,
    },
    Query {
        number: 8,
        run: q08::run,
    },
    Query {
        number: 9,
        run: q09::run,
    },
    Query {
        number: 10,
        run: q10::run,
    },
    Query {
        number: 11,
        run: q11::run,
    },
    Query {
        number: 12,
        run: q12::run,
    },
    Query {
        number: 13,
        run: q13::run,
    },
    Query {
        number: 14,
        run: q14::run,
    },
    Query {
        number: 15,
        run: q15::run,
    },
    Query {
        number: 16,
        run: q16::run,
    },
    Query {
        number: 17,
        run: q17::run,
    },
    Query {
        number: 18,
        run: q18::run,
    },
    Query {
        number: 19,
        run: q19::run,
    },
    Query {
        number: 20,
        run: q20::run,
    },
    Query {
        number: 21,
        run: q21::run,
    },
    Query {
        number: 22,
        run: q22::run,
    },
];

/// Query `number` (1–22).
pub fn query(number: u8) -> Option<Query> {
    QUERIES.iter().copied().find(|q| q.number == number)
}
