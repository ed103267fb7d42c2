import DBus
import FerryModel
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Application {
    /// `PerformPaste`: the scene's paste configuration against the pasteboard's item types
    /// (metadata, not a paste); when it accepts, the delegate's `paste(itemProviders:)` runs with
    /// providers that read the pasteboard as a user action, only while it still holds these items.
    /// - Returns: `accepted`, `configuration`, and `types` (what was read) and `message` when
    ///   accepted, `reason` when declined.
    /// - Throws: `FerryError` from the pasteboard (`.notFound` when it does not exist,
    ///   `.invalidArgument` for a bad name), or what the delegate's paste threw.
    func performPaste(in scene: Scene, pasteboard name: String) async throws(FerryError) -> [String: DBusValue] {
        let configuration = scene.delegate.pasteConfiguration(for: scene)
        // Its object by name, not Broker1.Pasteboard: a paste must not create a pasteboard.
        let path = try FerryError.bridgingSync {
            try PasteboardName.validate(name)
            return try ObjectPath(PasteboardName.objectPath(name))
        }
        let pasteboard = Pasteboard(source: .client(client), name: name, path: path)
        let changeCount = try await pasteboard.changeCount
        let items = try await pasteboard.items
        var offered: [ContentType] = []
        for item in items {
            for type in item.contentTypes where !offered.contains(type) { offered.append(type) }
        }
        let accepted = configuration?.accepts(offered) ?? false
        let accepting = configuration?.acceptableTypeIdentifiers ?? []
        var result: [String: DBusValue] = [
            "accepted": .boolean(accepted),
            "configuration": .array(of: .string, accepting.map(DBusValue.string)),
        ]
        guard accepted else {
            let reason: String
            if accepting.isEmpty {
                reason = "the scene accepts nothing to paste"
            } else if offered.isEmpty {
                reason = "the pasteboard \(name) is empty"
            } else {
                reason = "the scene accepts \(accepting.joined(separator: ", ")); the pasteboard holds "
                    + offered.map(\.identifier).joined(separator: ", ")
            }
            result["reason"] = .string(reason)
            result["message"] = .string("")
            return result
        }
        let reads = PasteReads()
        let providers = items.enumerated().map { index, item in
            reads.provider(for: item, index: index, on: pasteboard, changeCount: changeCount)
        }
        let message: String
        do {
            message = try await scene.delegate.scene(scene, paste: providers)
        } catch {
            throw FerryError.converting(error)
        }
        result["types"] = .array(of: .string, reads.types.map(DBusValue.string))
        result["message"] = .string(message)
        return result
    }
}

/// The types a paste's item providers delivered, in the order they were read.
final class PasteReads: Sendable {
    private let delivered = Mutex<[String]>([])

    /// The identifiers delivered, without repeats.
    var types: [String] { delivered.withLock { $0 } }

    /// A provider for item `index` whose loaders read it from `pasteboard` as a user action
    /// (a paste, or a drop's perform), only while the change count is still `changeCount` when
    /// given, noting each delivered type, and adding each load into `aggregate` when given (a
    /// drop's ``DropSession/progress``).
    func provider(for item: PasteboardItem, index: Int, on pasteboard: Pasteboard, changeCount: UInt64?,
                  aggregate: DropProgress? = nil) -> ItemProvider {
        var provider = ItemProvider()
        provider.suggestedName = item.metadata.suggestedName
        provider.preferredPresentationSize = item.metadata.preferredPresentationSize
        for info in item.metadata.representations {
            let type = info.contentType
            provider.registerDataRepresentation(for: type, visibility: info.visibility,
                                                estimatedSize: info.estimatedSize) { [self] progress in
                let read = try await pasteboard.read(item: index, type: type, userAction: true, changeCount: changeCount)
                let bytes = try await read.bytes(progress: aggregate?.child(forwardingTo: progress) ?? progress)
                self.note(read.deliveredTypeIdentifier)
                return Data(bytes)
            }
        }
        return provider
    }

    private func note(_ type: String) {
        delivered.withLock { if !$0.contains(type) { $0.append(type) } }
    }
}
