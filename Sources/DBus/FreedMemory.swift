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
    /// soon as it is freed (`mallopt(M_MMAP_THRESHOLD)`). glibc otherwise raises the threshold
    /// each time such a buffer is freed, up to 32 MiB, and then keeps large buffers in its heaps:
    /// a process that held 30 MiB of items kept about 16 MiB of them resident after letting go.
    public static func returnLargeBuffersAtOnce(threshold: Int = 256 * 1024) {
        _ = cdbus_malloc_set_mmap_threshold(Int32(clamping: threshold))
    }
}
