import DBus
import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Pasteboard {
    /// Hands the bytes of one representation this client promised to the broker, so the item no
    /// longer needs this process (what ``FerryClient/flush()`` does for every promise at once).
    ///
    /// The broker reads `descriptor` from its current offset to end of file; it holds the bytes
    /// from then on and the promise is no longer served from here. Not a change: the change
    /// count stays.
    /// - Parameters:
    ///   - item: the item's id, as ``items`` lists it.
    ///   - type: the promised type.
    ///   - descriptor: a readable descriptor (a file, or a pipe that reaches end of file).
    /// - Throws: `FerryError` `.notFound` when the item or its promise is gone (replaced
    ///   meanwhile), `.permissionDenied` when another client promised it, `.tooLarge` past the
    ///   broker's disk budget, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Pasteboard1.Fulfill`.
    public func fulfill(item: UUID, type: ContentType, from descriptor: FileDescriptor) async throws(FerryError) {
        let client = try await client
        _ = try await call("Fulfill", [.string(item.uuidString), .string(type.identifier), .variant(.unixFD(descriptor))],
                           timeout: .seconds(600))
        client.promises.fulfilled(item: item, type: type.identifier)
    }
}
