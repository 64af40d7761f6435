//! What the runtime says about itself: `omp_display_env` (and
//! `OMP_DISPLAY_ENV`), the affinity format and its display/capture
//! (OpenMP 5.1 §3.10, the field table of §6.14), the place queries, and
//! `omp_pause_resource`.
//!
//! Places: team members run on whichever scheduler worker takes them, so no
//! place partition exists (`OMP_PLACES` is ignored): there are no places,
//! every place query answers as for an empty place list, and the affinity
//! field `%A` lists the processors the calling thread may run on (as
//! libgomp's does without places).

use std::ffi::{CStr, c_char, c_int};
use std::io::Write;
use std::sync::Mutex;

use crate::ctx::with_current;
use crate::icv::Sched;
use crate::runtime;

/// affinity-format-var when `OMP_AFFINITY_FORMAT` is unset (libgomp's).
const DEFAULT_AFFINITY_FORMAT: &str = "level %L thread %i affinity %A";

/// affinity-format-var (one per program, as the specification has it).
static AFFINITY_FORMAT: Mutex<Option<String>> = Mutex::new(None);

fn affinity_format() -> String {
    let set = AFFINITY_FORMAT.lock().unwrap_or_else(|e| e.into_inner());
    match &*set {
        Some(f) => f.clone(),
        None => std::env::var("OMP_AFFINITY_FORMAT")
            .unwrap_or_else(|_| DEFAULT_AFFINITY_FORMAT.to_string()),
    }
}

/// A C string argument; `None` for a null pointer.
///
/// # Safety
/// `p` is null or a NUL-terminated string.
unsafe fn c_str(p: *const c_char) -> Option<String> {
    // SAFETY: the caller's contract.
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// Copies `s` into `buf` of `size` bytes (truncated, NUL-terminated) and
/// returns `s`'s length, as the specification's string-returning routines do.
///
/// # Safety
/// `buf` is null (then `size` must be 0) or valid for `size` bytes of writes.
unsafe fn copy_out(s: &str, buf: *mut c_char, size: usize) -> usize {
    if !buf.is_null() && size > 0 {
        let n = s.len().min(size - 1);
        // SAFETY: the caller's contract: `buf` holds `size > n` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), n);
            buf.add(n).write(0);
        }
    }
    s.len()
}

/// A malformed affinity format: libgomp stops the program, and so do we,
/// with its words (a format is the program's own text, fixed at its
/// writing: a typo should not pass silently).
fn bad_format(what: &str) -> ! {
    runtime::fatal(&format!("{what} in affinity format"))
}

/// The calling thread's affinity line under `format` (the field table of the
/// specification: `%[[[0].]size]type`, one-letter or `%{name}` types).
pub(crate) fn format_affinity(format: &str) -> String {
    let (level, num, n, ancestor, (team_num, num_teams)) = with_current(|c| {
        // omp_get_ancestor_thread_num(level − 1): −1 at level 0.
        let ancestor = match c.team.level {
            0 => -1,
            1 => 0,
            _ => c.team.outer.last().map_or(0, |&(num, _)| num as i64),
        };
        (c.team.level, c.num, c.team.n, ancestor, c.team.league)
    });
    let field = |name: &str| -> Option<String> {
        Some(match name {
            "t" | "team_num" => team_num.to_string(),
            "T" | "num_teams" => num_teams.to_string(),
            "L" | "nesting_level" => level.to_string(),
            "n" | "thread_num" => num.to_string(),
            "N" | "num_threads" => n.to_string(),
            "a" | "ancestor_tnum" => ancestor.to_string(),
            "H" | "host" => hostname(),
            "P" | "process_id" => std::process::id().to_string(),
            // SAFETY: gettid has no preconditions.
            "i" | "native_thread_id" => unsafe { libc::gettid() }.to_string(),
            "A" | "thread_affinity" => thread_cpus(),
            _ => return None,
        })
    };
    let mut out = String::new();
    let mut chars = format.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch != '%' {
            out.push(ch);
            continue;
        }
        if chars.next_if_eq(&'%').is_some() {
            out.push('%');
            continue;
        }
        let zero = chars.next_if_eq(&'0').is_some();
        let right = chars.next_if_eq(&'.').is_some();
        if zero && !right {
            bad_format("leading zero not followed by dot");
        }
        let mut width = None::<usize>;
        while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
            chars.next();
            width = Some(
                width
                    .unwrap_or(0)
                    .saturating_mul(10)
                    .saturating_add(d as usize),
            );
        }
        if right && width.is_none() {
            bad_format("leading zero or right justification requires size");
        }
        let width = width.unwrap_or(0);
        let v = match chars.next() {
            Some('{') => {
                let mut name = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => name.push(c),
                        None => bad_format(&format!("unterminated long type name '{name}'")),
                    }
                }
                // Long names only (a one-letter name in braces is not one).
                match field(&name).filter(|_| name.len() > 1) {
                    Some(v) => v,
                    None => bad_format(&format!("unsupported long type name '{name}'")),
                }
            }
            Some(c) => match field(c.encode_utf8(&mut [0; 4])) {
                Some(v) => v,
                None => bad_format(&format!("unsupported type {c}")),
            },
            None => bad_format("unsupported type  "),
        };
        let pad = width.saturating_sub(v.len());
        if right {
            let fill = if zero { '0' } else { ' ' };
            out.extend(std::iter::repeat_n(fill, pad));
            out.push_str(&v);
        } else {
            out.push_str(&v);
            out.extend(std::iter::repeat_n(' ', pad));
        }
    }
    out
}

