import DBus
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Pasteboard {
    /// Which of `patterns` each item's text matches, without reading it (not a paste).
    /// - Returns: per item, in order, the patterns found in its best plain-text or URL
    ///   representation (empty when it has none).
    ///
    /// D-Bus: `org.ferry.Pasteboard1.DetectPatterns`.
    public func detectPatterns(_ patterns: Set<DetectionPattern>) async throws(FerryError) -> [Set<DetectionPattern>] {
        let names = patterns.map(\.rawValue).sorted()
        let reply = try await call("DetectPatterns", [.array(of: .string, names.map(DBusValue.string))])
        guard let value = reply.first, let lists = try? value.get([[String]].self) else {
            throw FerryError(.bus, "Pasteboard1.DetectPatterns answered with an unexpected reply")
        }
        return lists.map { Set($0.compactMap(DetectionPattern.init(rawValue:))) }
    }

    /// The general pasteboard's previous contents, newest first. Not a paste.
    /// - Throws: `FerryError` `.notFound` on a pasteboard that keeps no history.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.History`.
    public func history() async throws(FerryError) -> [PasteboardHistoryEntry] {
        let reply = try await call("History")
        guard let value = reply.first else { return [] }
        let entries = try FerryError.bridgingSync { try WireBridge.dictionaries(value) }
        var result: [PasteboardHistoryEntry] = []
        for entry in entries {
            guard let count = try? entry.value(forKey: "changeCount", as: UInt64.self),
                  let replaced = try? entry.value(forKey: "replacedAt", as: Int64.self),
                  let items = entry["items"] else {
                throw FerryError(.bus, "Pasteboard1.History answered a malformed entry")
            }
            result.append(PasteboardHistoryEntry(changeCount: count, replacedAt: WireBridge.date(microseconds: replaced),
                                                 items: try Self.items(from: items)))
        }
        return result
    }

    /// Makes history entry `index` (0 = newest) the current items again.
    /// - Returns: the new change count.
    /// - Throws: `FerryError` `.notFound` for an index out of range or a pasteboard without history.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.RestoreHistory`.
    @discardableResult
    public func restoreHistory(_ index: Int) async throws(FerryError) -> UInt64 {
        guard let index = UInt32(exactly: index) else { throw FerryError(.notFound, "no history entry \(index)") }
        let reply = try await call("RestoreHistory", [.uint32(index)])
        guard case .uint64(let count)? = reply.first else {
            throw FerryError(.bus, "Pasteboard1.RestoreHistory answered no change count")
        }
        return count
    }

    /// Forgets the history entries at `indexes` (0 = newest, all counted before any goes), with
    /// their bytes.
    /// - Throws: `FerryError` `.notFound` for an index out of range (nothing is deleted then) or
    ///   a pasteboard without history; `.invalidArgument` for no index.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.DeleteHistory`.
    public func deleteHistory(_ indexes: [Int]) async throws(FerryError) {
        var entries: [DBusValue] = []
        for index in indexes {
            guard let entry = UInt32(exactly: index) else { throw FerryError(.notFound, "no history entry \(index)") }
            entries.append(.uint32(entry))
        }
        _ = try await call("DeleteHistory", [.array(element: .uint32, elements: entries)])
    }

    /// Forgets the general pasteboard's history.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.ClearHistory`.
    public func clearHistory() async throws(FerryError) {
        _ = try await call("ClearHistory")
    }

    /// The pasteboard's change counts as it changes (write, clear, restore, expiry, removal),
    /// subscribed before this returns, so no change after the call is missed. The stream ends
    /// when the connection closes; stop iterating (or cancel the task) to unsubscribe.
    ///
    /// D-Bus: the `org.ferry.Pasteboard1.Changed` signal.
    public func changes() async throws(FerryError) -> AsyncThrowingStream<UInt64, any Error> {
        let client = try await client
        let rule = MatchRule(sender: FerryClient.brokerName, interface: Self.interface, member: "Changed", path: path)
        let subscription = try await FerryError.bridging { try await client.connection.subscribe(to: rule) }
        let (stream, continuation) = AsyncThrowingStream<UInt64, any Error>.makeStream()
        let forward = Task {
            do {
                for try await signal in subscription {
                    if case .uint64(let count)? = try? signal.body.first { continuation.yield(count) }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: FerryError.converting(error))
            }
        }
        continuation.onTermination = { _ in
            forward.cancel()
            subscription.cancel()
        }
        return stream
    }
}
