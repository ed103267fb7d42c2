#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import DBus
import FerryModel

/// The broker's own activities (`org.ferry.activity.*`): copy, save to a folder, open in a new
/// scene — performed inside ferryd with the items of a share's pasteboard.
///
/// The share service calls, in this order (these signatures are stable):
///
///     package static func validate(_ type: ActivityType, options: VariantDictionary) throws
///     package func perform(_ type: ActivityType, pasteboard: String, options: VariantDictionary,
///                         sharer: Caller, sourceApp: String?) async -> ShareCompletion
///
/// `validate` lets `Perform` answer InvalidArgument as an error reply (a bad `to`) before the
/// share ends; `perform` never throws: a failure is a completion with `completed` false,
/// `errorName` and `error`.
package struct BuiltInActivities: Sendable {
    /// Where the share pasteboards and the general pasteboard are.
    package let pasteboards: PasteboardService
    /// The scenes (open-in-new-scene); nil when ferryd serves none.
    package let scenes: SceneService?
    /// How long the writing app has to serve the promised representations one perform reads, in all.
    package let promiseBudget: Duration

    /// The most bytes of an archived user activity (64 KiB).
    package static let maximumActivitySize = 64 * 1024
    /// How long the writing app has to serve the promised representations one perform reads, in
    /// all (an app activity gets 30 s too; the sharer's Perform does not wait for ever).
    package static let promiseTimeout: Duration = .seconds(30)

    /// Makes the built-ins.
    /// - Parameters:
    ///   - pasteboards: the pasteboard service (share pasteboards, the general pasteboard).
    ///   - scenes: the scene service, for open-in-new-scene; nil makes it fail with Unavailable.
    ///   - promiseBudget: how long the writing app has to serve one perform's promised
    ///     representations, in all (``promiseTimeout``; shorter in tests).
    package init(pasteboards: PasteboardService, scenes: SceneService?, promiseBudget: Duration = BuiltInActivities.promiseTimeout) {
        self.pasteboards = pasteboards
        self.scenes = scenes
        self.promiseBudget = promiseBudget
    }

    /// Checks `Perform`'s options for a built-in activity before anything is done: save-to-folder
    /// needs `to`, an absolute path to an existing directory that is not a symbolic link. Other
    /// keys, and `to` for the other activities, are ignored.
    /// - Parameters:
    ///   - type: the built-in activity.
    ///   - options: `Perform`'s options.
    /// - Throws: `FerryModelError` `.invalidArgument` naming `options.to`, or `activity_type` for
    ///   a type that is not built in.
    package static func validate(_ type: ActivityType, options: VariantDictionary) throws {
        switch type {
        case .copy, .openInNewScene:
            return
        case .saveToFolder:
            try FolderSaver.checkDirectory(try folder(in: options))
        default:
            throw FerryModelError(.invalidArgument, "\(type.rawValue) is not a built-in activity", keyPath: "activity_type")
        }
    }

    /// Performs a built-in activity with the items of a share's pasteboard.
    /// - Parameters:
    ///   - type: `org.ferry.activity.copy`, `.save-to-folder` or `.open-in-new-scene`.
    ///   - pasteboard: the share's pasteboard (`org.ferry.share.<n>`).
    ///   - options: `Perform`'s options (`to` for save-to-folder).
    ///   - sharer: the connection that began the share: copy writes as it (its app, if any).
    ///   - sourceApp: the share's source app (the scene's app, or the sharer's own), preferred
    ///     when choosing the app that opens a user activity.
    /// - Returns: the completion: completed with a message and returned items, or not completed
    ///   with `errorName` and `error` (InvalidArgument for a bad option, Unavailable when a
    ///   promised representation cannot be fetched, NotFound when no app opens the activity, …).
    package func perform(_ type: ActivityType, pasteboard: String, options: VariantDictionary,
                        sharer: Caller, sourceApp: String?) async -> ShareCompletion {
        do {
            try Self.validate(type, options: options)
            switch type {
            case .copy:
                return try await copy(pasteboard: pasteboard, sharer: sharer)
            case .saveToFolder:
                return try await save(pasteboard: pasteboard, to: try Self.folder(in: options), sharer: sharer)
            case .openInNewScene:
                return try await openInNewScene(pasteboard: pasteboard, sharer: sharer, sourceApp: sourceApp)
            default:
                throw FerryModelError(.invalidArgument, "\(type.rawValue) is not a built-in activity")
            }
        } catch let error as FerryModelError {
            let text = error.keyPath.map { $0.isEmpty ? error.message : "\($0): \(error.message)" } ?? error.message
            return .failed(type, errorName: error.code.dbusErrorName, error: text)
        } catch {
            return .failed(type, errorName: FerryModelError.Code.unavailable.dbusErrorName, error: "\(error)")
        }
    }

    /// The `to` option: a string.
    static func folder(in options: VariantDictionary) throws -> String {
        guard let value = options["to"] else {
            throw FerryModelError(.invalidArgument, "save-to-folder needs the folder to save in (an absolute path)", keyPath: "options.to")
        }
        guard case .string(let path) = value.unwrappingVariants else {
            throw FerryModelError(.invalidArgument, "expected a string (s), found \(value.unwrappingVariants.signature.rawValue)",
                                  keyPath: "options.to")
        }
        return path
    }

    /// The caller as a pasteboard writer: its credentials and registered app.
    func writer(_ sharer: Caller) -> PasteboardCaller {
        PasteboardCaller(caller: sharer, app: pasteboards.registry.app(of: sharer.uniqueName))
    }

    /// "1 item", "3 items".
    static func count(_ n: Int, _ noun: String) -> String {
        n == 1 ? "1 \(noun)" : "\(n) \(noun)s"
    }
}
