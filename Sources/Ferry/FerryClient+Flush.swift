import DBus
import Dispatch
import FerryModel
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension FerryClient {
    /// Hands every representation this client still promises to the broker, so readers get it
    /// after this process is gone (X11's `SAVE_TARGETS`), after sending the state of a registered
    /// ``Application``'s scenes (``Application/saveState()``). Representations whose items were
    /// replaced meanwhile are skipped; a write still under way is waited for, and its promises
    /// handed over too.
    /// - Parameter sceneSaveLimit: how long saving the scenes' state may take before the flush
    ///   goes on without it (a broker that does not answer must not hold up the process's exit).
    /// - Throws: the first `FerryError` of a representation that could not be handed over (the
    ///   others are still tried); else `.timeout` when the scenes' state was not saved within
    ///   `sceneSaveLimit`.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.Fulfill`, once per promised representation.
    public func flush(sceneSaveLimit: Duration = .seconds(5)) async throws(FerryError) {
        let scenesSaved = await Application.saveScenes(of: self, limit: sceneSaveLimit)
        var firstError: FerryError?
        await promises.writesUnderWay()
        for (id, wireID, path, representation) in promises.pending() {
            let type = representation.contentType.identifier
            do {
                let value = try await Self.fulfillValue(representation)
                _ = try await connection.call(destination: Self.brokerName, path: path, interface: Pasteboard.interface,
                                              member: "Fulfill", body: [.string(wireID), .string(type), .variant(value)],
                                              timeout: .seconds(600))
                promises.fulfilled(item: id, type: type)
            } catch {
                let failure = FerryError.converting(error)
                if failure.code == .notFound {
                    promises.fulfilled(item: id, type: type)
                } else if firstError == nil {
                    firstError = failure
                }
            }
        }
        if let firstError { throw firstError }
        if !scenesSaved { throw FerryError(.timeout, "the broker did not take the scenes' state within \(sceneSaveLimit)") }
    }

    /// Whether this client still promises representations the broker does not hold.
    public var hasPendingPromises: Bool { get async { promises.hasPending } }

    /// The `data` of a `Fulfill`: bytes up to 1 MiB, else a descriptor (the file itself, or a
    /// sealed memfd).
    static func fulfillValue(_ representation: ItemProvider.Representation) async throws -> DBusValue {
        if case .file(let url, _) = representation.source, !representation.isFolder {
            return .unixFD(try ItemEncoder.openForReading(url))
        }
        if case .stream(let writer) = representation.source {
            // Streamed into a pipe the broker reads to end of file: never held here.
            let pipe = try FileDescriptor.pipe()
            guard let raw = pipe.write.take() else { throw FerryError(.io, "cannot make a pipe") }
            Task { _ = try? await writer(raw) }
            return .unixFD(pipe.read)
        }
        let bytes: Data
        if case .data(let data) = representation.source { bytes = data } else { bytes = try await ItemEncoder.load(representation) }
        if bytes.count <= ItemEncoder.inlineMaximum { return .bytes([UInt8](bytes)) }
        return .unixFD(try FileDescriptor.memfd(name: "ferry-fulfill", contents: bytes, sealed: true))
    }

    /// Watches `Changed` on `pasteboard` (once per pasteboard) so providers the broker no longer
    /// needs are let go. Subscribed before this returns.
    func watchPromises(on pasteboard: Pasteboard) async {
        let path = pasteboard.path
        guard !promises.isWatching(path) else { return }
        let rule = MatchRule(sender: Self.brokerName, interface: Pasteboard.interface, member: "Changed", path: path)
        guard let subscription = try? await connection.subscribe(to: rule) else { return }
        let name = pasteboard.name
        let task = Task { [weak self] in
            do {
                for try await _ in subscription {
                    guard let self else { break }
                    await reconcilePromises(on: Pasteboard(source: .client(self), name: name, path: path))
                }
            } catch {}
            subscription.cancel()
        }
        promises.install(task, for: path)
    }

    /// Asks the broker which of this client's promised items it still lists (current items, and
    /// the general pasteboard's history) and retires the others.
    func reconcilePromises(on pasteboard: Pasteboard) async {
        guard let current = try? await pasteboard.items else { return }
        var live = Set(current.filter { !$0.promisedTypes.isEmpty }.map(\.id))
        if pasteboard.name == PasteboardName.general {
            guard let history = try? await pasteboard.history() else { return }
            for entry in history { live.formUnion(entry.items.filter { !$0.promisedTypes.isEmpty }.map(\.id)) }
        }
        promises.reconcile(path: pasteboard.path, live: live)
    }

    /// On SIGINT or SIGTERM: flush (for at most about 10 s), then exit with status 128 + signal.
    /// Also flushes on a normal `exit` (see ``flushOnExit()``). Idempotent.
    ///
    /// The signals are ignored first and then handled through Dispatch signal sources, so the
    /// flush runs as ordinary Swift code, not inside a signal handler.
    public func flushOnTermination() {
        flushOnExit()
        TerminationFlush.install(for: self)
    }

    /// ``flushOnTermination()``, exiting with the status `exitStatus` chooses from the signal and
    /// the flush's first failure (nil when everything was handed over; a `.timeout` when the
    /// flush took too long) — a tool that documents "hands the data over and exits" exits 0.
    public func flushOnTermination(exitStatus: @escaping @Sendable (_ signal: Int32, _ failure: FerryError?) -> Int32) {
        flushOnExit()
        TerminationFlush.install(for: self, exitStatus: exitStatus)
    }

    /// Flushes in an `atexit` hook when the process exits normally (returning from `main`, or
    /// `exit`), for at most about 10 s. ``register(appID:manifest:)`` calls it; idempotent.
    ///
    /// The hook waits on the calling thread while the flush runs on other threads; a process
    /// that exits from a task of the connection's own executor would wait the full 10 s.
    public func flushOnExit() {
        guard !state.withLock({ $0.flushedByService }) else { return }
        TerminationFlush.flushAtExit(self)
    }
}
