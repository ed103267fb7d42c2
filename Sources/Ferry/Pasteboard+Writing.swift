import DBus
import FerryModel
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
    /// - Returns: the new change count.
    /// - Throws: `FerryError`: `.invalidArgument` (an empty item, a bad type), `.tooLarge`,
    ///   `.notFound` / `.permissionDenied` / `.io` for a file that cannot be opened, what a
    ///   loader throws, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.SetItems`.
    @discardableResult
    public func setItemProviders(_ providers: [ItemProvider], localOnly: Bool = false, expirationDate: Date? = nil,
                                 sensitive: Bool = false) async throws(FerryError) -> UInt64 {
        let client = try await client
        var encoder = ItemEncoder(canPromise: client.isRegistered)
        var encoded: [ItemEncoder.Encoded] = []
        for provider in providers {
            encoded.append(try await encoder.encode(provider, localOnly: localOnly, expirationDate: expirationDate,
                                                    sensitive: sensitive))
        }
        let promising = encoded.contains { !$0.promised.isEmpty }
        if promising { await client.watchPromises(on: self) }
        let reply = try await call("SetItems", [.array(of: "a{sv}", encoded.map(\.dictionary)),
                                                [String: DBusValue]().dbusValue], timeout: .seconds(600))
        guard reply.count == 2, case .uint64(let changeCount) = reply[0],
              let ids = try? reply[1].get([String].self), ids.count == providers.count else {
            throw FerryError(.bus, "Pasteboard1.SetItems answered with an unexpected reply")
        }
        if promising {
            for (index, item) in encoded.enumerated() where !item.promised.isEmpty {
                await client.promises.keep(providers[index], id: ids[index], path: path, promised: item.promised)
            }
        }
        return changeCount
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
