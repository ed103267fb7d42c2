import CDBus

/// The process's freed memory. Message bodies and the items a service holds come and go in
/// large buffers, and glibc keeps what is freed in its arenas (resident) until asked to give it
/// back: a service that has just let go of many megabytes calls ``returnToSystem()``.
public enum FreedMemory {
    /// Returns the memory malloc holds free to the system (`malloc_trim(0)`), so that the
    /// process's resident size falls after large frees.
    public static func returnToSystem() {
        _ = cdbus_malloc_trim()
    }

    /// Makes every allocation of at least `threshold` bytes a mapping of its own, unmapped as
    /// soon as it is freed (`mallopt(M_MMAP_THRESHOLD)`), and lets each heap keep up to
    /// `keepFree` bytes free at its top (`M_TRIM_THRESHOLD`).
    ///
    /// glibc otherwise raises the threshold each time such a buffer is freed, up to 32 MiB, and
    /// then keeps large buffers in its heaps: a process that held 30 MiB of items kept about
    /// 16 MiB of them resident after letting go. Below the threshold, buffers are reused from the
    /// heap: a mapping of its own is zeroed page by page by the kernel on first use, and a stream
    /// of 512 KiB buffers (continuity's chunks, large D-Bus messages) spent half of ferryd's CPU
    /// on those page faults when every one of them was a new mapping.
    public static func returnLargeBuffersAtOnce(threshold: Int = 1 << 20, keepFree: Int = 4 << 20) {
        _ = cdbus_malloc_set_trim_threshold(Int32(clamping: keepFree))
        _ = cdbus_malloc_set_mmap_threshold(Int32(clamping: threshold))
    }
}
