import Ferry
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An item as `types`, `watch` and `history` print it in JSON. Every key is always present
/// (null when unknown).
struct ItemReport: Encodable {
    var index: Int
    var id: String
    var suggestedName: String?
    var localOnly: Bool
    var expirationDate: String?
    var sourceAppID: String?
    var origin: String?
    var representations: [RepresentationReport]

    struct RepresentationReport: Encodable {
        var type: TypeReport
        var size: Int64?
        var promised: Bool
        var visibility: String

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try type.encode(into: &c, identifier: .type, mime: .mime)
            try c.encode(size, forKey: .size)
            try c.encode(promised, forKey: .promised)
            try c.encode(visibility, forKey: .visibility)
        }

        enum CodingKeys: String, CodingKey { case type, mime, size, promised, visibility }
    }

    init(_ item: PasteboardItem, index: Int) {
        self.index = index
        id = item.id.uuidString.lowercased()
        suggestedName = item.metadata.suggestedName
        localOnly = item.localOnly
        expirationDate = item.expirationDate.map(timestamp)
        sourceAppID = item.sourceAppID
        origin = item.origin
        representations = item.metadata.representations.map { info in
            RepresentationReport(type: TypeReport(info.contentType), size: info.estimatedSize,
                                 promised: item.promisedTypes.contains(info.contentType), visibility: info.visibility.rawValue)
        }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(index, forKey: .index)
        try c.encode(id, forKey: .id)
        try c.encode(suggestedName, forKey: .suggestedName)
        try c.encode(localOnly, forKey: .localOnly)
        try c.encode(expirationDate, forKey: .expirationDate)
        try c.encode(sourceAppID, forKey: .sourceAppID)
        try c.encode(origin, forKey: .origin)
        try c.encode(representations, forKey: .representations)
    }

    enum CodingKeys: String, CodingKey {
        case index, id, suggestedName, localOnly, expirationDate, sourceAppID, origin, representations
    }
}

/// A pasteboard's state: its change count and items (`types --json`, each line of `watch --json`).
struct PasteboardReport: Encodable {
    var pasteboard: String
    var changeCount: UInt64
    var items: [ItemReport]
}

/// A date as ISO 8601 in UTC with milliseconds: `2026-11-22T10:15:57.123Z`.
func timestamp(_ date: Date) -> String {
    let millis = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
    let fraction = millis - seconds * 1000
    let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
    let inDay = seconds - days * 86_400
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let day = doy - (153 * mp + 2) / 5 + 1
    let month = mp < 10 ? mp + 3 : mp - 9
    let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
    func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
    let millisText = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
    return "\(year)-\(two(month))-\(two(day))T\(two(inDay / 3600)):\(two(inDay / 60 % 60)):\(two(inDay % 60)).\(millisText)Z"
}

/// `public.png,public.jpeg public.utf8-plain-text`: each item's types, items apart by spaces.
func typeSummary(_ items: [PasteboardItem]) -> String {
    items.map { $0.contentTypes.map(typeName).joined(separator: ",") }.joined(separator: " ")
}

/// A type as every `--json` report gives it: the identifier under one key and its preferred MIME
/// type (null when it has none) under another, `type`/`mime` unless the report names them
/// otherwise, so that a program never has to decode a `dyn.` identifier.
struct TypeReport: Equatable {
    var identifier: String
    var mime: String?

    init(_ type: ContentType) {
        identifier = type.identifier
        mime = type.preferredMIMEType
    }

    /// Encodes the identifier under `identifier` and the MIME type (or null) under `mime`.
    func encode<Key: CodingKey>(into container: inout KeyedEncodingContainer<Key>, identifier key: Key, mime mimeKey: Key) throws {
        try container.encode(identifier, forKey: key)
        try container.encode(mime, forKey: mimeKey)
    }
}
