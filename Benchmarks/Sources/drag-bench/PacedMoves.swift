import BenchReport
import DBus
#if canImport(Glibc)
import Glibc
#endif

/// The drag's path and the paced loop that sends its Move calls.
///
/// Slot `n` of a run is due at `start + n × interval`. The loop sleeps until a slot is due
/// (an absolute `clock_nanosleep`, no drift), sends the Move, waits for its reply (one drag,
/// one initiator: moves go one after the other) and times it from the moment it was *sent*.
/// A reply that comes back after the next slot was due makes the loop skip every slot whose
/// time has passed — it never sends late to catch up and never shifts the schedule — and
/// counts those slots as missed. The pointer does not wait either: slot `n` always moves to
/// the path's point `n`, so a skipped slot is a pointer jump, as coalesced motion events are.
struct PacedMoves {
    /// The drag path: `stay` moves inside the left target scene, one across into the right
    /// one, `stay` moves there, one back, and so on; so DropEntered, DropUpdated and
    /// DropExited all happen. The points keep away from the screen's edge zones.
    struct Path {
        var stay: Int

        /// Which target scene slot `n` is in: 0 (left) or 1 (right).
        func scene(_ n: Int) -> Int { (n / stay) % 2 }

        /// Where slot `n` moves to, in desktop coordinates (the scenes are the left and right
        /// halves of a 1920×1080 screen).
        func location(_ n: Int) -> (x: Double, y: Double) {
            let step = n % stay
            let x = (scene(n) == 0 ? 240.0 : 1200.0) + Double(step % 120) * 4
            let y = 300.0 + Double(step % 60) * 6
            return (x, y)
        }
    }

    /// One Move's answer.
    struct Answer {
        var operation: String
        var target: String
        var edge: String
    }

    /// What one paced run measured (times in µs).
    struct Run {
        /// Every Move's round trip, send to reply.
        var latencies = Samples()
        /// Moves that stayed in a scene (DropUpdated only).
        var inside = Samples()
        /// Moves that crossed into the other scene (DropExited + DropEntered).
        var crossing = Samples()
        /// Send → the target's handler starts; target's handler → the reply is back.
        var legToTarget = Samples(), legBack = Samples()
        /// How late each Move went out after its slot was due.
        var sendLag = Samples()
        var slots = 0, sent = 0, missed = 0
        /// Moves answered other than copy at the expected scene.
        var wrong = 0
        var firstWrong: String?
        /// Wall time of the run (first slot due → last reply), µs.
        var span = 0.0
        /// The scene of the last Move sent (0 or 1).
        var lastScene: Int?
    }

    let connection: Connection
    /// Where the Move calls go: ferryd's drag session, or the relay (the floor).
    let destination: BusName
    let session: ObjectPath
    let interface: InterfaceName
    let path: Path
    /// The two target apps, left scene's first.
    let targets: [DragApp]
    /// Their scenes' persistent ids, left first.
    let scenes: [String]
    let interval: Double

    /// D-Bus: `org.ferry.DragSession1.Move` (or the relay's).
    func move(_ x: Double, _ y: Double) async throws -> Answer {
        let reply = try await connection.call(
            destination: destination, path: session, interface: interface, member: "Move",
            body: [.structure([.double(x), .double(y)])], timeout: .seconds(5))
        guard reply.count == 4, case .string(let operation) = reply[0], case .string(let target) = reply[2],
              case .string(let edge) = reply[3] else {
            throw Spawn.Failure(description: "Move replied \(reply) (expected (s, b, s, s))")
        }
        return Answer(operation: operation, target: target, edge: edge)
    }

    /// Runs `slots` paced slots starting at path slot `first`, the drag being in scene
    /// `previousScene` (nil: in none); call it on the connection's executor (the loop sleeps on
    /// that thread between moves, when it has nothing else to do).
    func run(first: Int, slots: Int, after previousScene: Int?) async throws -> Run {
        var result = Run()
        result.slots = slots
        result.lastScene = previousScene
        let start = now() + 1000
        var slot = 0
        var back = start
        while slot < slots {
            let due = start + Double(slot) * interval
            Self.sleep(until: due)
            let n = first + slot
            let scene = path.scene(n)
            let target = targets[scene]
            let crossing = result.lastScene != scene
            result.lastScene = scene
            let proposalsBefore = target.log.proposals
            let (x, y) = path.location(n)
            let sent = now()
            let answer = try await move(x, y)
            back = now()
            let latency = back - sent
            result.sent += 1
            result.sendLag.append(sent - due)
            result.latencies.append(latency)
            if crossing { result.crossing.append(latency) } else { result.inside.append(latency) }
            if target.log.proposals > proposalsBefore {
                let reached = target.log.lastProposalTime
                if reached >= sent && reached <= back {
                    result.legToTarget.append(reached - sent)
                    result.legBack.append(back - reached)
                }
            }
            if answer.operation != "copy" || answer.target != scenes[scene] {
                result.wrong += 1
                if result.firstWrong == nil {
                    result.firstWrong = "slot \(n) at (\(x), \(y)): \(answer.operation) at \"\(answer.target)\" "
                        + "edge \"\(answer.edge)\", expected copy at \(scenes[scene])"
                }
            }
            slot += 1
            // Every slot whose time passed while this Move was out is missed, not sent late.
            let nextDue = start + Double(slot) * interval
            if back > nextDue && slot < slots {
                let passed = min(slots - slot, Int(((back - nextDue) / interval).rounded(.down)) + 1)
                result.missed += passed
                slot += passed
            }
        }
        result.span = back - start
        return result
    }

    /// Sleeps until `now()` reaches `due` (µs, CLOCK_MONOTONIC); returns at once when it has.
    static func sleep(until due: Double) {
        guard due > now() else { return }
        var ts = timespec()
        ts.tv_sec = Int(due / 1e6)
        ts.tv_nsec = Int((due - Double(ts.tv_sec) * 1e6) * 1000)
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}
