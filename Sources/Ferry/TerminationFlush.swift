import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The process-wide part of flushing on exit: the clients to flush, the SIGINT/SIGTERM sources
/// and the `atexit` hook, each installed once.
enum TerminationFlush {
    /// How long a flush on the way out may take.
    static let deadline: Double = 10

    struct WeakClient {
        weak var client: FerryClient?
    }

    struct State {
        var clients: [WeakClient] = []
        var signalsInstalled = false
        var atexitInstalled = false
        /// Set once the process is on its way out (a signal arrived, or `exit` ran the hook).
        var leaving = false
        var exiting = false
        /// Chooses the exit status after a signal, from the signal and the flush's failure (nil:
        /// everything was handed over); nil exits with 128 + signal.
        var exitStatus: (@Sendable (Int32, FerryError?) -> Int32)?
    }

    /// The signal sources, kept alive for the life of the process. Written once, by the one
    /// caller that wins `signalsInstalled` under `state`'s lock, and never read: nothing races.
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    static let state = Mutex(State())

    /// Adds `client` to the clients flushed on the way out.
    private static func add(_ client: FerryClient, _ s: inout State) {
        s.clients.removeAll { $0.client == nil }
        if !s.clients.contains(where: { $0.client === client }) { s.clients.append(WeakClient(client: client)) }
    }

    /// Takes `client` out of the clients flushed on the way out.
    static func leave(_ client: FerryClient) {
        state.withLock { s in s.clients.removeAll { $0.client == nil || $0.client === client } }
    }

    /// Flushes `client` when the process exits normally.
    static func flushAtExit(_ client: FerryClient) {
        let install = state.withLock { s in
            add(client, &s)
            defer { s.atexitInstalled = true }
            return !s.atexitInstalled
        }
        if install { atexit { TerminationFlush.exitHook() } }
    }

    /// Flushes `client` on SIGINT/SIGTERM, then exits with 128 + signal, or with what
    /// `exitStatus` chooses when given.
    static func install(for client: FerryClient, exitStatus: (@Sendable (Int32, FerryError?) -> Int32)? = nil) {
        let install = state.withLock { s in
            add(client, &s)
            if let exitStatus { s.exitStatus = exitStatus }
            defer { s.signalsInstalled = true }
            return !s.signalsInstalled
        }
        guard install else { return }
        var made: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { TerminationFlush.terminate(signal: number) }
            source.resume()
            made.append(source)
        }
        sources = made
    }

    /// A signal arrived: flush every client (at most ``deadline`` seconds), then exit.
    static func terminate(signal number: Int32) {
        guard state.withLock({ s in defer { s.leaving = true }; return !s.leaving }) else { return }
        let (clients, choose) = state.withLock { ($0.clients.compactMap(\.client), $0.exitStatus) }
        let status: @Sendable (FerryError?) -> Int32 = { failure in choose?(number, failure) ?? 128 + number }
        DispatchQueue.global().asyncAfter(deadline: .now() + deadline) {
            exitOnce(status(FerryError(.timeout, "handing the data over took longer than \(Int(deadline)) s")))
        }
        Task.detached {
            var failure: FerryError?
            for client in clients {
                do {
                    try await client.flush()
                } catch {
                    if failure == nil { failure = FerryError.converting(error) }
                }
            }
            exitOnce(status(failure))
        }
    }

    /// The `atexit` hook: flush every client unless a signal already did, waiting at most
    /// ``deadline`` seconds.
    static func exitHook() {
        let clients: [FerryClient]? = state.withLock { s in
            defer { s.leaving = true }
            return s.leaving ? nil : s.clients.compactMap(\.client)
        }
        guard let clients, !clients.isEmpty else { return }
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            for client in clients where await client.hasPendingPromises || Application.of(client) != nil { try? await client.flush() }
            done.signal()
        }
        _ = done.wait(timeout: .now() + deadline)
    }

    /// Exits with `status` unless another thread is already exiting.
    private static func exitOnce(_ status: @autoclosure () -> Int32) {
        guard state.withLock({ s in defer { s.exiting = true }; return !s.exiting }) else { return }
        exit(status())
    }
}
