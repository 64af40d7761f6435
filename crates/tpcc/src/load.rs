//! The initial population of clause 4.3.3.1 for W warehouses.
//!
//! The work is split into jobs — the item table, then one job per warehouse
//! (its stock, districts, customers, history, orders, order lines and
//! new-order rows) — taken by `threads` scoped threads from a shared counter.
//! Each job draws from its own generator seeded by `(seed, job)`, so the rows
//! of a key are the same whatever the thread count or interleaving; only row
//! ids (append order) differ between runs.

use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::db::{Database, TableCounts};
use crate::error::TpccError;
use crate::random::{NuRandConstants, TpccRng, last_name};
use crate::schema::*;

/// How to load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadConfig {
    pub warehouses: u16,
    /// Seeds every generator of the load.
    pub seed: u64,
    /// Loader threads (≥ 1); more than `warehouses + 1` are not used.
    pub threads: usize,
    /// "The current date and time" of the load (`c_since`, `o_entry_d`, …).
    pub load_time: Timestamp,
}

impl LoadConfig {
    /// `warehouses` with seed 0, one thread per hardware context, the clock's now.
    pub fn new(warehouses: u16) -> Self {
        LoadConfig {
            warehouses,
            seed: 0,
            threads: std::thread::available_parallelism().map_or(1, usize::from),
            load_time: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        }
    }
}

/// Reported from the loader threads as jobs finish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadProgress {
    ItemsLoaded {
        elapsed: Duration,
    },
    WarehouseLoaded {
        w_id: u16,
        /// Warehouses finished so far, of `total`.
        done: u16,
        total: u16,
        elapsed: Duration,
    },
}

impl fmt::Display for LoadProgress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadProgress::ItemsLoaded { elapsed } => {
                write!(f, "items loaded at {:.2} s", elapsed.as_secs_f64())
            }
            LoadProgress::WarehouseLoaded {
                w_id,
                done,
                total,
                elapsed,
            } => write!(
                f,
                "[{done}/{total}] warehouse {w_id} loaded at {:.2} s",
                elapsed.as_secs_f64()
            ),
        }
    }
}

/// What a finished load reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadReport {
    pub elapsed: Duration,
    pub threads: usize,
    pub counts: TableCounts,
    /// The NURand constants of the load; derive the run's with
    /// [`NuRandConstants::for_run`].
    pub constants: NuRandConstants,
}

/// Builds and populates a database of `config.warehouses` warehouses.
pub fn load(
    config: &LoadConfig,
    progress: &(dyn Fn(&LoadProgress) + Sync),
) -> Result<(Database, LoadReport), TpccError> {
    if config.threads == 0 {
        return Err(TpccError::InvalidOption {
            option: "threads",
            reason: "at least one loader thread is needed".into(),
        });
    }
    let start = Instant::now();
    let db = Database::new(config.warehouses)?;
    let constants = NuRandConstants::for_load(&mut fastrand::Rng::with_seed(config.seed));
    let jobs = usize::from(config.warehouses) + 1;
    let threads = config.threads.min(jobs);
    let next_job = AtomicUsize::new(0);
    let warehouses_done = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let error = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while !failed.load(Ordering::Relaxed) {
                    let job = next_job.fetch_add(1, Ordering::Relaxed);
                    if job >= jobs {
                        return;
                    }
                    // (job + 1) × an odd constant differs per job: one stream per job.
                    let seed = config.seed ^ (job as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
                    let mut rng = TpccRng::new(seed, constants);
                    let result = if job == 0 {
                        load_items(&db, &mut rng).map(|()| LoadProgress::ItemsLoaded {
                            elapsed: start.elapsed(),
                        })
                    } else {
                        // 1 ≤ job ≤ warehouses, so both narrowings are exact.
                        let w_id = job as u16;
                        load_warehouse(&db, &mut rng, w_id, config.load_time).map(|()| {
                            let done = warehouses_done.fetch_add(1, Ordering::Relaxed) + 1;
                            LoadProgress::WarehouseLoaded {
                                w_id,
                                done: done as u16,
                                total: config.warehouses,
                                elapsed: start.elapsed(),
                            }
                        })
                    };
                    match result {
                        Ok(event) => progress(&event),
                        Err(e) => {
                            failed.store(true, Ordering::Relaxed);
                            error
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .get_or_insert(e);
                        }
                    }
                }
            });
        }
    });
    if let Some(e) = error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let report = LoadReport {
        elapsed: start.elapsed(),
        threads,
        counts: db.counts(),
        constants,
    };
    Ok((db, report))
}

fn load_items(db: &Database, rng: &mut TpccRng) -> Result<(), TpccError> {
    for i_id in 1..=ITEMS {
        db.insert(Item {
            i_id,
            i_im_id: rng.uniform(1, 10_000) as u32,
            i_name: rng.a_string(14, 24).into(),
            i_price: rng.uniform(100, 10_000) as Money,
            i_data: rng.data_with_original(26, 50).into(),
        })?;
    }
    Ok(())
}

