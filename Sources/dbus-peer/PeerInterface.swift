import CZlib
import DBus
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `org.ferry.Peer1` at `/org/ferry/Peer`: the interface the interop and two-process tests speak.
///
/// The python-dbus peer in `Tests/DBusTests/Peers/python_peer.py` exports the same interface, so
/// one suite can check that the Swift layer and an independent implementation agree.
enum PeerInterface {
    static let path: ObjectPath = "/org/ferry/Peer"
    static let name: InterfaceName = "org.ferry.Peer1"

    /// The interface, with `log` called once per incoming call (`member`, caller's unique name).
    static func make(log: @escaping @Sendable (MethodCall) async -> Void, quit: @escaping @Sendable () -> Void) -> Interface {
        let label = Mutex("initial")
        return Interface(name) {
            Method("Echo", in: ["value": "v"], out: ["value": "v"]) { call in
                await log(call)
                return call.arguments
            }
            Method("Add", in: ["a": "x", "b": "x"], out: ["sum": "x"]) { call in
                await log(call)
                let (sum, overflow) = try call.argument(0, as: Int64.self)
                    .addingReportingOverflow(call.argument(1, as: Int64.self))
                if overflow { throw DBusError(.invalidArgs, "the sum does not fit in 64 bits") }
                return [.int64(sum)]
            }
            Method("Join", in: ["parts": "as"], out: ["joined": "s"]) { call in
                await log(call)
                return [.string(try call.argument(0, as: [String].self).joined(separator: "|"))]
            }
            Method("Signatures", in: ["options": "a{sv}"], out: ["signatures": "a{ss}"]) { call in
                await log(call)
                let options = try call.argument(0, as: VariantDictionary.self)
                let entries = options.sorted { $0.key < $1.key }.map {
                    DBusDictionaryEntry(key: .string($0.key), value: .string($0.value.unwrappingVariants.signature.rawValue))
                }
                return [.dictionary(key: .string, value: .string, entries: entries)]
            }
            Method("EchoStruct", in: ["value": "(sixay)"], out: ["value": "(sixay)"]) { call in
                await log(call)
                return call.arguments
            }
            Method("Fail", in: ["name": "s", "message": "s"]) { call in
                await log(call)
                let name = try ErrorName(try call.argument(0, as: String.self))
                throw DBusError(name, try call.argument(1, as: String.self))
            }
            Method("ReadFD", in: ["fd": "h"], out: ["size": "t", "crc32": "u"]) { call in
                await log(call)
                let fd = try call.argument(0, as: FileDescriptor.self)
                let (size, crc) = try fd.withRawValue { try readToEnd($0) }
                fd.close()
                return [.uint64(size), .uint32(crc)]
            }
            Method("MakeFD", in: ["size": "t"], out: ["fd": "h"]) { call in
                await log(call)
                return [.unixFD(try makePatternFD(size: try call.argument(0, as: UInt64.self)))]
            }
            Method("Emit", in: ["text": "s"]) { call in
                await log(call)
                try call.connection.emit(path: path, interface: name, member: "Pinged", body: call.arguments)
                return []
            }
            Method("Quit") { call in
                await log(call)
                quit()
                return []
            }
            Signal("Pinged", ["text": "s"])
            Property("Version", "u", get: { _ in .uint32(1) })
            Property("Label", "s", get: { _ in .string(label.withLock { $0 }) },
                     set: { _, value in label.withLock { $0 = (try? value.get(String.self)) ?? $0 } })
        }
    }

    /// Reads `fd` from offset 0 (when seekable) to its end: the byte count and CRC-32 (IEEE).
    static func readToEnd(_ fd: Int32) throws -> (UInt64, UInt32) {
        _ = lseek(fd, 0, SEEK_SET)
        var crc = CRC32()
        var total: UInt64 = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw DBusError(.failed, "read failed: errno \(errno)")
            }
            if n == 0 { return (total, crc.value) }
            buffer.withUnsafeBufferPointer { crc.update(UnsafeBufferPointer(rebasing: $0[0..<n])) }
            total += UInt64(n)
        }
    }

    /// A memfd holding `size` bytes of the pattern 0, 1, …, 255, 0, 1, …
    static func makePatternFD(size: UInt64) throws -> FileDescriptor {
        guard size <= 1 << 32 else { throw DBusError(.limitsExceeded, "at most 4 GiB") }
        let fd = try FileDescriptor.memfd(name: "ferry-peer", contents: [UInt8](), sealed: false)
        let chunk = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0) }
        var left = Int(size)
        while left > 0 {
            let n = min(left, chunk.count)
            try fd.write(all: chunk[0..<n])
            left -= n
        }
        try fd.withRawValue { _ = lseek($0, 0, SEEK_SET) }
        return fd
    }
}

/// CRC-32 (IEEE 802.3), computed by the system zlib a chunk at a time.
struct CRC32 {
    private(set) var value: UInt32 = 0

    mutating func update(_ bytes: UnsafeBufferPointer<UInt8>) {
        value = UInt32(crc32(uLong(value), bytes.baseAddress, uInt(bytes.count)))
    }
}
