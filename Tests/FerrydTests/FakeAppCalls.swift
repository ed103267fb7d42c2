import DBus
import FerryModel
import FerryTestSupport
import Foundation
import Synchronization

/// One call the broker made to a fake app (FakeDragApp, FakeShareApp).
struct BrokerCall: Sendable, CustomStringConvertible {
    var member: String
    /// The scene the call is about ("" when none).
    var scene = ""
    var arguments: [DBusValue]
    var at = ContinuousClock.now

    /// The argument at `index` as a string, "" when it is not one.
    func string(_ index: Int) -> String {
        guard arguments.indices.contains(index), case .string(let text) = arguments[index].unwrappingVariants else { return "" }
        return text
    }

    /// The last `a{sv}` argument.
    var dictionary: VariantDictionary {
        for argument in arguments.reversed() {
            if let entries = try? VariantDictionary(dbusValue: argument.unwrappingVariants) { return entries }
        }
        return [:]
    }

    var description: String { scene.isEmpty ? member : "\(member)(\(scene.prefix(8)))" }
}

/// What a fake app keeps of the broker's calls, and of its own tries on a transient pasteboard.
final class FakeAppLog: Sendable {
    private let recorded = Mutex<[BrokerCall]>([])
    private let probed = Mutex<[String]>([])
    private let appID: String

    init(appID: String) { self.appID = appID }

    /// Records a call.
    func record(_ call: BrokerCall) { recorded.withLock { $0.append(call) } }

    /// Records the outcome of one of the app's own reads.
    func probe(_ line: String) { probed.withLock { $0.append(line) } }

    /// Every call so far.
    var calls: [BrokerCall] { recorded.withLock { $0 } }

    /// The outcomes of the app's own reads, in order.
    var probes: [String] { probed.withLock { $0 } }

    /// Waits until `predicate` holds for the calls, then returns them.
    func waitForCalls(timeout: Duration, _ predicate: ([BrokerCall]) -> Bool) async throws -> [BrokerCall] {
        var seen: [BrokerCall] = []
        let matched = await eventually(timeout, every: .milliseconds(10)) {
            seen = calls
            return predicate(seen)
        }
        guard matched else {
            throw SceneTestError(description: "\(appID): the calls never matched: \(seen)")
        }
        return seen
    }

    /// Tries `Read` of item 0 on a transient pasteboard as `connection`; "ok <text>" or the error's name.
    static func tryRead(_ connection: Connection, _ pasteboard: String, type: String = "public.plain-text") async -> String {
        do {
            let path = try ObjectPath(PasteboardName.objectPath(pasteboard))
            let result = try await FerrydFixture.read(connection, 0, type, ["user-action": true], at: path)
            return "ok " + String(decoding: try await result.bytes(), as: UTF8.self)
        } catch let error as DBusError {
            return error.name.rawValue
        } catch {
            return "\(error)"
        }
    }

    /// Tries `Items` on a transient pasteboard as `connection`; "ok <count>" or the error's name.
    static func tryItems(_ connection: Connection, _ pasteboard: String) async -> String {
        do {
            let path = try ObjectPath(PasteboardName.objectPath(pasteboard))
            return "ok \(try await FerrydFixture.items(connection, at: path).count)"
        } catch let error as DBusError {
            return error.name.rawValue
        } catch {
            return "\(error)"
        }
    }
}
