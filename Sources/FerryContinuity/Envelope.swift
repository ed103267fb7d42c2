import Foundation
import Synchronization

/// A hybrid logical clock stamp: wall milliseconds, a counter for events in the same
/// millisecond (or while the wall clock lags a stamp already seen), and the device as a tie
/// break. Orders copies across devices without trusting their clocks to agree.
package struct ClockStamp: Codable, Sendable, Comparable, Hashable {
    /// Milliseconds since 1970, at least the largest seen.
    package var wall: UInt64
    /// Orders stamps with the same `wall`.
    package var counter: UInt32
    /// The device that made the stamp.
    package var device: String

    /// Makes a stamp.
    package init(wall: UInt64, counter: UInt32, device: String) {
        self.wall = wall
        self.counter = counter
        self.device = device
    }

    /// Orders by wall, then counter, then device.
    package static func < (a: ClockStamp, b: ClockStamp) -> Bool {
        (a.wall, a.counter, a.device) < (b.wall, b.counter, b.device)
    }
}

/// A device's hybrid logical clock.
package final class HybridClock: Sendable {
    let device: String
    let last = Mutex<(wall: UInt64, counter: UInt32)>((0, 0))
    let now: @Sendable () -> UInt64

    /// A clock for `device` reading the wall clock with `now` (milliseconds).
    package init(device: String, now: @escaping @Sendable () -> UInt64 = { UInt64(Date().timeIntervalSince1970 * 1000) }) {
        self.device = device
        self.now = now
    }

    /// A stamp for a local event, later than every stamp made or seen.
    package func tick() -> ClockStamp {
        let wall = now()
        return last.withLock { last in
            if wall > last.wall { last = (wall, 0) } else { last.counter += 1 }
            return ClockStamp(wall: last.wall, counter: last.counter, device: device)
        }
    }

    /// Notes a stamp from another device, so the next local one is later.
    package func observe(_ stamp: ClockStamp) {
        last.withLock { last in
            if stamp.wall > last.wall { last = (stamp.wall, stamp.counter) }
            else if stamp.wall == last.wall { last.counter = max(last.counter, stamp.counter) }
        }
    }
}

/// What a copy announces to the user's other devices (sealed in the KV bucket): who, when, and
/// each item's types in fidelity order with their sizes, name and expiration. No content.
package struct Envelope: Codable, Sendable, Equatable {
    /// One item.
    package struct Item: Codable, Sendable, Equatable {
        /// The item's id on the source device.
        package var id: UUID
        /// Its representations, highest fidelity first.
        package var types: [Representation]
        /// Its suggested name.
        package var name: String?
        /// When it expires (milliseconds since 1970), if it does.
        package var expires: UInt64?
    }

    /// One representation: its type identifier and size in bytes.
    package struct Representation: Codable, Sendable, Equatable {
        /// The type identifier.
        package var type: String
        /// The size in bytes: exact when the source holds the bytes, its app's estimate (or nil,
        /// unknown) when an app there still promises them.
        package var size: Int64?
    }

    /// The device the copy was made on.
    package var device: String
    /// When, on the hybrid clock.
    package var stamp: ClockStamp
    /// The source's change count of its general pasteboard (chunk requests name it).
    package var changeCount: UInt64
    /// The items; empty: the source's pasteboard has nothing that may leave it.
    package var items: [Item]
    /// The named pasteboard the copy was made to (one the user opted in to continuity); nil:
    /// the general pasteboard.
    package var pasteboard: String?
}

/// A chunk request: `length` bytes at `offset` of one representation of an item the source
/// announced (sealed, and checked again by the source on every request).
struct ChunkRequest: Codable, Sendable {
    var from: String
    var item: UUID
    var type: String
    var offset: Int64
    var length: Int
    /// The pull the request belongs to (one paste of one representation): a promised
    /// representation's app is asked once per pull. Nil from a ferryd that did not send it.
    var pull: UUID?
}

/// Subjects and contexts of the continuity protocol.
enum Subjects {
    /// The per-user bucket of announcements, one key per device.
    static let bucket = "ferry_pb"
    /// The per-user bucket of Handoff advertisements, one key per device.
    static let activityBucket = "ferry_activity"
    /// Where `device` answers requests for its current activity.
    static func activities(of device: String) -> String { "ferry.dev.\(device).activity" }
    /// The sealing context of `device`'s advertisement.
    static func advertisement(_ device: String) -> String { "kv:\(activityBucket).\(device)" }
    /// The sealing context of an activity request to `device`.
    static func activityRequest(to device: String) -> String { "req:" + activities(of: device) }
    /// The sealing context of `device`'s answer to an activity request.
    static func activityReply(from device: String, _ request: ActivityRequest) -> String {
        "rep:\(activities(of: device)):\(request.from):\(request.id)"
    }
    /// Where `device` answers chunk requests.
    static func chunks(of device: String) -> String { "ferry.dev.\(device).chunk" }
    /// The sealing context of `device`'s announcement.
    static func announcement(_ device: String) -> String { "kv:\(bucket).\(device)" }
    /// The sealing context of a request to `device`.
    static func request(to device: String) -> String { "req:" + chunks(of: device) }
    /// The sealing context of a reply to `request`.
    static func reply(to device: String, _ request: ChunkRequest) -> String {
        "rep:\(device):\(request.from):\(request.item.uuidString):\(request.type):\(request.offset)"
    }

    /// Whether `name` can be a device name: 1–64 of letters, digits, `-` and `_` (a subject token).
    static func isValidDevice(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x2D || $0 == 0x5F }
    }
}
