//! The cost of a memory charge (`CancelToken::charge`) when several threads
//! charge statements of one class at once — the class pool's counters are
//! shared: T threads, each with its own statement token on one pool, each
//! charging `bytes` N times; prints nanoseconds per charge (median of R
//! runs) as one JSON line.
//!
//!     cargo run --release -p maestro-scheduler --example memory_charge -- 2 5000000 64 5

use std::time::Instant;

use maestro_scheduler::{CancelToken, MemoryPool, StatementMemory};

fn arg<T: std::str::FromStr>(args: &[String], i: usize, default: T) -> T {
    args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let threads: usize = arg(&args, 1, 2);
    let charges: u64 = arg(&args, 2, 5_000_000);
    let bytes: u64 = arg(&args, 3, 64);
    let reps: usize = arg(&args, 4, 5).max(1);
    let mut ns = Vec::new();
    for _ in 0..reps {
        let pool = MemoryPool::new(None);
        // A peak above what the run reaches, as in a steady state where
        // earlier statements set it.
        {
            let big = CancelToken::for_statement(
                None,
                Some(StatementMemory::new(None, Some(pool.clone()))),
            );
            big.charge(u64::MAX / 4).expect("no limit");
        }
        let start = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..threads {
                let pool = pool.clone();
                s.spawn(move || {
                    let token = CancelToken::for_statement(
                        None,
                        Some(StatementMemory::new(None, Some(pool))),
                    );
                    for _ in 0..charges {
                        token.charge(std::hint::black_box(bytes)).expect("no limit");
                    }
                });
            }
        });
        ns.push(start.elapsed().as_nanos() as f64 / charges as f64);
    }
    ns.sort_by(f64::total_cmp);
    println!(
        "{{\"threads\":{threads},\"charges\":{charges},\"bytes\":{bytes},\"ns_per_charge_median\":{:.2},\"min\":{:.2},\"max\":{:.2}}}",
        ns[ns.len() / 2],
        ns[0],
        ns[ns.len() - 1]
    );
}
