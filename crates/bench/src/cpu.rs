//! Process CPU time, for utilisation = CPU seconds ÷ (wall seconds × contexts).

use std::time::{Duration, Instant};

/// User and system CPU time of this process so far, and its context switches.
#[derive(Clone, Copy, Debug)]
pub struct CpuTimes {
    pub user: Duration,
    pub system: Duration,
    /// Voluntary context switches (a thread waited).
    pub voluntary_switches: u64,
    /// Involuntary context switches (a thread was preempted).
    pub involuntary_switches: u64,
}

pub fn process_cpu_times() -> CpuTimes {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a complete `rusage` into the pointer we pass, which
    // points to properly sized, writable memory; RUSAGE_SELF is always valid.
    let ru = unsafe {
        if libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) != 0 {
            return CpuTimes {
                user: Duration::ZERO,
                system: Duration::ZERO,
                voluntary_switches: 0,
                involuntary_switches: 0,
            };
        }
        ru.assume_init()
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    CpuTimes {
        user: tv(ru.ru_utime),
        system: tv(ru.ru_stime),
        voluntary_switches: ru.ru_nvcsw.max(0) as u64,
        involuntary_switches: ru.ru_nivcsw.max(0) as u64,
    }
}

/// Measures wall time and CPU utilisation of `f`.
pub struct Measured<R> {
    pub value: R,
    pub wall: Duration,
    /// CPU seconds used ÷ (wall seconds × contexts), in [0, 1] give or take noise.
    pub cpu_utilisation: f64,
}

pub fn measure<R>(contexts: usize, f: impl FnOnce() -> R) -> Measured<R> {
    let c0 = process_cpu_times();
    let t0 = Instant::now();
    let value = f();
    let wall = t0.elapsed();
    let c1 = process_cpu_times();
    let cpu = (c1.user + c1.system).saturating_sub(c0.user + c0.system);
    let cpu_utilisation = cpu.as_secs_f64() / (wall.as_secs_f64() * contexts as f64).max(1e-9);
    Measured {
        value,
        wall,
        cpu_utilisation,
    }
}
