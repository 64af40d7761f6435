//! Abort-on-unwind guards for the few places where unwinding would be unsound:
//! a frame that published a pointer to itself (a `StackJob` in a queue, a scope
//! its spawned jobs point to) must not be freed before the pointer's users are
//! done, and a panic must not unwind through `parking_lot_core::park`'s
//! callbacks. Such a panic is a bug of this crate; aborting turns a use after
//! free (or a corrupted parking lot) into a clear crash.

/// Aborts the process if dropped while armed (i.e. during unwinding from the
/// region it guards); [`disarm`](Self::disarm) it once the region is over.
pub(crate) struct AbortOnDrop {
    what: &'static str,
}

impl AbortOnDrop {
    /// Arms a guard; `what` names the region in the abort message.
    pub(crate) fn arm(what: &'static str) -> Self {
        AbortOnDrop { what }
    }

    /// Ends the guarded region: dropping is harmless from now on.
    pub(crate) fn disarm(self) {
        std::mem::forget(self);
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        // Only reached while armed: `disarm` forgets the guard.
        eprintln!(
            "maestro-scheduler: fatal: unwinding out of {}; aborting (continuing could \
             touch freed memory)",
            self.what
        );
        std::process::abort();
    }
}

/// Test support: runs the test `name` of this test binary in a child process
/// with `MAESTRO_ABORT_CHILD=1` and returns its exit status and stderr. The
/// test checks the variable and, in the child, does the thing that aborts.
#[cfg(test)]
pub(crate) fn run_in_child(name: &str) -> (std::process::ExitStatus, String) {
    let out = std::process::Command::new(std::env::current_exe().expect("test binary path"))
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        .output()
        .expect("run the test binary as a child");
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Set in the child of [`run_in_child`].
#[cfg(test)]
pub(crate) const CHILD_ENV: &str = "MAESTRO_ABORT_CHILD";

#[cfg(test)]
pub(crate) fn in_child() -> bool {
    std::env::var_os(CHILD_ENV).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn armed_guard_aborts_when_dropped_by_a_panic() {
        if in_child() {
            let _g = AbortOnDrop::arm("the guarded region of a test");
            panic!("a panic inside the guarded region");
        }
        let (status, stderr) =
            run_in_child("abort::tests::armed_guard_aborts_when_dropped_by_a_panic");
        assert!(
            !status.success(),
            "the child must abort: {status:?}\n{stderr}"
        );
        assert!(
            stderr.contains("fatal: unwinding out of the guarded region of a test"),
            "{stderr}"
        );
    }

    #[test]
    fn disarmed_guard_is_harmless() {
        if in_child() {
            let g = AbortOnDrop::arm("the guarded region of a test");
            g.disarm();
            let r = std::panic::catch_unwind(|| panic!("after the region"));
            assert!(r.is_err());
            return;
        }
        let (status, stderr) = run_in_child("abort::tests::disarmed_guard_is_harmless");
        assert!(status.success(), "{status:?}\n{stderr}");
        assert!(!stderr.contains("fatal"), "{stderr}");
    }
}
