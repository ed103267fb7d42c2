/// The owner thread as a Swift task executor.
///
/// A task that prefers this executor (`withTaskExecutorPreference(connection.taskExecutor)`)
/// runs on the connection's own thread: sending a call and resuming after its reply then need
/// no hop to another thread, which is most of the latency an async call adds over a blocking C
/// call (see BENCHMARKS.md, D1). Code running there must not block: it holds up the
/// connection's I/O while it runs.
extension ConnectionLoop: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = SendableJob(UnownedJob(job))
        if !submit(.job(job)) {
            // The loop has stopped: run the task elsewhere rather than lose it.
            globalConcurrentExecutor.enqueue(job.unowned)
        }
    }
}

/// An unowned job moved across threads exactly once (from `enqueue` to the owner thread).
struct SendableJob: @unchecked Sendable {
    // Safe: the job is run exactly once, by whichever thread dequeues the closure holding it.
    let unowned: UnownedJob

    init(_ unowned: UnownedJob) { self.unowned = unowned }
}

extension Connection {
    /// The connection's own thread as a task executor.
    ///
    /// Run latency-sensitive work with `withTaskExecutorPreference(connection.taskExecutor) { … }`:
    /// its calls on this connection then send and resume on the connection's thread, with no
    /// thread hop. Keep such work short and non-blocking; it delays the connection's I/O.
    public var taskExecutor: any TaskExecutor { loop }
}
