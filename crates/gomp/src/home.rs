//! Dedicated threads: the mode that makes `threadprivate` (GCC's `__thread`
//! storage) right. PROTOCOL.md, "threadprivate", argues the design.
//!
//! In this mode member `k ≥ 1` of a team runs on the *home thread* `k` of the
//! OS thread that forked the team (member 0 runs on the forking thread
//! itself, as in every mode), and nowhere else: the join waits for it instead
//! of running it inline. A forking thread keeps its home threads between
//! regions, so thread number `k` of consecutive regions forked by the same
//! thread runs on the same OS thread and finds its thread-local values
//! (OpenMP's persistence rule); a nested team's members are the home threads
//! of the member that forked it. A home thread runs one member at a time, so
//! the members of a team run on distinct OS threads and their copies are
//! private.
//!
//! Which mode (`MAESTRO_OMP_THREADS`):
//! - `auto` (default): dedicated as soon as a loaded object other than this
//!   runtime and the C/C++ runtime libraries has thread-local storage (a
//!   `PT_TLS` segment: GCC's `threadprivate` variables, or any `__thread` /
//!   `thread_local` variable, which a team member could equally observe);
//!   looked at again whenever the set of loaded objects grew (`dlopen`).
//! - `dedicated`: always.
//! - `scheduler`: never (members are scheduler tasks on any worker; a warning
//!   says so once if the program has thread-local storage).
//!
//! Only regions forked through the libgomp ABI use the mode; the native
//! [`crate::parallel_region`] always runs members as scheduler tasks.

use std::cell::RefCell;
use std::ffi::{CStr, c_int, c_void};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::runtime;
use crate::team::TeamShared;

/// How long an idle home thread watches its mailbox before it sleeps: regions
/// in a loop fork again within microseconds, and a futex wake-up costs tens
/// of them. Between looks it yields its core: the OS may have put the
/// forking thread on the same core (on a busy machine it does, perf
/// 2026-11-25), and a pure spin would then hold back the very fork it waits
/// for.
const HOME_WATCH: Duration = Duration::from_micros(200);

/// The mode setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Threads {
    Auto,
    Dedicated,
    Scheduler,
}

impl Threads {
    pub(crate) fn parse(s: &str) -> Result<Threads, String> {
        match s.trim() {
            "auto" => Ok(Threads::Auto),
            "dedicated" => Ok(Threads::Dedicated),
            "scheduler" => Ok(Threads::Scheduler),
            other => Err(format!(
                "MAESTRO_OMP_THREADS={other} is none of auto, dedicated, scheduler"
            )),
        }
    }
}

fn setting() -> Threads {
    static SETTING: std::sync::OnceLock<Threads> = std::sync::OnceLock::new();
    *SETTING.get_or_init(|| match std::env::var("MAESTRO_OMP_THREADS") {
        Ok(v) => Threads::parse(&v).unwrap_or_else(|e| runtime::fatal(&e)),
        Err(_) => Threads::Auto,
    })
}

/// `auto`'s conclusion so far: `UNDECIDED`, `SHARED_OK` (no thread-local
/// storage seen in the objects loaded when `SCANNED_ADDS` was taken) or
/// `DEDICATED` (final). Relaxed everywhere: the value is a conclusion drawn
/// from the loader's state, which every thread can draw again; nothing is
/// published with it.
static AUTO: AtomicU8 = AtomicU8::new(UNDECIDED);
const UNDECIDED: u8 = 0;
const SHARED_OK: u8 = 1;
const DEDICATED: u8 = 2;
/// The loader's count of objects ever loaded (`dlpi_adds`) at the last scan.
static SCANNED_ADDS: AtomicU64 = AtomicU64::new(0);

/// Whether a region forked now through the libgomp ABI runs its members on
/// dedicated threads.
pub(crate) fn dedicated() -> bool {
    match setting() {
        Threads::Dedicated => true,
        Threads::Scheduler => {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED.call_once(|| {
                if let Some(name) = scan().tls {
                    eprintln!(
                        "maestro-gomp: {name} has thread-local storage (threadprivate?) but \
                         MAESTRO_OMP_THREADS=scheduler runs team members on any scheduler \
                         worker: its values are neither private to a member nor persistent"
                    );
                }
            });
            false
        }
        Threads::Auto => match AUTO.load(Ordering::Relaxed) {
            DEDICATED => true,
            SHARED_OK if loaded_adds() == SCANNED_ADDS.load(Ordering::Relaxed) => false,
            _ => {
                let s = scan();
                // Both only grow (`fetch_max`): a scan that raced with a
                // `dlopen` and saw fewer objects cannot undo the conclusion
                // of one that saw more.
                SCANNED_ADDS.fetch_max(s.adds, Ordering::Relaxed);
                let dedicated = s.tls.is_some();
                let before = AUTO.fetch_max(
                    if dedicated { DEDICATED } else { SHARED_OK },
                    Ordering::Relaxed,
                );
                dedicated || before == DEDICATED
            }
        },
    }
}

