//! Times TPC-H Q1 and Q6 with the operators under several granularity
//! policies, checks them against plain loops (and, at SF 1, the official
//! answers), and reports the tasks each run created.
//!
//! ```text
//! cargo run --release -p maestro-execution --example tpch_q1_q6 -- \
//!     [--sf 1] [--runs 10] [--clients 1] [--policies static,hint,fixed:1,adaptive]
//! ```
//!
//! With `--clients N`, N client threads run the query concurrently (`runs`
//! each): latencies under load, and how many tasks each policy then creates.

#[path = "../tests/common/plans.rs"]
mod plans;

use std::sync::Arc;
use std::time::{Duration, Instant};

use maestro_execution::{Executor, Granularity, QueryProfile};
use maestro_scheduler::{Scheduler, SchedulerConfig};
use maestro_storage::column::Table;

struct Args {
    sf: f64,
    runs: usize,
    clients: usize,
    policies: Vec<Granularity>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        sf: 1.0,
        runs: 10,
        clients: 1,
        policies: vec![Granularity::Static, Granularity::Hint],
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--sf" => args.sf = value()?.parse().map_err(|e| format!("--sf: {e}"))?,
            "--runs" => args.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            "--clients" => {
                args.clients = value()?.parse().map_err(|e| format!("--clients: {e}"))?
            }
            "--policies" => {
                args.policies = value()?
                    .split(',')
                    .map(|p| p.parse().map_err(|e| format!("{e}")))
                    .collect::<Result<_, _>>()?
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if args.runs == 0 || args.clients == 0 {
        return Err("--runs and --clients must be at least 1".into());
    }
    Ok(args)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Median and minimum of the run times, and the tasks per run.
fn summarize(times: &mut [Duration], profiles: &[QueryProfile]) -> String {
    times.sort_unstable();
    let tasks: Vec<u64> = profiles.iter().map(|p| p.tasks).collect();
    let splits: u64 = profiles.iter().flat_map(|p| &p.ops).map(|o| o.splits).sum();
    let mean = tasks.iter().sum::<u64>() as f64 / tasks.len() as f64;
    let shown = if tasks.len() <= 12 {
        format!("{tasks:?}")
    } else {
        format!(
            "{}..{}",
            tasks.iter().min().unwrap_or(&0),
            tasks.iter().max().unwrap_or(&0)
        )
    };
    format!(
        "median {:8.2} ms  min {:8.2} ms  tasks/run {mean:.1} {shown} (splits {splits})",
        ms(times[times.len() / 2]),
        ms(times[0]),
    )
}

fn run_query<R: PartialEq + std::fmt::Debug + Sync>(
    name: &str,
    exec: &Executor,
    runs: usize,
    clients: usize,
    li: &Table,
    expected: &R,
    query: impl Fn(&maestro_execution::ExecContext, &Table) -> R + Sync,
) {
    let sched = exec.scheduler();
    // One warm-up run (page faults of the first scan, adaptive's serial start).
    let ctx = exec.context(name);
    assert_eq!(&query(&ctx, li), expected, "{name} warm-up");
    ctx.finish();
    let before = sched.stats().tasks_created;
    let start = Instant::now();
    let per_client: Vec<(Vec<Duration>, Vec<QueryProfile>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|_| {
                s.spawn(|| {
                    let mut times = Vec::new();
                    let mut profiles = Vec::new();
                    for _ in 0..runs {
                        let ctx = exec.context(name);
                        let t = Instant::now();
                        let r = query(&ctx, li);
                        times.push(t.elapsed());
                        assert_eq!(&r, expected, "{name} under {}", exec.granularity());
                        profiles.push(ctx.finish());
                    }
                    (times, profiles)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("client ran"))
            .collect()
    });
    let wall = start.elapsed();
    let created = sched.stats().tasks_created - before;
    let (mut times, profiles): (Vec<Duration>, Vec<QueryProfile>) = per_client
        .into_iter()
        .flat_map(|(t, p)| t.into_iter().zip(p))
        .unzip();
    let total = (runs * clients) as f64;
    println!(
        "{name} {:<9} {}  scheduler tasks/run {:.1}{}",
        exec.granularity().to_string(),
        summarize(&mut times, &profiles),
        created as f64 / total,
        if clients > 1 {
            format!("  throughput {:.1} q/s", total / wall.as_secs_f64())
        } else {
            String::new()
        }
    );
    if let Some(last) = profiles.last() {
        for line in last.summary().lines().skip(1) {
            println!("      {line}");
        }
    }
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let sched =
        Arc::new(Scheduler::new(SchedulerConfig::single_hints()).expect("scheduler starts"));
    println!(
        "TPC-H SF {} on {} contexts (scheduler preset {}), {} client(s) x {} runs per query and policy",
        args.sf,
        sched.contexts(),
        sched.config().name,
        args.clients,
        args.runs
    );
    let t = Instant::now();
    let db = maestro_tpch::load(&sched, args.sf, &|_| {}).expect("TPC-H loads");
    let li = &db.lineitem;
    println!(
        "loaded {} lineitem rows in {:.2} s",
        li.num_rows(),
        t.elapsed().as_secs_f64()
    );

    let t = Instant::now();
    let q1_expected = plans::q1_reference(li);
    let q1_ref_time = t.elapsed();
    let t = Instant::now();
    let q6_expected = plans::q6_reference(li);
    let q6_ref_time = t.elapsed();
    println!(
        "plain single-threaded loops: Q1 {:.2} ms, Q6 {:.2} ms",
        ms(q1_ref_time),
        ms(q6_ref_time)
    );
    if args.sf == 1.0 {
        check_official(&q1_expected, q6_expected);
    }

    for &policy in &args.policies {
        let exec = Executor::new(sched.clone(), policy);
        run_query(
            "Q1",
            &exec,
            args.runs,
            args.clients,
            li,
            &q1_expected,
            |ctx, li| plans::q1(ctx, li).expect("Q1 runs"),
        );
        run_query(
            "Q6",
            &exec,
            args.runs,
            args.clients,
            li,
            &q6_expected,
            |ctx, li| plans::q6(ctx, li).expect("Q6 runs"),
        );
        if policy == Granularity::Adaptive {
            for r in exec.adaptive_state().report() {
                println!(
                    "      adaptive {}: {:?} after {} runs, best {:?}",
                    r.template,
                    r.phase,
                    r.runs,
                    r.best.map(|(p, d)| (p.entries().collect::<Vec<_>>(), d))
                );
            }
        }
    }
}

/// Compares with the answers bundled with `tpchgen` (dbgen's, SF 1).
fn check_official(q1: &[plans::Q1Row], q6: i128) {
    use tpchgen::q_and_a::answers_sf1::{Q1_ANSWER, Q6_ANSWER};
    let official: Vec<String> = Q1_ANSWER
        .lines()
        .skip(2)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split('|').map(str::trim).collect::<Vec<_>>().join("|"))
        .collect();
    let ours = plans::q1_lines(q1);
    println!(
        "Q1 vs official SF 1 answer: {}",
        if ours == official {
            "identical"
        } else {
            "DIFFERENT"
        }
    );
    if ours != official {
        println!("  ours:     {ours:?}\n  official: {official:?}");
    }
    let q6_official = Q6_ANSWER.lines().nth(2).unwrap_or("").trim().to_string();
    let q6_ours = plans::fmt2(q6, 4);
    println!(
        "Q6 vs official SF 1 answer: {} ({q6_ours})",
        if q6_ours == q6_official {
            "identical"
        } else {
            "DIFFERENT"
        }
    );
}
