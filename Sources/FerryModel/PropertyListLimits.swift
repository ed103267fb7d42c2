#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The bounds a property list must keep before it is decoded: property lists come from the bus
/// (manifests, user activities) and from disk, and the decoder recurses once per level, follows
/// a binary list's object references without noticing a cycle, and expands shared references.
///
/// ``check(_:)`` walks the bytes without recursion, in time linear in what it allows: a binary
/// list's object graph (cycles refused, every shared reference counted each time it is reached),
/// an XML list's `<array>`/`<dict>` elements, an OpenStep list's `(`/`{`.
enum PropertyListLimits {
    /// At most this many arrays and dictionaries enclose a value.
    static let maximumDepth = 64
    /// At most this many values, counting a shared value once for every place it appears.
    static let maximumValues = 250_000
    /// At most this many bytes of strings and data, counting a shared value once for every
    /// place it appears.
    static let maximumExpandedBytes = 32 << 20

    /// Checks `data` against the bounds.
    /// - Throws: `FerryModelError` `.invalidArgument` ("not a property list: …") saying which bound
    ///   is passed, or what is malformed in a binary list's structure.
    static func check(_ data: Data) throws {
        if data.starts(with: Array("bplist00".utf8)) {
            try data.withUnsafeBytes { bytes in
                var walk = BinaryWalk(bytes: bytes)
                try walk.run()
            }
        } else {
            try checkTextDepth(data)
        }
    }

    static func failure(_ why: String) -> FerryModelError {
        FerryModelError.invalid("not a property list: \(why)")
    }

    static var tooDeep: FerryModelError {
        failure("arrays and dictionaries nested deeper than \(maximumDepth)")
    }

    /// XML and OpenStep: the nesting of `<array>`/`<dict>` elements or of `(`/`{`, outside
    /// comments, CDATA and quoted strings. (Neither format can share a value.)
    private static func checkTextDepth(_ data: Data) throws {
        let bytes = [UInt8](data)
        var depth = 0, i = 0
        func at(_ text: String) -> Bool {
            let utf8 = Array(text.utf8)
            return i + utf8.count <= bytes.count && Array(bytes[i..<(i + utf8.count)]) == utf8
        }
        func skip(past end: String) {
            let utf8 = Array(end.utf8)
            while i < bytes.count, !at(end) { i += 1 }
            i = min(bytes.count, i + utf8.count)
        }
        func open() throws {
            depth += 1
            guard depth <= maximumDepth else { throw tooDeep }
        }
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: "<") {
                if at("<!--") { skip(past: "-->"); continue }
                if at("<![CDATA[") { skip(past: "]]>"); continue }
                let start = i
                skip(past: ">")
                let tag = String(decoding: bytes[start..<i], as: UTF8.self)
                let selfClosing = tag.hasSuffix("/>")
                if tag.hasPrefix("<array") || tag.hasPrefix("<dict") {
                    if !selfClosing { try open() }
                } else if tag.hasPrefix("</array") || tag.hasPrefix("</dict") {
                    depth -= 1
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "("), UInt8(ascii: "{"): try open()
            case UInt8(ascii: ")"), UInt8(ascii: "}"): depth -= 1
            case UInt8(ascii: "\""):
                i += 1
                while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { i += bytes[i] == UInt8(ascii: "\\") ? 2 : 1 }
            default: break
            }
            i += 1
        }
    }
}

/// A walk over a binary property list's object graph (Apple's `bplist00`: objects, an offset
/// table, a 32-byte trailer), depth first with an explicit stack.
private struct BinaryWalk {
    let bytes: UnsafeRawBufferPointer
    private var offsetSize = 0, referenceSize = 0, objectCount = 0, tableOffset = 0, top = 0

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    private func fail(_ why: String) -> FerryModelError { PropertyListLimits.failure("binary property list: \(why)") }

    private func integer(at offset: Int, size: Int) throws -> Int {
        guard size >= 1, size <= 8, offset >= 0, offset + size <= bytes.count else { throw fail("truncated") }
        var value: UInt64 = 0
        for k in 0..<size { value = value << 8 | UInt64(bytes[offset + k]) }
        guard value <= UInt64(Int.max) else { throw fail("an integer out of range") }
        return Int(value)
    }

