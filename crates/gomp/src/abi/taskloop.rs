//! `#pragma omp taskloop`: the iteration space is cut into `num_tasks` (or
//! `n / grainsize`) nearly equal ranges, each an explicit task whose argument block
//! starts with its range's first and past-the-end loop values (GCC reads them
//! from the block's first two `long` / `unsigned long long` fields). Unless
//! `nogroup`, the tasks run inside an implicit taskgroup.

use std::ffi::{c_int, c_long, c_uint, c_ulong, c_void};

use super::tasks::{ArgBlock, CopyFn, TaskFn, copy_block, copy_into};
use crate::ctx::{Ctx, with_current};
use crate::loops::Space;
use crate::runtime;
use crate::task;
use crate::taskred;

const FLAG_FINAL: c_uint = 1 << 1;
const FLAG_UP: c_uint = 1 << 8;
const FLAG_GRAINSIZE: c_uint = 1 << 9;
const FLAG_IF: c_uint = 1 << 10;
const FLAG_NOGROUP: c_uint = 1 << 11;
const FLAG_REDUCTION: c_uint = 1 << 12;
/// `grainsize(strict: g)`: every task but the last gets exactly `g` iterations.
const FLAG_STRICT: c_uint = 1 << 14;

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

/// How the `n` iterations are cut into tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Split {
    /// `tasks` nearly equal ranges (the first `n % tasks` one longer).
    Even { tasks: u64 },
    /// Ranges of exactly `grain` iterations, the last one shorter
    /// (`grainsize(strict: grain)`).
    Strict { grain: u64 },
}

impl Split {
    fn of(n: u64, flags: c_uint, num_tasks: u64, team_size: usize) -> Split {
        if flags & (FLAG_GRAINSIZE | FLAG_STRICT) == FLAG_GRAINSIZE | FLAG_STRICT {
            Split::Strict {
                grain: num_tasks.max(1),
            }
        } else {
            Split::Even {
                tasks: partition(n, flags, num_tasks, team_size),
            }
        }
    }

    fn tasks(self, n: u64) -> u64 {
        match self {
            Split::Even { tasks } => tasks,
            Split::Strict { grain } => n.div_ceil(grain).max(1),
        }
    }

    /// Task `k`'s indices.
    fn range(self, n: u64, k: u64) -> (u64, u64) {
        match self {
            Split::Even { tasks } => {
                let (q, r) = (n / tasks, n % tasks);
                let a = k * q + k.min(r);
                (a, a + q + u64::from(k < r))
            }
            Split::Strict { grain } => {
                let a = k.saturating_mul(grain).min(n);
                (a, a.saturating_add(grain).min(n))
            }
        }
    }
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
    let n = space.count;
    let group = l.flags & FLAG_NOGROUP == 0;
    // `taskloop reduction(…)`: the block's third word is GCC's reductions array,
    // registered on the implicit taskgroup (OpenMP forbids it with `nogroup`).
    let reductions = if l.flags & FLAG_REDUCTION != 0 {
        if !group {
            runtime::fatal("GOMP_taskloop: reduction together with nogroup");
        }
        // SAFETY: with the flag, GCC's block is {start, end, reductions array, …}.
        unsafe { l.data.cast::<*mut usize>().add(2).read() }
    } else {
        std::ptr::null_mut()
    };
    if !reductions.is_null() && n == 0 {
        // No iterations: no taskgroup, and `reductions[2] = 0` tells the
        // compiler's code that nothing was registered (nothing to combine).
        // SAFETY: GCC's reductions array, ours to write until this returns.
        unsafe { reductions.add(2).write(0) };
        return;
    }
    with_current(|ctx| {
        if group {
            task::taskgroup_start(ctx);
        }
        if !reductions.is_null() {
            // SAFETY: GCC's array, alive until the compiler's code unregisters
            // it after this call.
            unsafe { taskred::taskgroup_register(ctx, reductions) };
        }
        let split = Split::of(n, l.flags, l.num_tasks, ctx.team.n);
        let tasks = split.tasks(n);
        // libgomp's rule: a taskloop whose tasks would take the team past its
        // task throttle runs all of them at once in the encountering task (a
        // fine grain then costs a function call per task, not a queued task).
        let deferred = l.flags & FLAG_IF != 0
            && !task::must_run_now(ctx)
            && !ctx
                .team
                .would_pass_task_throttle(usize::try_from(tasks).unwrap_or(usize::MAX));
        let final_task = l.flags & FLAG_FINAL != 0;
        let range = |k: u64| space.bounds(split.range(n, k));
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
    if deferred {
        // Copied straight into the task's record (see `GOMP_task`).
        task::defer_with(ctx, final_task, l.f, |dst| {
            // SAFETY: `dst` is valid for writing a block (`defer_with`'s
            // contract); GCC's contract on `data`, `cpyfn`, `arg_size`
            // (forwarded by `run`). `copy_into` initializes it whole.
            unsafe { copy_into(dst, l.data, l.cpyfn, l.arg_size, l.arg_align) };
            // SAFETY: as above: initialized, and not moved until the task ends.
            set_bounds(unsafe { &*dst }, lo, hi);
        });
    } else {
        // SAFETY: GCC's contract on `data`, `cpyfn`, `arg_size` (forwarded by `run`).
        let block = unsafe { copy_block(l.data, l.cpyfn, l.arg_size, l.arg_align) };
        set_bounds(&block, lo, hi);
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
    fn strict_grains_are_exact_but_the_last() {
        let flags = FLAG_GRAINSIZE | FLAG_STRICT;
        let s = Split::of(30, flags, 7, 4);
        assert_eq!(s.tasks(30), 5);
        let ranges: Vec<_> = (0..5).map(|k| s.range(30, k)).collect();
        assert_eq!(ranges, [(0, 7), (7, 14), (14, 21), (21, 28), (28, 30)]);
        let even = Split::of(30, FLAG_GRAINSIZE, 7, 4);
        assert_eq!(even.tasks(30), 4, "without strict: 4 tasks of 7 or 8");
        assert_eq!(even.range(30, 0), (0, 8));
        assert_eq!(Split::of(5, flags, 7, 4).tasks(5), 1);
    }

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
