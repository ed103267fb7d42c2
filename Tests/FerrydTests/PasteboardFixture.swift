import DBus
import FerryTestSupport
import Foundation
import Testing

/// Helpers for talking to `org.ferry.Pasteboard1` objects of a running ferryd.
extension FerrydFixture {
    static let pasteboardInterface: InterfaceName = "org.ferry.Pasteboard1"
    static let general: ObjectPath = "/org/ferry/Pasteboard/general"

    /// Calls a Pasteboard1 method.
    static func pasteboard(_ connection: Connection, _ member: MemberName, _ body: [DBusValue] = [],
                           at path: ObjectPath = general, timeout: Duration = .seconds(20)) async throws -> [DBusValue] {
        try await connection.call(destination: broker, path: path, interface: pasteboardInterface, member: member,
                                  body: body, timeout: timeout)
    }

    /// A representation dictionary with inline bytes.
    static func representation(_ type: String, _ bytes: [UInt8], visibility: String? = nil) -> DBusValue {
        var entries: VariantDictionary = ["type": .string(type), "data": .bytes(bytes)]
        if let visibility { entries["visibility"] = .string(visibility) }
        return entries.dbusValue
    }

    static func representation(_ type: String, _ text: String) -> DBusValue {
        representation(type, Array(text.utf8))
    }

    /// A representation dictionary whose bytes come from an fd (a byte range when given).
    static func representation(_ type: String, fd: FileDescriptor, offset: UInt64? = nil, length: UInt64? = nil) -> DBusValue {
        var entries: VariantDictionary = ["type": .string(type), "fd": .unixFD(fd)]
        if let offset { entries["offset"] = .uint64(offset) }
        if let length { entries["length"] = .uint64(length) }
        return entries.dbusValue
    }

    /// A promised representation dictionary.
    static func promised(_ type: String, estimatedSize: Int64? = nil) -> DBusValue {
        var entries: VariantDictionary = ["type": .string(type), "promised": .boolean(true)]
        if let estimatedSize { entries["estimatedSize"] = .int64(estimatedSize) }
        return entries.dbusValue
    }

    /// An item dictionary: representations (`av` of `a{sv}`) plus options.
    static func item(_ representations: [DBusValue], _ options: VariantDictionary = [:]) -> DBusValue {
        var entries = options
        entries["representations"] = .array(element: .variant, elements: representations.map { .variant($0) })
        return entries.dbusValue
    }

    /// `SetItems`: the new change count and the item ids.
    @discardableResult
    static func setItems(_ connection: Connection, _ items: [DBusValue], at path: ObjectPath = general,
                         timeout: Duration = .seconds(20)) async throws -> (changeCount: UInt64, ids: [String]) {
        let reply = try await pasteboard(connection, "SetItems", [.array(element: "a{sv}", elements: items),
                                                                  .variantDictionary(["future-option": .boolean(true)])],
                                         at: path, timeout: timeout)
        return (try reply[0].get(UInt64.self), try reply[1].get([String].self))
    }

    /// `Items`.
    static func items(_ connection: Connection, at path: ObjectPath = general) async throws -> [VariantDictionary] {
        try await pasteboard(connection, "Items", at: path)[0].get([VariantDictionary].self)
    }

    /// The types of an item's metadata, in order.
    static func types(_ item: VariantDictionary) throws -> [String] {
        try representations(item).map { try $0.value(forKey: "type", as: String.self) }
    }

    static func representations(_ item: VariantDictionary) throws -> [VariantDictionary] {
        guard case .array(_, let elements)? = item["representations"] else { return [] }
        return try elements.map { try VariantDictionary(dbusValue: $0.unwrappingVariants) }
    }

    /// One `Read`'s answer.
    struct ReadResult {
        var deliveredType: String
        var size: Int64
        var data: DBusValue
        var transfer: String

        /// Whether the bytes came inline.
        var isInline: Bool { if case .bytes = data { true } else { false } }

        /// The bytes, inline or read from the fd to end of file (on a thread of its own: the
        /// writer may be a task of this very process, which needs the cooperative pool).
        func bytes() async throws -> [UInt8] {
            switch data {
            case .bytes(let bytes): return bytes
            case .unixFD(let fd):
                return try await withCheckedThrowingContinuation { continuation in
                    FerrydFixture.readers.async { continuation.resume(with: Result { try fd.readAll() }) }
                }
            default: throw DBusError(.invalidArgs, "Read returned \(data.signature)")
            }
        }

        var descriptor: FileDescriptor? { if case .unixFD(let fd) = data { fd } else { nil } }
    }

    /// Where blocking reads of pipes run (an overcommit queue: never short of threads).
    static let readers = DispatchQueue(label: "ferryd-tests.readers", attributes: .concurrent)

    /// `Read`.
    static func read(_ connection: Connection, _ index: UInt32, _ type: String, _ options: VariantDictionary = [:],
                     at path: ObjectPath = general) async throws -> ReadResult {
        let reply = try await pasteboard(connection, "Read", [.uint32(index), .string(type), options.dbusValue], at: path)
        return ReadResult(deliveredType: try reply[0].get(String.self), size: try reply[1].get(Int64.self),
                          data: reply[2].unwrappingVariants, transfer: try reply[3].get(String.self))
    }

    /// The error name and message a call fails with (nil when it succeeds).
    static func failure(_ body: () async throws -> Void) async -> (name: String, message: String)? {
        do {
            try await body()
            return nil
        } catch let error as DBusError {
            return (error.name.rawValue, error.message)
        } catch {
            return ("unexpected: \(error)", "")
        }
    }

    /// `count` recognizable bytes.
    static func pattern(_ count: Int, seed: UInt8 = 3) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: Int(seed) &+ $0 &* 31 &+ $0 >> 9) }
    }

    /// A temporary file holding `bytes`, opened read-only.
    static func file(_ bytes: [UInt8]) throws -> FileDescriptor {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ferryd-fd-\(UUID().uuidString)").path
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw CocoaError(.fileWriteUnknown)
        }
        defer { unlink(path) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CocoaError(.fileReadUnknown) }
        return FileDescriptor(taking: fd)
    }

    /// Subscribes to a pasteboard's `Changed` signal.
    static func changes(_ connection: Connection, at path: ObjectPath = general) async throws -> SignalSubscription {
        try await connection.subscribe(to: MatchRule(sender: broker, interface: pasteboardInterface, member: "Changed",
                                                     path: path))
    }

    /// The next signal of a subscription, within `timeout`.
    static func next(_ subscription: SignalSubscription, timeout: Duration = .seconds(10)) async throws -> Message? {
        try await withThrowingTaskGroup(of: Message?.self) { group in
            group.addTask {
                for try await message in subscription { return message }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
