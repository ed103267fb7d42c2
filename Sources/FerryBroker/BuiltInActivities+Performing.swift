#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BrokerCore
import FerryModel
#if canImport(Glibc)
import Glibc
#endif

/// The three built-in activities' work.
extension BuiltInActivities {
    /// `org.ferry.activity.copy`: the items onto the general pasteboard, as the sharer.
    func copy(pasteboard: String, sharer: Caller) async throws -> ShareCompletion {
        let (_, count) = try await pasteboards.copyShareItems(pasteboard, as: writer(sharer), by: .now + promiseBudget)
        return ShareCompletion(completed: true, activityType: .copy, message: "Copied \(Self.count(count, "item"))")
    }

    /// `org.ferry.activity.save-to-folder`: each item's first data representation (not a user
    /// activity) as a file in `folder`; the files' paths are the returned items. Promised bytes
    /// stream from their writer into the file (no size limit but the disk's); all or nothing.
    func save(pasteboard: String, to folder: String, sharer: Caller) async throws -> ShareCompletion {
        let caller = writer(sharer)
        let items = try await pasteboards.transientItems(pasteboard)
        guard !items.isEmpty else { throw FerryModelError(.notFound, "the share has no items") }
        var chosen: [StoredRepresentation] = []
        for (index, item) in items.enumerated() {
            let candidates = caller.visibleRepresentations(of: item).filter { $0.contentType != .userActivity }
            guard let representation = candidates.first(where: { $0.contentType.conforms(to: .data) }) ?? candidates.first else {
                throw FerryModelError(.notFound, "item \(index) has nothing to save but a user activity")
            }
            chosen.append(representation)
        }
        let batch = try await BlockingWork.run { try FolderSaver.Batch(directory: folder) }
        let deadline = ContinuousClock.now + promiseBudget
        do {
            for (index, (item, representation)) in zip(items, chosen).enumerated() {
                let extensions = representation.contentType.inheritedFilenameExtensions
                let (fd, name) = try await BlockingWork.run {
                    try batch.create(suggestedName: item.suggestedName, filenameExtensions: extensions)
                }
                defer { close(fd) }
                _ = try await pasteboards.streamShareBytes(pasteboard, item: item, representation: representation, index: index,
                                                           by: deadline) { chunk in
                    try FolderSaver.write(chunk, to: fd, name: name, directory: folder)
                }
                try await BlockingWork.run { try FolderSaver.sync(fd, name: name, directory: folder) }
            }
        } catch {
            _ = try? await BlockingWork.run { batch.discard() }
            throw error
        }
        let paths = try await BlockingWork.run { batch.commit() }
        let message = paths.count == 1 ? "Saved \(paths[0])" : "Saved \(Self.count(paths.count, "file")) in \(folder)"
        return ShareCompletion(completed: true, activityType: .saveToFolder, returnedItems: paths.map { ["path": $0] },
                               message: message)
    }

    /// `org.ferry.activity.open-in-new-scene`: the first item's user activity opens a scene of
    /// the app declaring its type (the source app first).
    func openInNewScene(pasteboard: String, sharer: Caller, sourceApp: String?) async throws -> ShareCompletion {
        guard let scenes else { throw FerryModelError(.unavailable, "this broker serves no scenes") }
        let items = try await pasteboards.transientItems(pasteboard)
        guard let first = items.first,
              let representation = first.representations.first(where: { $0.contentType == .userActivity }) else {
            throw FerryModelError(.notFound, "the share's first item carries no user activity")
        }
        let bytes = try await pasteboards.shareBytes(pasteboard, item: first, representation: representation, index: 0,
                                                     limit: Self.maximumActivitySize, by: .now + promiseBudget)
        let activity: UserActivity
        do {
            activity = try UserActivity(archivedData: bytes)
        } catch {
            throw FerryModelError(.invalidArgument, "the first item's user activity cannot be read: \(error)")
        }
        guard let appID = await scenes.appDeclaring(activityType: activity.activityType, preferring: sourceApp) else {
            throw FerryModelError(.notFound, "no app opens \(activity.activityType)")
        }
        let session = try await scenes.openSceneForShare(appID: appID, activity: activity, sharerUniqueName: sharer.uniqueName)
        return ShareCompletion(completed: true, activityType: .openInNewScene, returnedItems: [["session": session, "app": appID]],
                               message: "Opened \(activity.title ?? activity.activityType) in \(appID)")
    }
}