/// What a walk over the loaded objects found.
#[derive(Default)]
struct Scan {
    /// The loader's count of objects ever loaded.
    adds: u64,
    /// The first object (other than ours and the C/C++ runtime) with
    /// thread-local storage.
    tls: Option<String>,
}

/// The loader's count of objects loaded so far (one call of
/// `dl_iterate_phdr` that stops at the first object).
fn loaded_adds() -> u64 {
    unsafe extern "C" fn first(
        info: *mut libc::dl_phdr_info,
        _: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: the loader passes a valid record for the call; `data` is
        // the `u64` of `loaded_adds`, borrowed for the walk.
        unsafe { *data.cast::<u64>() = (*info).dlpi_adds };
        1
    }
    let mut adds = 0u64;
    // SAFETY: `first` matches the callback type and only writes `adds`,
    // which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(first), (&raw mut adds).cast()) };
    adds
}

/// Walks the loaded objects for thread-local storage that team members could
/// observe.
fn scan() -> Scan {
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: the loader passes a valid record for the call; `data` is
        // the `Scan` of `scan`, borrowed for the walk.
        let (info, scan) = unsafe { (&*info, &mut *data.cast::<Scan>()) };
        scan.adds = info.dlpi_adds;
        if info.dlpi_tls_modid == 0 {
            return 0;
        }
        let name = if info.dlpi_name.is_null() {
            String::new()
        } else {
            // SAFETY: a non-null `dlpi_name` is a NUL-terminated string the
            // loader keeps for the object's lifetime.
            unsafe { CStr::from_ptr(info.dlpi_name) }
                .to_string_lossy()
                .into_owned()
        };
        let phdrs = if info.dlpi_phdr.is_null() {
            &[][..]
        } else {
            // SAFETY: a non-null `dlpi_phdr` points to `dlpi_phnum` program
            // headers, which the loader keeps for the object's lifetime.
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, info.dlpi_phnum.into()) }
        };
        let own = own_address();
        let ours = phdrs.iter().any(|p| {
            let start = (info.dlpi_addr as usize).wrapping_add(p.p_vaddr as usize);
            p.p_type == libc::PT_LOAD && (start..start + p.p_memsz as usize).contains(&own)
        });
        if ours || is_runtime_library(&name) {
            return 0;
        }
        scan.tls = Some(if name.is_empty() {
            "the program".into()
        } else {
            name
        });
        1
    }
    let mut s = Scan::default();
    // SAFETY: `visit` matches the callback type and only touches `s`, which
    // outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&raw mut s).cast()) };
    s
}

/// An address inside this runtime's code, to recognize our own object (the
/// shared library, or the executable the rlib is linked into).
fn own_address() -> usize {
    own_address as fn() -> usize as usize
}

/// The C and C++ runtime libraries (and stock libgomp, when this runtime is
/// preloaded in front of it), whose thread-local storage is their own
/// business, not the program's.
fn is_runtime_library(path: &str) -> bool {
    const RUNTIME: [&str; 14] = [
        "libc.so",
        "libm.so",
        "libmvec.so",
        "libpthread.so",
        "libdl.so",
        "librt.so",
        "libresolv.so",
        "libutil.so",
        "libstdc++.so",
        "libgcc_s.so",
        "libgomp.so",
        "libatomic.so",
        "ld-linux",
        "ld64.so",
    ];
    let base = path.rsplit('/').next().unwrap_or(path);
    RUNTIME.iter().any(|r| base.starts_with(r)) || base.starts_with("libnss_")
}

/// What a home thread is told.
enum Mail {
    Empty,
    Member(Arc<TeamShared>, usize),
    Exit,
}

/// A home thread's mailbox.
struct Home {
    mail: Mutex<Mail>,
    /// Set under `mail`'s mutex when something is posted, for the home
    /// thread's spin to notice. Relaxed on both sides: a hint only, the mail
    /// itself is read under the mutex.
    posted: AtomicBool,
    /// The home thread sleeps on it under `mail`'s mutex.
    cv: Condvar,
}

/// The forking thread's handle on one home thread; dropping it ends the
/// thread.
pub(crate) struct HomeThread(Arc<Home>);

impl HomeThread {
    fn start() -> HomeThread {
        let home = Arc::new(Home {
            mail: Mutex::new(Mail::Empty),
            posted: AtomicBool::new(false),
            cv: Condvar::new(),
        });
        let h = home.clone();
        std::thread::Builder::new()
            .name("maestro-omp-home".into())
            .spawn(move || home_main(&h))
            .unwrap_or_else(|e| runtime::fatal(&format!("cannot start a team thread: {e}")));
        HomeThread(home)
    }

