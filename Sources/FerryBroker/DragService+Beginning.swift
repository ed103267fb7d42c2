import BrokerCore
import DBus
import FerryBus
import FerryModel
import Logging
import FerrySystem

/// The options of `org.ferry.DragManager1.BeginDrag`, read and checked.
struct DragBeginRequest: Sendable {
    /// Who writes the items.
    enum Writer: String, Sendable {
        /// The source app, asked through `Client1.ProvideDragItems`.
        case source
        /// The caller, with `SetItems` on the returned pasteboard.
        case initiator
    }

    var location: Point?
    var allowsMove = false
    var restrictedToApp = false
    var writer = Writer.source
    var item: UInt32 = 0
    /// The app whose icon is dragged (no items, no source scene).
    var app: String?

    /// Reads `options`; unknown keys are ignored.
    /// - Throws: `FerryModelError` `.invalidArgument` naming the key (`options.location`).
    init(_ options: VariantDictionary) throws {
        let dictionary = WireReader(dbus: options, path: "options")
        if let value = options["location"] {
            location = try DragService.point(value, keyPath: "options.location")
        }
        allowsMove = try dictionary.bool("allowsMove") ?? false
        restrictedToApp = try dictionary.bool("restrictedToApp") ?? false
        if let name = try dictionary.string("items") {
            guard let writer = Writer(rawValue: name) else {
                throw FerryModelError(.invalidArgument, "unknown writer \"\(name)\" (known: source, initiator)",
                                      keyPath: "options.items")
            }
            self.writer = writer
        }
        if let index = try dictionary.int64("item") {
            guard index >= 0, index <= Int64(UInt32.max) else {
                throw FerryModelError(.invalidArgument, "an item index must not be negative", keyPath: "options.item")
            }
            item = UInt32(index)
        }
        if let app = try dictionary.string("app") {
            guard !app.isEmpty else { throw FerryModelError(.invalidArgument, "must not be empty", keyPath: "options.app") }
            self.app = app
        }
    }
}

extension DragService {
    /// A `(dd)` location with finite coordinates within the desktop's limits.
    /// - Throws: `FerryModelError` `.invalidArgument` naming `keyPath`.
    static func point(_ value: DBusValue, keyPath: String) throws -> Point {
        guard case .structure(let fields) = value.unwrappingVariants, fields.count == 2,
              case .double(let x) = fields[0], case .double(let y) = fields[1] else {
            throw FerryModelError(.invalidArgument, "expected a point (dd), found \(value.unwrappingVariants.signature.rawValue)",
                                  keyPath: keyPath)
        }
        guard x.isFinite, y.isFinite, abs(x) <= Desktop.coordinateLimit, abs(y) <= Desktop.coordinateLimit else {
            throw FerryModelError(.invalidArgument, "a location needs finite coordinates (got \(x), \(y))", keyPath: keyPath)
        }
        return Point(x: x, y: y)
    }

