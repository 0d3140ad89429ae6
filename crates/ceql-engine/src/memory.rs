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