    fn post(&self, mail: Mail) {
        let mut m = self.0.mail.lock();
        debug_assert!(
            matches!(*m, Mail::Empty),
            "a home thread runs one member at a time"
        );
        *m = mail;
        self.0.posted.store(true, Ordering::Relaxed);
        drop(m);
        // Not lost: the home thread checks the mail under the mutex held
        // above and sleeps only if it found none.
        self.0.cv.notify_one();
    }
}

impl Drop for HomeThread {
    fn drop(&mut self) {
        self.post(Mail::Exit);
    }
}

fn home_main(home: &Home) {
    loop {
        let start = Instant::now();
        while !home.posted.load(Ordering::Relaxed) && start.elapsed() < HOME_WATCH {
            for _ in 0..64 {
                std::hint::spin_loop();
            }
            std::thread::yield_now();
        }
        let mail = {
            let mut m = home.mail.lock();
            while matches!(*m, Mail::Empty) {
                home.cv.wait(&mut m);
            }
            // Relaxed: only ever read as a hint; the mail itself is read
            // under the mutex.
            home.posted.store(false, Ordering::Relaxed);
            std::mem::replace(&mut *m, Mail::Empty)
        };
        match mail {
            Mail::Member(team, k) => {
                let ran = team.run_member(k);
                debug_assert!(ran, "only its home thread starts a dedicated member");
            }
            Mail::Exit => return,
            Mail::Empty => {}
        }
    }
}

/// Where a forking thread's home thread `k` is.
enum Slot {
    /// Never started.
    Vacant,
    Idle(HomeThread),
    /// Taken by a team this thread forked and has not joined (a region
    /// forked from a task this thread runs while it waits in that team).
    Busy,
}

/// A forking thread's home threads, by thread number (index 0 unused), and
/// spare ones for teams forked while the numbered ones are busy.
#[derive(Default)]
struct Homes {
    slots: Vec<Slot>,
    spare: Vec<HomeThread>,
}

/// At most this many spare home threads are kept per forking thread.
const SPARE_MAX: usize = 16;

thread_local! {
    static HOMES: RefCell<Homes> = RefCell::new(Homes::default());
}

/// The home threads a dedicated team's members run on, taken from the
/// forking thread until its join gives them back.
pub(crate) struct Taken(Vec<(usize, HomeThread, bool)>);

/// Starts members 1..n of the dedicated `team`, each on the calling thread's
/// home thread of its number.
pub(crate) fn start_members(team: &Arc<TeamShared>) -> Taken {
    let mut taken = Vec::with_capacity(team.n.saturating_sub(1));
    HOMES.with(|h| {
        let mut h = h.borrow_mut();
        for k in 1..team.n {
            if h.slots.len() <= k {
                h.slots.resize_with(k + 1, || Slot::Vacant);
            }
            let (home, numbered) = match std::mem::replace(&mut h.slots[k], Slot::Busy) {
                Slot::Idle(home) => (home, true),
                Slot::Vacant => (HomeThread::start(), true),
                Slot::Busy => (h.spare.pop().unwrap_or_else(HomeThread::start), false),
            };
            taken.push((k, home, numbered));
        }
    });
    for (k, home, _) in &taken {
        home.post(Mail::Member(team.clone(), *k));
    }
    Taken(taken)
}

/// Gives the home threads of a joined team back to the calling thread (the
/// one that forked it).
pub(crate) fn give_back(taken: Taken) {
    HOMES.with(|h| {
        let mut h = h.borrow_mut();
        for (k, home, numbered) in taken.0 {
            if numbered && k < h.slots.len() && matches!(h.slots[k], Slot::Busy) {
                h.slots[k] = Slot::Idle(home);
            } else if h.spare.len() < SPARE_MAX {
                h.spare.push(home);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_modes_parse() {
        assert_eq!(Threads::parse(" auto"), Ok(Threads::Auto));
        assert_eq!(Threads::parse("dedicated"), Ok(Threads::Dedicated));
        assert_eq!(Threads::parse("scheduler\n"), Ok(Threads::Scheduler));
        assert!(Threads::parse("pinned").is_err());
    }

    #[test]
    fn runtime_libraries_are_recognized_by_file_name() {
        assert!(is_runtime_library("/lib/x86_64-linux-gnu/libc.so.6"));
        assert!(is_runtime_library("/lib64/ld-linux-x86-64.so.2"));
        assert!(is_runtime_library("libstdc++.so.6"));
        assert!(is_runtime_library("/usr/lib/libgomp.so.1"));
        assert!(!is_runtime_library(""));
        assert!(!is_runtime_library("/opt/app/libsolver.so"));
        assert!(!is_runtime_library("/opt/libc.so.6/libmine.so"));
    }

    #[test]
    fn this_test_binary_has_no_foreign_thread_local_storage() {
        // The test executable holds this runtime (its Rust thread-locals are
        // ours); the rest is the C runtime.
        let s = scan();
        assert_eq!(s.tls, None);
        assert!(s.adds > 0);
        assert!(loaded_adds() >= s.adds);
    }
}
