//! Pre-mapping fresh memory. The two things that take fresh memory all the time
//! are the node arena under a window that keeps many chunks alive, and the output
//! buffer of a run that returns millions of matches. Filling fresh memory costs a
//! page fault per 4 KiB page, which on this project's machines was most of the
//! difference between a small and a very large window. Mapping the pages of a new
//! buffer with one `madvise(MADV_POPULATE_WRITE)` call avoids those faults.

/// Maps the pages of the unused capacity of `v` (the memory its next pushes will
/// write). Only a hint: contents are not touched, and kernels without
/// `MADV_POPULATE_WRITE` (before Linux 5.14) reject it, leaving the pages to fault
/// in as usual. Does nothing on other systems.
#[cfg(target_os = "linux")]
pub fn prefault_spare<T>(v: &mut Vec<T>) {
    const PAGE: usize = 4096;
    let size = std::mem::size_of::<T>();
    let start = v.as_mut_ptr() as usize + v.len() * size;
    let end = v.as_mut_ptr() as usize + v.capacity() * size;
    // madvise needs page-aligned bounds: only the whole pages inside the spare part.
    let (first, last) = ((start + PAGE - 1) & !(PAGE - 1), end & !(PAGE - 1));
    if last > first {
        // SAFETY: [first, last) lies inside the allocation this Vec owns, beyond its
        // initialised elements, and MADV_POPULATE_WRITE only maps pages; it never
        // changes their contents.
        unsafe {
            libc::madvise(first as *mut libc::c_void, last - first, libc::MADV_POPULATE_WRITE);
        }
    }
}

/// Does nothing outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn prefault_spare<T>(_: &mut Vec<T>) {}

/// The default budget of one evaluation's state (partitions, partial matches and
/// the determinization cache): half of the memory this process may use, that is
/// half of the physical memory, or of the cgroup's limit when the process runs in
/// a container with a smaller one, or of the address space left under the
/// process's `RLIMIT_AS` (`ulimit -v`, which PySpark's worker memory setting also
/// sets), whichever is least. An evaluation that would outgrow it raises a memory
/// error instead of being killed by the kernel or aborting on a failed allocation;
/// 4 GiB when none can be read. Half, because a growing table briefly holds its old
/// and its new storage at once. Read when the evaluation starts.
pub fn default_state_budget() -> usize {
    let physical = physical_memory();
    let limit = [physical, cgroup_limit(), address_space_left()].into_iter().flatten().min();
    limit.map_or(4 << 30, |bytes| bytes / 2)
}

/// The address space this process may still map under `RLIMIT_AS`, if a limit is set.
#[cfg(target_os = "linux")]
fn address_space_left() -> Option<usize> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes the limit into the struct we own.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0 || limit.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    // The first field of /proc/self/statm: the pages of address space in use.
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().next()?.parse().ok()?;
    // SAFETY: sysconf only reads system configuration.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
    Some((limit.rlim_cur as usize).saturating_sub(pages.saturating_mul(page)))
}

#[cfg(not(target_os = "linux"))]
fn address_space_left() -> Option<usize> {
    None
}

#[cfg(target_os = "linux")]
fn physical_memory() -> Option<usize> {
    // SAFETY: sysconf only reads system configuration.
    let (pages, size) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    (pages > 0 && size > 0).then(|| (pages as usize).saturating_mul(size as usize))
}

#[cfg(not(target_os = "linux"))]
fn physical_memory() -> Option<usize> {
    None
}

/// The memory limit of the process's cgroup (v2, then v1), if one is set.
fn cgroup_limit() -> Option<usize> {
    ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"]
        .iter()
        .find_map(|path| std::fs::read_to_string(path).ok()?.trim().parse::<usize>().ok())
}
