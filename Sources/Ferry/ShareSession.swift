import DBus
import FerryBus
import FerryModel
import Synchronization

/// How a share begins (``FerryClient/beginShare(_:options:)``,
/// ``FerryClient/beginShare(scene:options:)``, ``Scene/share(options:)``): Apple's
/// `UIActivityViewController.excludedActivityTypes`.
public struct ShareOptions: Sendable, Hashable {
    /// Activities never listed or performed for this share.
    public var excludedActivityTypes: [ActivityType]

    /// Makes options.
    public init(excludedActivityTypes: [ActivityType] = []) {
        self.excludedActivityTypes = excludedActivityTypes
    }
}

/// A running share this client began (the share sheet): list the activities that can perform
/// with its items, perform one, or end it. After ``perform(_:folder:)`` or ``end()`` the share
/// is gone and its calls are `.notFound`; the broker also ends a share by itself (this client's
/// connection closed, 120 s without a perform). Items this client promised for the share (a
/// registered client's large representations) are kept until ``perform(_:folder:)`` or
/// ``end()`` is called — call one even then (it fails with `.notFound`).
///
/// D-Bus: `org.ferry.Sharing1` at `/org/ferry/Sharing`, the share's id as argument.
public final class ShareSession: Sendable {
    /// The share's id (`"3"`).
    public let id: String
    /// The share pasteboard's name (`org.ferry.share.3`).
    public let pasteboardName: String
    let client: FerryClient
    /// The unique name of the broker that keeps the share: every call of the session goes to it.
    let broker: BusName
    let pasteboardPath: ObjectPath
    /// Set by ``Scene/share(options:)``: the scene whose delegate hears the completion.
    let origin: Origin?

    /// The scene an app shares itself (``Scene/share(options:)``).
    struct Origin: Sendable {
        weak let scene: Scene?
    }

    /// Whether the completion was handed to the scene delegate already, and how many
    /// ``perform(_:folder:)`` calls are under way (while one runs the share is the activity's:
    /// a failing ``end()`` does not end it here).
    private let state = Mutex((finished: false, performing: 0))

    init(client: FerryClient, id: String, broker: BusName, pasteboardName: String, pasteboardPath: ObjectPath,
         origin: Origin? = nil) {
        self.client = client
        self.id = id
        self.broker = broker
        self.pasteboardName = pasteboardName
        self.pasteboardPath = pasteboardPath
        self.origin = origin
    }

    /// The share pasteboard: its items' metadata (``Pasteboard/items``) can be read while the
    /// share runs — what a share sheet shows of them; its content only by the writer.
    public var pasteboard: Pasteboard { Pasteboard(source: .client(client), name: pasteboardName, path: pasteboardPath) }

    /// The activities that can perform with the share's items, in the broker's order: the source
    /// app's own first, then the built-ins, then other apps' by app id and title.
    /// - Throws: `FerryError`: `.notFound` when the share has ended, `.permissionDenied` when
    ///   this client did not begin it, `.noBroker`, `.bus` for a malformed answer.
    ///
    /// D-Bus: `org.ferry.Sharing1.ListActivities`.
    public func activities() async throws(FerryError) -> [ListedActivity] {
        let reply = try await call("ListActivities", [.string(id)])
        guard let value = reply.first else { throw FerryError(.bus, "Sharing1.ListActivities answered nothing") }
        guard case .array(_, let elements) = value.unwrappingVariants else {
            throw FerryError(.bus, "Sharing1.ListActivities answered '\(value.signature)', not a list")
        }
        var listed: [ListedActivity] = []
        for (index, element) in elements.enumerated() {
            do {
                listed.append(try ListedActivity(dbusValue: element, keyPath: "activities[\(index)]"))
            } catch {
                throw FerryError(.bus, "Sharing1.ListActivities answered a malformed activity: \(FerryError.converting(error).message)")
            }
        }
        return listed
    }