/// Street 1, street 2, city, state, zip.
fn address(rng: &mut TpccRng) -> [Text; 5] {
    [
        rng.a_string(10, 20).into(),
        rng.a_string(10, 20).into(),
        rng.a_string(10, 20).into(),
        rng.state().into(),
        rng.zip().into(),
    ]
}

fn load_warehouse(db: &Database, rng: &mut TpccRng, w_id: u16, now: u64) -> Result<(), TpccError> {
    let [w_street_1, w_street_2, w_city, w_state, w_zip] = address(rng);
    db.insert(Warehouse {
        w_id,
        w_name: rng.a_string(6, 10).into(),
        w_street_1,
        w_street_2,
        w_city,
        w_state,
        w_zip,
        w_tax: rng.uniform(0, 2000) as Rate,
        w_ytd: 30_000_000,
    })?;
    for i_id in 1..=ITEMS {
        db.insert(Stock {
            s_i_id: i_id,
            s_w_id: w_id,
            s_quantity: rng.uniform(10, 100) as i32,
            s_dist: std::sync::Arc::new(std::array::from_fn(|_| rng.a_bytes())),
            s_ytd: 0,
            s_order_cnt: 0,
            s_remote_cnt: 0,
            s_data: rng.data_with_original(26, 50).into(),
        })?;
    }
    for d_id in 1..=DISTRICTS_PER_WAREHOUSE {
        let [d_street_1, d_street_2, d_city, d_state, d_zip] = address(rng);
        db.insert(District {
            d_id,
            d_w_id: w_id,
            d_name: rng.a_string(6, 10).into(),
            d_street_1,
            d_street_2,
            d_city,
            d_state,
            d_zip,
            d_tax: rng.uniform(0, 2000) as Rate,
            d_ytd: 3_000_000,
            d_next_o_id: ORDERS_PER_DISTRICT + 1,
        })?;
        load_customers(db, rng, w_id, d_id, now)?;
        load_orders(db, rng, w_id, d_id, now)?;
    }
    Ok(())
}

fn load_customers(
    db: &Database,
    rng: &mut TpccRng,
    w_id: u16,
    d_id: u8,
    now: u64,
) -> Result<(), TpccError> {
    for c_id in 1..=CUSTOMERS_PER_DISTRICT {
        let name = if c_id <= 1000 {
            c_id - 1
        } else {
            rng.last_name_number()
        };
        let [c_street_1, c_street_2, c_city, c_state, c_zip] = address(rng);
        db.insert(Customer {
            c_id,
            c_d_id: d_id,
            c_w_id: w_id,
            c_first: rng.a_string(8, 16).into(),
            c_middle: "OE".into(),
            c_last: last_name(name).into(),
            c_street_1,
            c_street_2,
            c_city,
            c_state,
            c_zip,
            c_phone: rng.n_string(16, 16).into(),
            c_since: now,
            c_credit: if rng.percent(10) { "BC" } else { "GC" }.into(),
            c_credit_lim: 5_000_000,
            c_discount: rng.uniform(0, 5000) as Rate,
            c_balance: -1000,
            c_ytd_payment: 1000,
            c_payment_cnt: 1,
            c_delivery_cnt: 0,
            c_data: rng.a_string(300, 500).into(),
        })?;
        db.insert(History {
            h_c_id: c_id,
            h_c_d_id: d_id,
            h_c_w_id: w_id,
            h_d_id: d_id,
            h_w_id: w_id,
            h_date: now,
            h_amount: 1000,
            h_data: rng.a_string(12, 24).into(),
        })?;
    }
    Ok(())
}

fn load_orders(
    db: &Database,
    rng: &mut TpccRng,
    w_id: u16,
    d_id: u8,
    now: u64,
) -> Result<(), TpccError> {
    let customers = rng.permutation(CUSTOMERS_PER_DISTRICT);
    for (o_id, &o_c_id) in (1..=ORDERS_PER_DISTRICT).zip(&customers) {
        let delivered = o_id < FIRST_UNDELIVERED_O_ID;
        let o_ol_cnt = rng.uniform(5, 15) as u8;
        db.insert(Order {
            o_id,
            o_d_id: d_id,
            o_w_id: w_id,
            o_c_id,
            o_entry_d: now,
            o_carrier_id: delivered.then(|| rng.uniform(1, 10) as u8),
            o_ol_cnt,
            o_all_local: 1,
        })?;
        for ol_number in 1..=o_ol_cnt {
            db.insert(OrderLine {
                ol_o_id: o_id,
                ol_d_id: d_id,
                ol_w_id: w_id,
                ol_number,
                ol_i_id: rng.uniform(1, u64::from(ITEMS)) as u32,
                ol_supply_w_id: w_id,
                ol_delivery_d: delivered.then_some(now),
                ol_quantity: 5,
                ol_amount: if delivered {
                    0
                } else {
                    rng.uniform(1, 999_999) as Money
                },
                ol_dist_info: rng.a_bytes(),
            })?;
        }
        if !delivered {
            db.insert(NewOrder {
                no_o_id: o_id,
                no_d_id: d_id,
                no_w_id: w_id,
            })?;
        }
    }
    Ok(())
}
