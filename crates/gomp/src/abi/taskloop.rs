//! `#pragma omp taskloop`: the iteration space is cut into `num_tasks` (or
//! `n / grainsize`) nearly equal ranges, each an explicit task whose argument block
//! starts with its range's first and past-the-end loop values (GCC reads them
//! from the block's first two `long` / `unsigned long long` fields). Unless
//! `nogroup`, the tasks run inside an implicit taskgroup.

use std::ffi::{c_int, c_long, c_uint, c_ulong, c_void};

use super::tasks::{ArgBlock, CopyFn, TaskFn, copy_block, defer};
use crate::ctx::{Ctx, with_current};
use crate::loops::Space;
use crate::runtime;
use crate::task;

const FLAG_FINAL: c_uint = 1 << 1;
const FLAG_UP: c_uint = 1 << 8;
const FLAG_GRAINSIZE: c_uint = 1 << 9;
const FLAG_IF: c_uint = 1 << 10;
const FLAG_NOGROUP: c_uint = 1 << 11;
const FLAG_REDUCTION: c_uint = 1 << 12;

/// The argument GCC passes for one taskloop.
struct Loop {
    f: TaskFn,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: c_long,
    arg_align: c_long,
    flags: c_uint,
    num_tasks: c_ulong,
}

/// How many tasks, and how many iterations each (the first `n % tasks` get one
/// more).
fn partition(n: u64, flags: c_uint, num_tasks: u64, team_size: usize) -> u64 {
    let tasks = if flags & FLAG_GRAINSIZE != 0 {
        // Every task gets between grainsize and 2 × grainsize − 1 iterations.
        n / num_tasks.max(1)
    } else if num_tasks == 0 {
        team_size as u64
    } else {
        num_tasks
    };
    tasks.clamp(1, n.max(1))
}

/// # Safety
/// `l` holds what GCC passed to `GOMP_taskloop*`.
unsafe fn run(l: Loop, space: Space) {
    if l.flags & FLAG_REDUCTION != 0 {
        runtime::fatal("GOMP_taskloop: reductions on taskloop are not supported");
    }
    let n = space.count;
    with_current(|ctx| {
        let group = l.flags & FLAG_NOGROUP == 0;
        if group {
            task::taskgroup_start(ctx);
        }
        let tasks = partition(n, l.flags, l.num_tasks, ctx.team.n);
        let (q, r) = (n / tasks, n % tasks);
        // libgomp's rule: a taskloop whose tasks would take the team past its
        // task throttle runs all of them at once in the encountering task (a
        // fine grain then costs a function call per task, not a queued task).
        let deferred = l.flags & FLAG_IF != 0
            && !task::must_run_now(ctx)
            && !ctx
                .team
                .would_pass_task_throttle(usize::try_from(tasks).unwrap_or(usize::MAX));
        let final_task = l.flags & FLAG_FINAL != 0;
        // Task k's range of indices (the first `r` tasks get one more).
        let range = |k: u64| {
            let a = k * q + k.min(r);
            space.bounds((a, a + q + u64::from(k < r)))
        };
        if n == 0 {
            // No iterations: no tasks.
        } else if !deferred && l.cpyfn.is_none() {
            // Undeferred without a copy constructor: like libgomp, run the
            // tasks one after the other on the encountering task's own block
            // (no allocation), in one task context.
            task::run_now_each(ctx, final_task, tasks, |k| {
                let (lo, hi) = range(k);
                // SAFETY: GCC lays the block out with the range as its first
                // two 8-byte fields (see `set_bounds`); nothing else reads the
                // block while the task runs, since we run it here and now.
                unsafe { write_bounds(l.data.cast::<u64>(), lo, hi) };
                // SAFETY: GCC's contract: `f` takes this loop's block.
                unsafe { (l.f)(l.data) };
            });
        } else {
            for k in 0..tasks {
                let (lo, hi) = range(k);
                spawn_one(ctx, &l, deferred, final_task, lo, hi);
            }
        }
        if group {
            task::taskgroup_end(ctx);
        }
    });
}

/// Task `[lo, hi)` of a taskloop on its own copy of the argument block: queued
/// (`deferred`) or run at once.
fn spawn_one(ctx: &Ctx, l: &Loop, deferred: bool, final_task: bool, lo: u64, hi: u64) {
    // SAFETY: GCC's contract on `data`, `cpyfn`, `arg_size` (forwarded by `run`).
    let block = unsafe { copy_block(l.data, l.cpyfn, l.arg_size, l.arg_align) };
    set_bounds(&block, lo, hi);
    if deferred {
        defer(ctx, l.f, block, final_task);
    } else {
        // SAFETY: the body runs on its own block, alive for the call.
        task::run_now(ctx, final_task, || unsafe { (l.f)(block.as_ptr()) });
    }
}

/// Writes a task's range into the first two 8-byte fields of its block.
fn set_bounds(block: &ArgBlock, lo: u64, hi: u64) {
    // SAFETY: GCC lays the taskloop's block out with the range as its first two
    // `long`/`unsigned long long` fields, so it is at least 16 bytes and 8-aligned.
    unsafe { write_bounds(block.as_ptr().cast::<u64>(), lo, hi) }
}

/// # Safety
/// `p` points to a taskloop argument block: at least two 8-aligned, writable
/// `u64` fields that nobody else accesses meanwhile.
unsafe fn write_bounds(p: *mut u64, lo: u64, hi: u64) {
    // SAFETY: the caller's contract.
    unsafe {
        p.write(lo);
        p.add(1).write(hi);
    }
}

/// `taskloop` over a `long` iteration variable.
///
/// # Safety
/// The arguments are as GCC generates them for a taskloop.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_taskloop(
    f: TaskFn,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: c_long,
    arg_align: c_long,
    flags: c_uint,
    num_tasks: c_ulong,
    _priority: c_int,
    start: c_long,
    end: c_long,
    step: c_long,
) {
    let l = Loop {
        f,
        data,
        cpyfn,
        arg_size,
        arg_align,
        flags,
        num_tasks,
    };
    // SAFETY: forwarded contract.
    unsafe { run(l, Space::long(start, end, step)) }
}

/// `taskloop` over an `unsigned long long` iteration variable (`GOMP_TASK_FLAG_UP`
/// gives the direction).
///
/// # Safety
/// The arguments are as GCC generates them for a taskloop.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_taskloop_ull(
    f: TaskFn,
    data: *mut c_void,
    cpyfn: Option<CopyFn>,
    arg_size: c_long,
    arg_align: c_long,
    flags: c_uint,
    num_tasks: c_ulong,
    _priority: c_int,
    start: u64,
    end: u64,
    step: u64,
) {
    let l = Loop {
        f,
        data,
        cpyfn,
        arg_size,
        arg_align,
        flags,
        num_tasks,
    };
    let space = Space::ull(flags & FLAG_UP != 0, start, end, step);
    // SAFETY: forwarded contract.
    unsafe { run(l, space) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_follow_num_tasks_and_grainsize() {
        assert_eq!(partition(100, 0, 0, 4), 4);
        assert_eq!(partition(100, 0, 7, 4), 7);
        assert_eq!(partition(3, 0, 7, 4), 3);
        assert_eq!(partition(100, FLAG_GRAINSIZE, 30, 4), 3);
        assert_eq!(partition(10, FLAG_GRAINSIZE, 30, 4), 1);
        assert_eq!(partition(0, 0, 0, 4), 1);
    }
}