    /// `BeginDrag`: a drag starts from a connected scene (or an app's icon); its pasteboard is
    /// made, the source app writes its items unless the caller does, then the session's object
    /// appears.
    /// - Returns: the session's and the drag pasteboard's object paths.
    /// - Throws: `FerryModelError` `.notFound` (unknown or not connected scene, unknown app,
    ///   nothing to drag), `.timeout` (the source app did not answer within 5 s),
    ///   `.invalidArgument`.
    func beginDrag(from sourceSession: String, request: DragBeginRequest,
                   caller: Caller) async throws -> (session: ObjectPath, pasteboard: ObjectPath) {
        let source: SceneService.DragTarget?
        let sourceApp: String
        var sourceUniqueName: String?
        var sourceCallbacks: AppCallbacks?
        if let app = request.app {
            guard sourceSession.isEmpty else {
                throw FerryModelError(.invalidArgument, "an app-icon drag has no source scene: pass \"\"",
                                      keyPath: "source_session")
            }
            guard await scenes.knownManifests[app] != nil else {
                throw FerryModelError(.notFound, "no app \(app) has ever registered with scenes", keyPath: "options.app")
            }
            source = nil
            sourceApp = app
            if let running = await scenes.runningApp(app) {
                (sourceUniqueName, sourceCallbacks) = (running.uniqueName, running.callbacks)
            }
        } else {
            guard !sourceSession.isEmpty else {
                throw FerryModelError(.invalidArgument, "name the source scene, or an app in options.app",
                                      keyPath: "source_session")
            }
            guard let scene = await scenes.dragTarget(sourceSession) else {
                throw FerryModelError(.notFound, "there is no connected scene \"\(sourceSession)\"", keyPath: "source_session")
            }
            guard scene.isInteractive else {
                throw FerryModelError(.notInteractive, "scene \(sourceSession) of \(scene.appID) is on the external display: nothing is dragged from it",
                                      keyPath: "source_session")
            }
            source = scene
            sourceApp = scene.appID
            (sourceUniqueName, sourceCallbacks) = (scene.uniqueName, scene.callbacks)
        }
        let location: Point
        if let asked = request.location {
            location = asked
        } else if let source {
            location = Point(x: source.frame.midX, y: source.frame.midY)
        } else {
            location = await scenes.screenCentre(0)
        }

        let number = nextNumber
        nextNumber += 1
        let pasteboard = TransientPasteboard.Kind.drag.name(number)
        let parties = Set([caller.uniqueName] + (sourceUniqueName.map { [$0] } ?? []))
        let pasteboardPath = try await pasteboards.createTransientPasteboard(pasteboard, access: TransientPasteboardAccess(
            writers: source == nil ? [] : parties, metadataReaders: parties,
            contentReaders: Set(sourceUniqueName.map { [$0] } ?? [])))
        previews[number] = DragPreviews(pasteboard: pasteboard, writers: source == nil ? [] : parties)
        var allowsMove = request.allowsMove && source != nil
        var restricted = request.restrictedToApp
        if let source, let callbacks = sourceCallbacks, request.writer == .source, caller.uniqueName != source.uniqueName {
            do {
                let offered = try await provideItems(number: number, source: source, callbacks: callbacks,
                                                     pasteboardPath: pasteboardPath, request: request, location: location)
                allowsMove = allowsMove && offered.allowsMove
                restricted = restricted || offered.restrictedToApp
            } catch {
                dropPreviews(number)
                await pasteboards.removeTransientPasteboard(pasteboard)
                throw error
            }
        }

        let path = try ObjectPath("\(Self.path.rawValue)/\(number)")
        var session = DragSession(number: number, path: path, pasteboard: pasteboard, pasteboardPath: pasteboardPath,
                                  initiator: caller.uniqueName, sourceApp: sourceApp, sourceUniqueName: sourceUniqueName,
                                  sourceCallbacks: sourceCallbacks, sourceSession: sourceSession,
                                  allowsMove: allowsMove, restrictedToApp: restricted, location: location)
        var record = DragRecord(number: number, sourceApp: sourceApp, sourceSession: sourceSession, isAppIcon: source == nil)
        let hit = await scenes.dragHit(at: location)
        session.screen = hit.screen
        session.edgeZone = hit.edge
        record.append(DragRecord.Step(location: location, target: hit.scene?.id ?? "", operation: .cancel))
        do {
            try connection.export(sessionInterface(session), at: path)
        } catch {
            dropPreviews(number)
            await pasteboards.removeTransientPasteboard(pasteboard)
            throw error
        }
        sessions[number] = session
        records[number] = record
        lastNumber = number
        lastEnded = nil
        idleWake.signal()
        try? connection.emit(path: Self.path, interface: Self.interfaceName, member: "DragBegan",
                             body: [.objectPath(path), .string(sourceApp)])
        let origin = source.map { "scene \($0.id) of \(sourceApp)" } ?? "the icon of \(sourceApp)"
        logger.debug("drag \(number) began from \(origin)\(allowsMove ? ", move allowed" : "")\(restricted ? ", restricted to its app" : "")")
        // The initiator or the source may have left while the items were written: then their
        // NameOwnerChanged has passed already.
        for name in parties where (try? await connection.owner(of: BusName(name))) == nil {
            await endAsCancel(number, reason: "\(name) went away while the drag began")
            throw FerryModelError(.unavailable, "\(name) went away while drag \(number) began")
        }
        return (path, pasteboardPath)
    }

    /// `Client1.ProvideDragItems`: the source app writes its items to the drag pasteboard.
    /// - Returns: whether it allows a move and whether it restricts the drag to itself.
    /// - Throws: `FerryModelError` `.notFound` "nothing to drag" for no items, `.timeout`.
    private func provideItems(number: Int, source: SceneService.DragTarget, callbacks: AppCallbacks,
                              pasteboardPath: ObjectPath, request: DragBeginRequest,
                              location: Point) async throws -> (allowsMove: Bool, restrictedToApp: Bool) {
        let local = Point(x: location.x - source.frame.minX, y: location.y - source.frame.minY)
        let options: [String: DBusValue] = [
            "item": .uint32(request.item),
            "location": .structure([.double(local.x), .double(local.y)]),
            "allowsMove": .boolean(request.allowsMove),
        ]
        let reply = try await callbacks.call("ProvideDragItems", [
            .string(String(number)), .string(source.id), .objectPath(pasteboardPath), options.dbusValue,
        ], timeout: Self.provideTimeout)
        guard reply.count == 1, let result = try? VariantDictionary(dbusValue: reply[0].unwrappingVariants) else {
            throw FerryModelError(.unavailable, "\(source.appID) answered ProvideDragItems with \(reply.map(\.signature.rawValue).joined()) instead of a{sv}")
        }
        let dictionary = WireReader(dbus: result, path: "result")
        guard let count = try? dictionary.int64("count"), count > 0 else {
            throw FerryModelError(.notFound, "nothing to drag: \(source.appID) provided no items for scene \(source.id)")
        }
        return ((try? dictionary.bool("allowsMove")) ?? true, (try? dictionary.bool("restrictedToApp")) ?? false)
    }
}
