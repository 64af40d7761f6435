//! OpenMP on the Maestro scheduler (paper: Wolf et al., *Extending Database Task
//! Schedulers for Multi-threaded Application Code*, SSDBM 2015).
//!
//! Two faces of one runtime:
//!
//! - **`libmaestro_gomp.so`** (this crate's `cdylib`) exports the libgomp ABI that
//!   GCC 12 emits (`GOMP_*` and the `omp_*` user API, see [`abi`]). A program
//!   compiled with `gcc -fopenmp -c` and linked against it (instead of `-lgomp`)
//!   runs every OpenMP team member as a Maestro scheduler task: the runtime owns no
//!   thread and no thread pool — unless the program has thread-local storage of
//!   its own (`threadprivate`), whose members then run on dedicated threads
//!   (`home`).
//! - **A native Rust API**, [`parallel_region`] with [`Team::barrier`] and
//!   [`Team::for_each`], for Rust UDFs; it is the same machinery.
//!
//! Control ([`set_priority`], [`set_hint_teams`], [`set_master_placement`],
//! [`install_scheduler`]) lets the database favour its own work over OpenMP work,
//! size teams from the scheduler's concurrency hint, and run even the masters of
//! application threads' regions as scheduler tasks. The benchmarks of `maestro bench omp`
//! live in the crate `maestro-gomp-bench`, not in this library.
//!
//! How a team forks, meets at barriers and joins, and why a team larger than the
//! free workers still completes, is written down in `PROTOCOL.md` beside this
//! crate's manifest. `threadprivate` compiles to thread-local storage, which
//! scheduler workers do not give per member: a program with thread-local
//! storage of its own gets dedicated threads per thread number instead
//! (`MAESTRO_OMP_THREADS`, PROTOCOL.md "threadprivate"). Unsupported:
//! `OMP_STACKSIZE` (the scheduler owns the threads); the runtime aborts with a
//! message when it is set.

#![warn(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]

pub mod abi;
mod alloc;
mod ctx;
mod depend;
mod doacross;
mod fork;
mod home;
mod icv;
mod loops;
mod native;
mod record;
mod runtime;
mod task;
mod taskred;
mod team;
mod wordlock;
mod workshare;

pub use native::{Schedule, Team, parallel_region};
pub use runtime::{
    MasterPlacement, hint_teams, install_scheduler, master_placement, priority, region_class,
    scheduler, set_hint_teams, set_master_placement, set_priority,
};