/// The processors the calling thread may run on, as `0-3,6` (the `%A`
/// field; libgomp prints the same without places). Empty if the kernel
/// does not say.
fn thread_cpus() -> String {
    // SAFETY: an all-zero cpu_set_t is a valid empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is writable for the size passed; 0 is the calling thread.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    if r != 0 {
        return String::new();
    }
    let max = 8 * std::mem::size_of_val(&set);
    // SAFETY: `set` is initialized and `cpu < max` is within it.
    let cpus = (0..max).filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) });
    cpu_ranges(cpus)
}

/// `0,1,2,5` as `0-2,5`.
fn cpu_ranges(cpus: impl Iterator<Item = usize>) -> String {
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for cpu in cpus {
        match ranges.last_mut() {
            Some((_, end)) if *end + 1 == cpu => *end = cpu,
            _ => ranges.push((cpu, cpu)),
        }
    }
    ranges
        .iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

thread_local! {
    /// The last affinity line `OMP_DISPLAY_AFFINITY` showed for this thread.
    static LAST_SHOWN: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// With `OMP_DISPLAY_AFFINITY=true`, called by a member of a parallel region
/// once its context is entered: shows its affinity line on stderr if the
/// line differs from the last one shown for this thread (libgomp's rule:
/// when a thread first joins a team and whenever its fields change).
pub(crate) fn member_started() {
    if !runtime::env().display_affinity {
        return;
    }
    let line = format_affinity(&affinity_format());
    LAST_SHOWN.with(|last| {
        let mut last = last.borrow_mut();
        if *last != line {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "{line}");
            let _ = err.flush();
            *last = line;
        }
    });
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: `buf` is writable for its length; gethostname NUL-terminates
    // within it or returns an error.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return String::new();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// # Safety
/// `format` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_set_affinity_format(format: *const c_char) {
    // SAFETY: forwarded contract.
    let f = unsafe { c_str(format) }.unwrap_or_default();
    *AFFINITY_FORMAT.lock().unwrap_or_else(|e| e.into_inner()) = Some(f);
}

/// # Safety
/// `buf` is null (and `size` 0) or valid for `size` bytes of writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_get_affinity_format(buf: *mut c_char, size: usize) -> usize {
    // SAFETY: forwarded contract.
    unsafe { copy_out(&affinity_format(), buf, size) }
}

/// # Safety
/// `format` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_display_affinity(format: *const c_char) {
    // SAFETY: forwarded contract.
    let f = unsafe { c_str(format) }
        .filter(|f| !f.is_empty())
        .unwrap_or_else(affinity_format);
    let line = format_affinity(&f);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// # Safety
/// `buf` is null (and `size` 0) or valid for `size` bytes of writes; `format`
/// is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn omp_capture_affinity(
    buf: *mut c_char,
    size: usize,
    format: *const c_char,
) -> usize {
    // SAFETY: forwarded contract.
    let f = unsafe { c_str(format) }
        .filter(|f| !f.is_empty())
        .unwrap_or_else(affinity_format);
    // SAFETY: forwarded contract.
    unsafe { copy_out(&format_affinity(&f), buf, size) }
}

/// Processors of place `place`: none exist (see the module docs).
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_place_num_procs(_place: c_int) -> c_int {
    0
}

/// Writes the processor ids of place `place`: no place exists, nothing written.
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_place_proc_ids(_place: c_int, _ids: *mut c_int) {}

/// Writes the place numbers of the partition: it is empty, nothing written.
#[unsafe(no_mangle)]
pub extern "C" fn omp_get_partition_place_nums(_place_nums: *mut c_int) {}