    /// Performs an activity with the share's items, then the share ends (Apple's user choosing
    /// an activity in the sheet). An activity that fails, refuses, or whose app goes away is a
    /// completion with `completed` false and `errorName`/`error`, not a thrown error.
    /// - Parameters:
    ///   - type: one of the activities ``activities()`` lists.
    ///   - folder: `org.ferry.activity.save-to-folder`'s directory (absolute; required there).
    /// - Returns: the completion.
    /// - Throws: `FerryError`: `.notFound` (an activity not listed now, an ended share),
    ///   `.invalidArgument` (a bad `folder`), `.permissionDenied`, `.timeout`, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Sharing1.Perform`.
    public func perform(_ type: ActivityType, folder: String? = nil) async throws(FerryError) -> ShareCompletion {
        var options: [String: DBusValue] = [:]
        if let folder { options["to"] = .string(folder) }
        let reply: [DBusValue]
        state.withLock { $0.performing += 1 }
        do {
            // An app activity gets 30 s; a built-in may fetch promised bytes first.
            reply = try await call("Perform", [.string(id), .string(type.rawValue), options.dbusValue], timeout: .seconds(120))
        } catch {
            state.withLock { $0.performing -= 1 }
            switch error.code {
            case .invalidArgument:
                break  // a bad option: the share runs on
            case .notFound:
                // An activity not listed now, or another perform under way: the share runs on.
                // A share that ended (the broker ended it by itself, or restarted) is over here too.
                if await hasEnded { await finish(.dismissed(error.message)) }
            default:
                await finish(.dismissed(error.message))
            }
            throw error
        }
        state.withLock { $0.performing -= 1 }
        guard let value = reply.first else { throw FerryError(.bus, "Sharing1.Perform answered nothing") }
        let completion = try Self.completion(value)
        await finish(completion)
        return completion
    }

    /// Ends the share without performing (the sheet dismissed).
    /// - Throws: `FerryError`: `.notFound` when the share has already ended, or while a
    ///   ``perform(_:folder:)`` of it runs (the share is the activity's; it ends with that
    ///   completion), `.permissionDenied`, `.noBroker`.
    ///
    /// D-Bus: `org.ferry.Sharing1.EndShare`.
    public func end() async throws(FerryError) {
        do {
            _ = try await call("EndShare", [.string(id)])
        } catch {
            // A perform of this session under way: the share ends with its completion.
            if state.withLock({ $0.performing }) == 0 { await finish(.dismissed(error.message)) }
            throw error
        }
        await finish(.dismissed())
    }

    /// Calls a `org.ferry.Sharing1` method of the broker that keeps the share. That broker gone
    /// (stopped, or restarted: a new one does not know the share) is `.notFound`.
    private func call(_ member: MemberName, _ body: [DBusValue], timeout: Duration = .seconds(30))
        async throws(FerryError) -> [DBusValue] {
        do {
            return try await client.callSharing(member, body, timeout: timeout, broker: broker)
        } catch where error.code == .noBroker {
            throw FerryError(.notFound, "share \(id) has ended: the broker that kept it (\(broker.rawValue)) is gone")
        }
    }

    /// Whether the share is gone at its broker: its pasteboard no longer answers there, or the
    /// broker itself is gone.
    private var hasEnded: Bool {
        get async {
            do {
                _ = try await client.connection.call(destination: broker, path: pasteboardPath, interface: Pasteboard.interface,
                                                     member: "Items", timeout: .seconds(30))
                return false
            } catch {
                let code = FerryError.converting(error).code
                return code == .notFound || code == .noBroker
            }
        }
    }

    /// The share is over: its promises go and, for a scene the app shared itself, the scene
    /// delegate hears the completion (once).
    private func finish(_ completion: ShareCompletion) async {
        client.promises.reconcile(path: pasteboardPath, live: [])
        guard let origin, let scene = origin.scene else { return }
        guard state.withLock({ s in defer { s.finished = true }; return !s.finished }) else { return }
        await scene.delegate.scene(scene, shareDidComplete: completion, share: id)
    }

    /// A completion from its `a{sv}`.
    /// - Throws: `FerryError` `.bus` for a malformed one.
    static func completion(_ value: DBusValue) throws(FerryError) -> ShareCompletion {
        do {
            return try ShareCompletion(dbusValue: value, keyPath: "completion")
        } catch {
            throw FerryError(.bus, "malformed share completion: \(FerryError.converting(error).message)")
        }
    }
}
