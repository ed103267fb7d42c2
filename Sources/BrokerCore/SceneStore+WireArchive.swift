#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel

extension SceneStore {
    /// The bytes the scene store keeps for a ``WireValue`` (a session's userInfo, restoration
    /// activity and pending options, in their wire shapes): exact for every wire type, so a
    /// `.double(2.0)` stays a double (a property list would read it back as an integer).
    ///
    /// Layout: the version byte `1`, then the value: a tag byte, then its payload, integers
    /// little-endian, lengths and counts `UInt32`: `b` bool (one byte 0/1), `i` int32, `x` int64,
    /// `u` uint32, `t` uint64, `d` double (IEEE bits), `s` string (length, UTF-8), `y` bytes
    /// (length, bytes), `S` strings (count, each as a string), `v` array (count, values),
    /// `e` dictionary (count, each a key as a string then a value).
    enum WireArchive {
        static let version: UInt8 = 1

        /// The bytes for `value`.
        static func encode(_ value: WireValue) -> Data {
            var out: [UInt8] = [version]
            append(value, to: &out)
            return Data(out)
        }

        /// The bytes for `value`, after checking that ``decode(_:)`` will accept it back.
        /// - Throws: what `WireValue.validate()` throws (a NUL in a string, nesting too deep).
        static func encode(validated value: WireValue) throws -> Data {
            try value.validate()
            return encode(value)
        }

        /// Reads bytes written by ``encode(_:)``, checking every length, the UTF-8 of every
        /// string, the nesting depth, and that nothing follows the value.
        /// - Throws: `FerryModelError` `.invalidArgument` saying what is wrong.
        static func decode(_ data: Data) throws -> WireValue {
            var reader = Reader(bytes: [UInt8](data))
            guard try reader.byte() == version else {
                throw FerryModelError(.invalidArgument, "unknown archive version")
            }
            let value = try reader.value(depth: 0)
            guard reader.offset == reader.bytes.count else {
                throw FerryModelError(.invalidArgument, "\(reader.bytes.count - reader.offset) stray bytes after the value")
            }
            try value.validate()
            return value
        }

        private static func append(_ value: WireValue, to out: inout [UInt8]) {
            func integer<T: FixedWidthInteger>(_ number: T) {
                withUnsafeBytes(of: number.littleEndian) { out.append(contentsOf: $0) }
            }
            func count(_ number: Int) { integer(UInt32(truncatingIfNeeded: number)) }
            func string(_ text: String) {
                count(text.utf8.count)
                out.append(contentsOf: text.utf8)
            }
            switch value {
            case .bool(let flag): out.append(UInt8(ascii: "b")); out.append(flag ? 1 : 0)
            case .int32(let number): out.append(UInt8(ascii: "i")); integer(number)
            case .int64(let number): out.append(UInt8(ascii: "x")); integer(number)
            case .uint32(let number): out.append(UInt8(ascii: "u")); integer(number)
            case .uint64(let number): out.append(UInt8(ascii: "t")); integer(number)
            case .double(let number): out.append(UInt8(ascii: "d")); integer(number.bitPattern)
            case .string(let text): out.append(UInt8(ascii: "s")); string(text)
            case .bytes(let data):
                out.append(UInt8(ascii: "y"))
                count(data.count)
                out.append(contentsOf: data)
            case .strings(let texts):
                out.append(UInt8(ascii: "S"))
                count(texts.count)
                for text in texts { string(text) }
            case .array(let values):
                out.append(UInt8(ascii: "v"))
                count(values.count)
                for element in values { append(element, to: &out) }
            case .dictionary(let entries):
                out.append(UInt8(ascii: "e"))
                count(entries.count)
                for (key, element) in entries {
                    string(key)
                    append(element, to: &out)
                }
            }
        }

        private struct Reader {
            let bytes: [UInt8]
            var offset = 0

            mutating func byte() throws -> UInt8 {
                guard offset < bytes.count else { throw truncated }
                defer { offset += 1 }
                return bytes[offset]
            }

            mutating func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
                let size = MemoryLayout<T>.size
                guard bytes.count - offset >= size else { throw truncated }
                var number: T = 0
                for index in 0..<size { number |= T(truncatingIfNeeded: bytes[offset + index]) << (8 * index) }
                offset += size
                return number
            }

            /// A count of things each at least `minimumSize` bytes long, checked against what is left.
            mutating func count(minimumSize: Int) throws -> Int {
                let number = Int(try integer(UInt32.self))
                guard number <= (bytes.count - offset) / max(minimumSize, 1) else { throw truncated }
                return number
            }

            mutating func data() throws -> ArraySlice<UInt8> {
                let length = try count(minimumSize: 1)
                defer { offset += length }
                return bytes[offset..<offset + length]
            }

            mutating func string() throws -> String {
                guard let text = String(validating: try data(), as: UTF8.self) else {
                    throw FerryModelError(.invalidArgument, "a string is not valid UTF-8")
                }
                return text
            }

            mutating func value(depth: Int) throws -> WireValue {
                let tag = try byte()
                switch UnicodeScalar(tag) {
                case "b":
                    switch try byte() {
                    case 0: return .bool(false)
                    case 1: return .bool(true)
                    default: throw FerryModelError(.invalidArgument, "a boolean is neither 0 nor 1")
                    }
                case "i": return .int32(try integer(Int32.self))
                case "x": return .int64(try integer(Int64.self))
                case "u": return .uint32(try integer(UInt32.self))
                case "t": return .uint64(try integer(UInt64.self))
                case "d": return .double(Double(bitPattern: try integer(UInt64.self)))
                case "s": return .string(try string())
                case "y": return .bytes(Data(try data()))
                case "S": return .strings(try (0..<count(minimumSize: 4)).map { _ in try string() })
                case "v":
                    try checkDepth(depth)
                    return .array(try (0..<count(minimumSize: 2)).map { _ in try value(depth: depth + 1) })
                case "e":
                    try checkDepth(depth)
                    var entries: [String: WireValue] = [:]
                    for _ in 0..<(try count(minimumSize: 6)) {
                        let key = try string()
                        guard entries.updateValue(try value(depth: depth + 1), forKey: key) == nil else {
                            throw FerryModelError(.invalidArgument, "the key \"\(key)\" appears twice")
                        }
                    }
                    return .dictionary(entries)
                default:
                    throw FerryModelError(.invalidArgument, "unknown value tag \(tag)")
                }
            }

            private func checkDepth(_ depth: Int) throws {
                guard depth <= WireValue.maximumDepth else { throw FerryModelError(.invalidArgument, "nested too deeply") }
            }

            private var truncated: FerryModelError { FerryModelError(.invalidArgument, "the archive is truncated") }
        }
    }
}
