//! Host `teams` (OpenMP 5.1 §2.7, GCC 12's `GOMP_teams_reg`): a league of
//! teams whose initial tasks are scheduler tasks (`fork::run_league`), and the
//! teams ICVs: nteams-var (`omp_set_num_teams`, `OMP_NUM_TEAMS`) and
//! teams-thread-limit-var (`omp_set_teams_thread_limit`,
//! `OMP_TEAMS_THREAD_LIMIT`).
//!
//! GCC lowers `distribute` inline from `omp_get_num_teams` and
//! `omp_get_team_num`, so those two are all a league needs besides the fork.
//! Unlike libgomp 12, which runs the teams of a host league one after another
//! on the encountering thread, the teams here run concurrently when workers
//! are free (the join runs the rest); OpenMP allows either and forbids teams
//! to synchronize with each other.

use std::ffi::{c_int, c_uint, c_void};

use crate::ctx::with_current;
use crate::fork;
use crate::runtime;
use crate::team::RegionFn;

/// Teams in a league when neither `num_teams` nor nteams-var says (libgomp's
/// number, so that programs see the same league on both runtimes).
const DEFAULT_NUM_TEAMS: usize = 3;

fn to_int(v: usize) -> c_int {
    c_int::try_from(v).unwrap_or(c_int::MAX)
}

/// The league's size and its teams' thread-limit-var for a `teams` construct
/// with `num_teams` / `thread_limit` (0: clause absent), given nteams-var,
/// teams-thread-limit-var, the encountering task's thread-limit-var
/// `current_limit` and the scheduler's `cap` on it.
pub(crate) fn league_shape(
    num_teams: usize,
    thread_limit: usize,
    nteams_var: usize,
    teams_thread_limit_var: usize,
    current_limit: usize,
    cap: usize,
) -> (usize, usize) {
    let n = match (num_teams, nteams_var) {
        (0, 0) => DEFAULT_NUM_TEAMS,
        (0, v) => v,
        (n, _) => n,
    };
    let limit = match (thread_limit, teams_thread_limit_var) {
        (0, 0) => current_limit,
        (0, v) => v.min(cap),
        (l, _) => l.min(cap),
    };
    (n, limit.max(1))
}

/// `#pragma omp teams` on the host: runs `f(data)` as the initial task of
/// each of `num_teams` teams (0: nteams-var, else 3) whose thread-limit-var
/// is `thread_limit` (0: teams-thread-limit-var, else unchanged), and returns
/// when every team is done. GCC 12 passes a `num_teams(lower:upper)` clause's
/// upper bound, which we use (so does libgomp). `flags` is unused by GCC 12.
///
/// A `teams` construct must not be nested in a parallel or teams region
/// (OpenMP 5.1 §2.7): such a program is stopped with a message.
///
/// # Safety
/// `f` is a GCC-outlined `teams` body and `data` its argument block.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn GOMP_teams_reg(
    f: unsafe extern "C" fn(*mut c_void),
    data: *mut c_void,
    num_teams: c_uint,
    thread_limit: c_uint,
    _flags: c_uint,
) {
    let mut icv = with_current(|c| {
        if c.team.level > 0 || c.team.league.1 > 1 {
            runtime::fatal(
                "GOMP_teams_reg: a teams construct inside a parallel or teams region \
                 (OpenMP allows it only outside any region or in a target region)",
            );
        }
        c.icv.get()
    });
    let (n, limit) = league_shape(
        num_teams as usize,
        thread_limit as usize,
        runtime::num_teams_var(),
        runtime::teams_thread_limit_var(),
        icv.thread_limit,
        runtime::thread_limit(),
    );
    icv.thread_limit = limit;
    fork::run_league(RegionFn { f, data }, n, icv);
}

/// Sets nteams-var (the league size of `teams` without `num_teams`); a
/// negative value is ignored, 0 restores the default (as in libgomp).
#[unsafe(no_mangle)]
pub extern "C" fn omp_set_num_teams(num_teams: c_int) {
    if let Ok(n) = usize::try_from(num_teams) {
        runtime::set_num_teams_var(n);
    }
}

/// nteams-var (0 when unset, as libgomp reports it).
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_max_teams() -> c_int {
    to_int(runtime::num_teams_var())
}

/// Sets teams-thread-limit-var (thread-limit-var of the teams of `teams`
/// without `thread_limit`); negative: ignored, 0: unset.
#[unsafe(no_mangle)]
pub extern "C" fn omp_set_teams_thread_limit(thread_limit: c_int) {
    if let Ok(n) = usize::try_from(thread_limit) {
        runtime::set_teams_thread_limit_var(n);
    }
}

/// teams-thread-limit-var (0 when unset).
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_teams_thread_limit() -> c_int {
    to_int(runtime::teams_thread_limit_var())
}

/// The number of teams in the league the calling task belongs to (1 outside
/// any `teams` construct); regions and tasks nested in a team see its league.
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_num_teams() -> c_int {
    with_current(|c| to_int(c.team.league.1))
}

/// The calling task's team number in its league (0 outside any league).
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_team_num() -> c_int {
    with_current(|c| to_int(c.team.league.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn league_shapes_follow_clause_then_icv_then_default() {
        // (num_teams, thread_limit, nteams-var, teams-thread-limit-var, current, cap)
        assert_eq!(league_shape(0, 0, 0, 0, 16, 64), (3, 16));
        assert_eq!(league_shape(5, 0, 7, 0, 16, 64), (5, 16));
        assert_eq!(league_shape(0, 0, 7, 0, 16, 64), (7, 16));
        assert_eq!(league_shape(2, 3, 0, 9, 16, 64), (2, 3));
        assert_eq!(league_shape(2, 0, 0, 9, 16, 64), (2, 9));
        assert_eq!(league_shape(2, 100, 0, 0, 16, 64), (2, 64), "capped");
        assert_eq!(league_shape(2, 0, 0, 100, 16, 64), (2, 64), "capped");
    }
}
