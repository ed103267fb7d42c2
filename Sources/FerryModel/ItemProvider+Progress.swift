import Synchronization

extension ItemProvider {
    /// Progress of one load, and its cancellation switch (Apple returns an `NSProgress`).
    ///
    /// Loaders update ``completedUnitCount`` / ``totalUnitCount`` and may poll ``isCancelled``.
    /// Cancelling the Swift task that loads cancels this progress too.
    public final class Progress: Sendable {
        private struct State {
            var total: Int64
            var completed: Int64 = 0
            var cancelled = false
        }

        private let state: Mutex<State>
        private let onChange: (@Sendable (_ completed: Int64, _ total: Int64) -> Void)?

        /// Makes a progress.
        /// - Parameters:
        ///   - totalUnitCount: the expected number of units (bytes), 0 when unknown.
        ///   - onChange: called (outside any lock) after each change of the counts.
        public init(totalUnitCount: Int64 = 0,
                    onChange: (@Sendable (_ completed: Int64, _ total: Int64) -> Void)? = nil) {
            self.state = Mutex(State(total: totalUnitCount))
            self.onChange = onChange
        }

        /// The expected number of units (bytes); 0 when unknown.
        public var totalUnitCount: Int64 {
            get { state.withLock { $0.total } }
            set { update { $0.total = newValue } }
        }

        /// The units done so far.
        public var completedUnitCount: Int64 {
            get { state.withLock { $0.completed } }
            set { update { $0.completed = newValue } }
        }

        /// Completed over total, in 0…1; 0 while the total is unknown.
        public var fractionCompleted: Double {
            state.withLock { s in s.total > 0 ? min(1, Double(s.completed) / Double(s.total)) : 0 }
        }

        /// Whether ``cancel()`` was called or the loading task was cancelled.
        public var isCancelled: Bool { state.withLock { $0.cancelled } }

        /// Asks the load to stop; it then fails with `FerryModelError` `.cancelled`.
        public func cancel() { state.withLock { $0.cancelled = true } }

        /// Marks every unit done (the total becomes the completed count when it was unknown).
        func finish(byteCount: Int64) {
            update { s in
                if s.total <= 0 { s.total = byteCount }
                s.completed = s.total
            }
        }

        private func update(_ change: (inout State) -> Void) {
            let (completed, total) = state.withLock { s in
                change(&s)
                return (s.completed, s.total)
            }
            onChange?(completed, total)
        }
    }
}