    /// Where object `index` starts.
    private func objectOffset(_ index: Int) throws -> Int {
        guard index >= 0, index < objectCount else { throw fail("a reference to object \(index) of \(objectCount)") }
        let offset = try integer(at: tableOffset + index * offsetSize, size: offsetSize)
        guard offset >= 8, offset < tableOffset else { throw fail("object \(index) outside the object area") }
        return offset
    }

    /// An object's marker and its count (of bytes, characters or references), and where its
    /// contents start.
    private func header(at offset: Int) throws -> (marker: UInt8, count: Int, contents: Int) {
        let marker = bytes[offset]
        let low = Int(marker & 0x0F)
        guard low == 0x0F, [0x4, 0x5, 0x6, 0x7, 0xA, 0xB, 0xC, 0xD].contains(marker >> 4) else { return (marker, low, offset + 1) }
        guard offset + 1 < bytes.count, bytes[offset + 1] >> 4 == 0x1 else { throw fail("a malformed length") }
        let size = 1 << Int(bytes[offset + 1] & 0x0F)
        return (marker, try integer(at: offset + 2, size: size), offset + 2 + size)
    }

    mutating func run() throws {
        guard bytes.count >= 8 + 32 else { throw fail("truncated") }
        let trailer = bytes.count - 32
        offsetSize = Int(bytes[trailer + 6])
        referenceSize = Int(bytes[trailer + 7])
        objectCount = try integer(at: trailer + 8, size: 8)
        top = try integer(at: trailer + 16, size: 8)
        tableOffset = try integer(at: trailer + 24, size: 8)
        guard offsetSize >= 1, offsetSize <= 8, referenceSize >= 1, referenceSize <= 8, objectCount >= 1,
              tableOffset >= 8, tableOffset <= trailer,
              objectCount <= (trailer - tableOffset) / offsetSize
        else { throw fail("a malformed trailer") }

        // Depth first: each frame is a container on the current path and the next reference
        // of it to follow. An object already on the path is a cycle.
        var stack: [(object: Int, next: Int, count: Int, references: Int)] = []
        var onPath = Set<Int>()
        var values = 0, expandedBytes = 0
        func visit(_ object: Int) throws -> (object: Int, next: Int, count: Int, references: Int)? {
            values += 1
            guard values <= PropertyListLimits.maximumValues else {
                throw PropertyListLimits.failure("more than \(PropertyListLimits.maximumValues) values (shared ones counted where they appear)")
            }
            let offset = try objectOffset(object)
            let (marker, count, contents) = try header(at: offset)
            switch marker >> 4 {
            case 0xA, 0xC, 0xD:  // array, set, dictionary
                let references = marker >> 4 == 0xD ? count * 2 : count
                guard references <= (tableOffset - contents) / referenceSize else { throw fail("a container past the object area") }
                guard !onPath.contains(object) else { throw PropertyListLimits.failure("a binary property list refers to itself (object \(object))") }
                guard stack.count < PropertyListLimits.maximumDepth else { throw PropertyListLimits.tooDeep }
                return (object, 0, references, contents)
            case 0x4, 0x5, 0x6:  // data, ASCII string, UTF-16 string
                let length = marker >> 4 == 0x6 ? count * 2 : count
                guard length <= tableOffset - contents else { throw fail("a value past the object area") }
                expandedBytes += length
                guard expandedBytes <= PropertyListLimits.maximumExpandedBytes else {
                    throw PropertyListLimits.failure("more than \(PropertyListLimits.maximumExpandedBytes) bytes of strings and data (shared ones counted where they appear)")
                }
                return nil
            default:
                return nil
            }
        }
        if let frame = try visit(top) {
            stack.append(frame)
            onPath.insert(frame.object)
        }
        while let last = stack.indices.last {
            let frame = stack[last]
            guard frame.next < frame.count else {
                onPath.remove(frame.object)
                stack.removeLast()
                continue
            }
            stack[last].next += 1
            let child = try integer(at: frame.references + frame.next * referenceSize, size: referenceSize)
            if let childFrame = try visit(child) {
                stack.append(childFrame)
                onPath.insert(childFrame.object)
            }
        }
    }
}
