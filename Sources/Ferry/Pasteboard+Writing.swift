import DBus
import FerryModel
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Pasteboard {
    /// Replaces the pasteboard's items (`UIPasteboard.setItemProviders(_:localOnly:expirationDate:)`).
    ///
    /// Small bytes travel inline, large ones and files as descriptors the broker reads before it
    /// answers; loaders are promised when the client is a registered app (it then serves them
    /// until ``FerryClient/flush()``), otherwise loaded now.
    /// - Parameters:
    ///   - providers: the items, 0–1000.
    ///   - localOnly: the items never leave this machine.
    ///   - expirationDate: after it the items are gone for everyone.
    ///   - sensitive: never persisted, never in history (passwords).
    ///   - origin: where the items came from outside Ferry (`desktop:CLIPBOARD`), kept with them
    ///     and given back as ``PasteboardItem/origin``; 1–64 bytes of printable ASCII.
    ///   - progress: told, at most ten times a second while the broker reads the items' files,
    ///     how many of their bytes it has read so far. The broker reads the open file this
    ///     process hands it, so its offset is this process's to see; nothing is told when no file
    ///     is handed over.
    /// - Returns: the new change count.
    /// - Throws: `FerryError`: `.invalidArgument` (an empty item, a bad type, a bad origin), `.tooLarge`,
    ///   `.notFound` / `.permissionDenied` / `.io` for a file that cannot be opened, what a
    ///   loader throws, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.SetItems`.
    @discardableResult
    public func setItemProviders(_ providers: [ItemProvider], localOnly: Bool = false, expirationDate: Date? = nil,
                                 sensitive: Bool = false, origin: String? = nil,
                                 progress: (@Sendable (UInt64) -> Void)? = nil) async throws(FerryError) -> UInt64 {
        try await write(providers, localOnly: localOnly, expirationDate: expirationDate, sensitive: sensitive,
                        origin: origin, append: false, drag: false, progress: progress)
    }

    /// Writes the items of a drag on its drag pasteboard, added after the current ones when
    /// `append` (`SetItems` option `append`): large representations are promised when the client
    /// is registered (``DragPromises``). The drag pasteboard is not watched for `Changed`: its
    /// promises are let go when the drag ends.
    /// - Returns: the new change count.
    /// - Throws: what ``setItemProviders(_:localOnly:expirationDate:sensitive:origin:progress:)`` throws.
    @discardableResult
    func writeDragItems(_ providers: [ItemProvider], append: Bool) async throws(FerryError) -> UInt64 {
        try await write(providers, localOnly: false, expirationDate: nil, sensitive: false, origin: nil, append: append,
                        drag: true, progress: nil)
    }

    /// `SetItems`, replacing or (`append`, drag pasteboards only) adding; promised providers are
    /// kept for `ProvideRepresentation`. A `drag` write promises large representations and does
    /// not watch `Changed` (other writes do, to let promised providers go once replaced).
    private func write(_ providers: [ItemProvider], localOnly: Bool, expirationDate: Date?, sensitive: Bool, origin: String?,
                       append: Bool, drag: Bool, progress: (@Sendable (UInt64) -> Void)?) async throws(FerryError) -> UInt64 {
        let client = try await client
        var encoder = ItemEncoder(canPromise: client.isRegistered)
        var encoded: [ItemEncoder.Encoded] = []
        for provider in providers {
            // A drag's large representations are promised (the original provider serves them).
            let provider = drag && client.isRegistered ? DragPromises.encodable(provider) : provider
            encoded.append(try await encoder.encode(provider, localOnly: localOnly, expirationDate: expirationDate,
                                                    sensitive: sensitive, origin: origin))
        }
        let promising = encoded.contains { !$0.promised.isEmpty }
        if promising && !drag { await client.watchPromises(on: self) }
        var options: [String: DBusValue] = [:]
        if append { options["append"] = .boolean(true) }
        let body: [DBusValue] = [.array(of: "a{sv}", encoded.map(\.dictionary)), options.dbusValue]
        let files = encoder.files
        guard promising else {
            return try await setItems(body, count: providers.count, append: append, files: files, progress: progress).changeCount
        }
        return try await client.promises.writing { () async throws(FerryError) -> UInt64 in
            let (changeCount, ids) = try await setItems(body, count: providers.count, append: append, files: files,
                                                        progress: progress)
            for (index, item) in encoded.enumerated() where !item.promised.isEmpty {
                client.promises.keep(providers[index], id: ids[index], path: path, promised: item.promised)
            }
            return changeCount
        }
    }

    /// Calls `SetItems` with `body` (`count` items) and returns the new change count and the ids
    /// the broker gave the items, in order.
    private func setItems(_ body: [DBusValue], count: Int, append: Bool, files: [FileDescriptor],
                          progress: (@Sendable (UInt64) -> Void)?) async throws(FerryError) -> (changeCount: UInt64, ids: [String]) {
        let reply: [DBusValue]
        if let progress, !files.isEmpty {
            reply = try await calling("SetItems", body, timeout: .seconds(600), reading: files, progress: progress)
        } else {
            reply = try await call("SetItems", body, timeout: .seconds(600))
        }
        guard reply.count == 2, case .uint64(let changeCount) = reply[0],
              let written = try? reply[1].get([String].self),
              // An append may answer every item's id or only the new ones: the new ones are last.
              case let ids = append ? Array(written.suffix(count)) : written, ids.count == count else {
            throw FerryError(.bus, "Pasteboard1.SetItems answered with an unexpected reply")
        }
        return (changeCount, ids)
    }

    /// Calls `member` while telling `progress` how far the broker has read `files` (the sum of
    /// their offsets: the broker reads the open files themselves, from their current offsets).
    private func calling(_ member: MemberName, _ body: [DBusValue], timeout: Duration, reading files: [FileDescriptor],
                         progress: @escaping @Sendable (UInt64) -> Void) async throws(FerryError) -> [DBusValue] {
        let outcome = await withTaskGroup(of: Result<[DBusValue], FerryError>?.self) { group in
            group.addTask {
                do throws(FerryError) {
                    return .success(try await call(member, body, timeout: timeout))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                var told: UInt64 = 0
                while !Task.isCancelled {
                    let read = files.reduce(UInt64(0)) { sum, file in
                        sum + UInt64(max(0, (try? file.withRawValue { lseek($0, 0, SEEK_CUR) }) ?? 0))
                    }
                    if read != told {
                        told = read
                        progress(read)
                    }
                    try? await Task.sleep(for: .milliseconds(100))
                }
                return nil
            }
            var outcome: Result<[DBusValue], FerryError>?
            for await next in group {
                guard let next else { continue }
                outcome = next
                group.cancelAll()
            }
            return outcome
        }
        guard let outcome else { throw FerryError(.bus, "Pasteboard1.\(member) ended without a reply") }
        return try outcome.get()
    }

    /// Replaces the items with one text item (`public.utf8-plain-text`). `UIPasteboard.string`'s setter.
    @discardableResult
    public func setString(_ string: String) async throws(FerryError) -> UInt64 {
        var provider = ItemProvider()
        provider.registerDataRepresentation(for: .utf8PlainText, data: Data(string.utf8))
        return try await setItemProviders([provider])
    }

    /// Replaces the items with one text item per string. `UIPasteboard.strings`' setter.
    @discardableResult
    public func setStrings(_ strings: [String]) async throws(FerryError) -> UInt64 {
        try await setItemProviders(strings.map { string in
            var provider = ItemProvider()
            provider.registerDataRepresentation(for: .utf8PlainText, data: Data(string.utf8))
            return provider
        })
    }

    /// Replaces the items with one URL item: `public.file-url` or `public.url`, then the URL as
    /// plain text. `UIPasteboard.url`'s setter.
    @discardableResult
    public func setURL(_ url: URL) async throws(FerryError) -> UInt64 {
        var provider = ItemProvider()
        let text = Data(url.absoluteString.utf8)
        provider.registerDataRepresentation(for: url.isFileURL ? .fileURL : .url, data: text)
        provider.registerDataRepresentation(for: .utf8PlainText, data: text)
        return try await setItemProviders([provider])
    }

    /// Replaces the items with one item holding `data` as `type`.
    /// `UIPasteboard.setData(_:forPasteboardType:)`.
    @discardableResult
    public func setData(_ data: Data, forType type: ContentType) async throws(FerryError) -> UInt64 {
        var provider = ItemProvider()
        provider.registerDataRepresentation(for: type, data: data)
        return try await setItemProviders([provider])
    }

    /// Removes every item (the general pasteboard's items enter the history).
    /// - Returns: the new change count.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.Clear`.
    @discardableResult
    public func clear() async throws(FerryError) -> UInt64 {
        let reply = try await call("Clear")
        guard case .uint64(let count)? = reply.first else { throw FerryError(.bus, "Pasteboard1.Clear answered no change count") }
        return count
    }
}