/// Nothing to release: the scheduler's workers belong to the host. Success.
#[unsafe(no_mangle)]
pub extern "C" fn omp_pause_resource(_kind: c_int, _device: c_int) -> c_int {
    0
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_pause_resource_all(_kind: c_int) -> c_int {
    0
}

/// The environment display of OpenMP 5.1 §3.15: the ICVs as `NAME = 'value'`
/// lines between BEGIN and END markers; `verbose` adds our own variables.
pub(crate) fn display_env_text(verbose: bool) -> String {
    let env = runtime::env();
    let icv = runtime::initial_icv();
    let sched = match icv.run_sched {
        Sched::Static => "STATIC",
        Sched::Dynamic => "DYNAMIC",
        Sched::Guided => "GUIDED",
        Sched::Auto => "AUTO",
    };
    let schedule = match icv.run_chunk {
        0 => sched.to_string(),
        c => format!("{sched},{c}"),
    };
    let nthreads = if env.nthreads_list.is_empty() {
        icv.nthreads.to_string()
    } else {
        env.nthreads_list
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    let bool_str = |b: bool| if b { "TRUE" } else { "FALSE" };
    let allocator = crate::alloc::allocator_name(env.default_allocator);
    let mut lines = vec![
        "OPENMP DISPLAY ENVIRONMENT BEGIN".to_string(),
        "  _OPENMP = '201511'".to_string(),
        format!("  OMP_DYNAMIC = '{}'", bool_str(icv.dynamic)),
        format!("  OMP_NESTED = '{}'", bool_str(icv.max_active_levels > 1)),
        format!("  OMP_NUM_THREADS = '{nthreads}'"),
        format!("  OMP_SCHEDULE = '{schedule}'"),
        "  OMP_PROC_BIND = 'FALSE'".to_string(),
        "  OMP_PLACES = ''".to_string(),
        "  OMP_WAIT_POLICY = 'PASSIVE'".to_string(),
        format!("  OMP_THREAD_LIMIT = '{}'", runtime::thread_limit()),
        format!("  OMP_MAX_ACTIVE_LEVELS = '{}'", icv.max_active_levels),
        format!("  OMP_NUM_TEAMS = '{}'", runtime::num_teams_var()),
        format!(
            "  OMP_TEAMS_THREAD_LIMIT = '{}'",
            runtime::teams_thread_limit_var()
        ),
        format!(
            "  OMP_CANCELLATION = '{}'",
            bool_str(runtime::env().cancellation)
        ),
        "  OMP_DEFAULT_DEVICE = '0'".to_string(),
        "  OMP_MAX_TASK_PRIORITY = '0'".to_string(),
        format!(
            "  OMP_DISPLAY_AFFINITY = '{}'",
            bool_str(env.display_affinity)
        ),
        format!("  OMP_AFFINITY_FORMAT = '{}'", affinity_format()),
        format!("  OMP_ALLOCATOR = '{allocator}'"),
        "  OMP_TARGET_OFFLOAD = 'DEFAULT'".to_string(),
    ];
    if verbose && let Some(sched) = runtime::scheduler_if_started() {
        lines.push(format!(
            "  [host] MAESTRO_OMP_PRESET = '{}'",
            sched.config().name
        ));
        lines.push(format!(
            "  [host] MAESTRO_OMP_CONTEXTS = '{}'",
            sched.contexts()
        ));
        lines.push(format!(
            "  [host] MAESTRO_OMP_PRIORITY = '{}'",
            runtime::priority()
        ));
        lines.push(format!(
            "  [host] MAESTRO_OMP_MASTER = '{}'",
            runtime::master_placement().name()
        ));
    }
    lines.push("OPENMP DISPLAY ENVIRONMENT END".to_string());
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

#[unsafe(no_mangle)]
pub extern "C" fn omp_display_env(verbose: c_int) {
    let text = display_env_text(verbose != 0);
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_fields_widths_and_escapes() {
        // Outside any region: level 0, thread 0 of a team of 1, no ancestor.
        assert_eq!(format_affinity("%L %n %N %a"), "0 0 1 -1");
        assert_eq!(format_affinity("%{nesting_level}/%{thread_num}"), "0/0");
        assert_eq!(
            format_affinity("[%0.3n] [%.3n] [%3n] [%.10{team_num}]"),
            "[000] [  0] [0  ] [         0]"
        );
        assert_eq!(format_affinity("100%% %t/%T"), "100% 0/1");
        assert!(
            !format_affinity("%A").is_empty(),
            "this thread runs somewhere"
        );
        assert_eq!(format_affinity("%P"), std::process::id().to_string());
    }

    #[test]
    fn cpu_sets_print_as_ranges() {
        assert_eq!(cpu_ranges([0, 1, 2, 5, 7, 8].into_iter()), "0-2,5,7-8");
        assert_eq!(cpu_ranges([3].into_iter()), "3");
        assert_eq!(cpu_ranges(std::iter::empty()), "");
    }

    #[test]
    fn the_environment_display_is_framed_and_complete() {
        let t = display_env_text(false);
        assert!(t.starts_with("OPENMP DISPLAY ENVIRONMENT BEGIN\n"));
        assert!(t.ends_with("OPENMP DISPLAY ENVIRONMENT END\n"));
        for name in [
            "_OPENMP",
            "OMP_NUM_THREADS",
            "OMP_SCHEDULE",
            "OMP_NUM_TEAMS",
            "OMP_TEAMS_THREAD_LIMIT",
            "OMP_DISPLAY_AFFINITY",
            "OMP_ALLOCATOR",
        ] {
            assert!(t.contains(&format!("  {name} = '")), "{name} in {t}");
        }
    }
}
