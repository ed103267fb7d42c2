import DBus
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Pasteboard {
    /// Reads one representation: a paste. The item's highest-fidelity representation conforming
    /// to `type` is delivered (``PasteboardRead/deliveredType`` says which).
    /// - Parameters:
    ///   - item: the item's index.
    ///   - type: the type wanted (a supertype such as `public.image` is fine).
    ///   - userAction: the app reads because the user asked it to (a paste command, a drop).
    ///   - preferFD: answer with a descriptor even for small data.
    ///   - changeCount: read only while the pasteboard's change count is still this.
    ///   - historyEntry: read from this entry of ``history()`` (0 the newest) instead of the
    ///     current items; the general pasteboard only. Still a paste (policy, log).
    /// - Returns: the bytes inline (small held data, and a small promise its source answered
    ///   within 50 ms) or a descriptor to read to end of file; for other promised data a pipe
    ///   from the source app, with a transfer to ``PasteboardRead/finish()``.
    /// - Throws: `FerryError`: `.notFound` (no such item, nothing conforming, the pasteboard
    ///   changed, no such history entry), `.permissionDenied` (paste policy), `.unavailable`
    ///   (the source is gone), `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.Read`.
    public func read(item: Int = 0, type: ContentType, userAction: Bool = false, preferFD: Bool = false,
                     changeCount: UInt64? = nil, historyEntry: Int? = nil) async throws(FerryError) -> PasteboardRead {
        guard let index = UInt32(exactly: item) else { throw FerryError(.notFound, "no item \(item)") }
        var options: [String: DBusValue] = [:]
        if let historyEntry {
            guard let entry = UInt32(exactly: historyEntry) else { throw FerryError(.notFound, "no history entry \(historyEntry)") }
            options["history-entry"] = .uint32(entry)
        }
        if userAction { options["user-action"] = .boolean(true) }
        if preferFD { options["fd"] = .boolean(true) }
        if let changeCount { options["change-count"] = .uint64(changeCount) }
        let client = try await client
        let reply = try await FerryError.bridging {
            try await client.callHot(path: path, interface: Self.interface, member: Self.readMember,
                                     arguments: index, type.identifier, options, timeout: .seconds(90))
        }
        let delivered: String, size: Int64, data: DBusValue, transfer: String
        do {
            (delivered, size, data, transfer) = try reply.arguments(as: String.self, Int64.self, DBusValue.self,
                                                                    String.self)
        } catch {
            throw FerryError(.bus, "Pasteboard1.Read answered with an unexpected signature")
        }
        let content: PasteboardRead.Content
        switch data.unwrappingVariants {
        case .bytes(let bytes): content = .bytes(bytes)
        case .unixFD(let fd): content = .stream(fd, transfer: transfer.isEmpty ? nil : transfer)
        default: throw FerryError(.bus, "Pasteboard1.Read answered neither bytes nor a descriptor")
        }
        guard ContentType.isValidIdentifier(delivered) else {
            throw FerryError(.bus, "Pasteboard1.Read delivered a malformed type \"\(delivered)\"")
        }
        return PasteboardRead(deliveredType: delivered, size: size < 0 ? nil : size, content: content,
                              connection: await client.hotConnection(), path: path)
    }

    /// The bytes of item `item` in `type` (or the best representation conforming to it); nil when
    /// there is no such item or nothing conforms. A paste (`UIPasteboard.data(forPasteboardType:)`).
    /// - Throws: `FerryError` other than `.notFound`: `.permissionDenied`, `.unavailable`, `.noBroker`, …
    public func data(forType type: ContentType, item: Int = 0, userAction: Bool = false) async throws(FerryError) -> Data? {
        try await loaded(forType: type, item: item, userAction: userAction).map { Data($0.bytes) }
    }

    /// The first item's text (a plain-text representation, UTF-8 or UTF-16), nil when it has none.
    /// A paste (`UIPasteboard.string`).
    public var string: String? {
        get async throws(FerryError) {
            guard let loaded = try await loaded(forType: .plainText, item: 0, userAction: false) else { return nil }
            return Self.decodeText(loaded.bytes, type: loaded.type)
        }
    }

    /// Every item's text, for the items that have one. A paste (`UIPasteboard.strings`).
    public var strings: [String] {
        get async throws(FerryError) {
            var result: [String] = []
            for index in 0..<(try await numberOfItems) {
                if let loaded = try await loaded(forType: .plainText, item: index, userAction: false) {
                    result.append(Self.decodeText(loaded.bytes, type: loaded.type))
                }
            }
            return result
        }
    }

    /// The first item's URL, nil when it has none. A paste (`UIPasteboard.url`).
    public var url: URL? {
        get async throws(FerryError) {
            guard let loaded = try await loaded(forType: .url, item: 0, userAction: false) else { return nil }
            let text = String(decoding: loaded.bytes, as: UTF8.self)
            let trimmed = text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed()
            return URL(string: String(trimmed))
        }
    }

    /// The items as item providers whose loaders read lazily (a paste for each load, made with
    /// `user-action` and only while the pasteboard still holds these items).
    /// `UIPasteboard.itemProviders`.
    public var itemProviders: [ItemProvider] {
        get async throws(FerryError) {
            let changeCount = try await self.changeCount
            let items = try await self.items
            let pasteboard = self
            return items.enumerated().map { index, item in
                var provider = ItemProvider()
                provider.suggestedName = item.metadata.suggestedName
                provider.preferredPresentationSize = item.metadata.preferredPresentationSize
                for info in item.metadata.representations {
                    let type = info.contentType
                    provider.registerDataRepresentation(for: type, visibility: info.visibility,
                                                        estimatedSize: info.estimatedSize) { progress in
                        let read = try await pasteboard.read(item: index, type: type, userAction: true,
                                                             changeCount: changeCount)
                        return Data(try await read.bytes(progress: progress))
                    }
                }
                return provider
            }
        }
    }

    /// The bytes and delivered type, nil on NotFound.
    func loaded(forType type: ContentType, item: Int, userAction: Bool)
        async throws(FerryError) -> (bytes: [UInt8], type: String)? {
        do {
            let read = try await read(item: item, type: type, userAction: userAction)
            return (try await read.bytes(), read.deliveredTypeIdentifier)
        } catch where error.code == .notFound {
            return nil
        }
    }

    /// Text from its bytes: UTF-16 (with or without a byte-order mark, little-endian by default)
    /// for `public.utf16-plain-text`, else UTF-8.
    static func decodeText(_ bytes: [UInt8], type: String) -> String {
        guard type.lowercased() == ContentType.utf16PlainText.identifier else { return String(decoding: bytes, as: UTF8.self) }
        var body = bytes[...]
        var bigEndian = false
        if body.starts(with: [0xFE, 0xFF]) { bigEndian = true; body = body.dropFirst(2) }
        else if body.starts(with: [0xFF, 0xFE]) { body = body.dropFirst(2) }
        var units: [UInt16] = []
        units.reserveCapacity(body.count / 2)
        var iterator = body.makeIterator()
        while let a = iterator.next(), let b = iterator.next() {
            units.append(bigEndian ? UInt16(a) << 8 | UInt16(b) : UInt16(b) << 8 | UInt16(a))
        }
        return String(decoding: units, as: UTF16.self)
    }
}
