import BenchReport
import DBus
import Ferry
import FerryModel
import Synchronization
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Issue 20's load: 50 clients at once, half on direct connections and half on the bus, each
/// running 1,000 mixed operations, in three rounds. Every answer is checked (the bytes read are
/// the bytes written), so an error is a wrong answer as much as a failed call. Reports the
/// throughput of each round, the errors, each kind's latency, and ferryd's resident size after
/// each round: flat means the rounds after the first add nothing that stays.
///
/// The mix, per ten operations of a client: one durable write of 1 KiB to its own named
/// pasteboard, four reads of it, three reads of a 1 KiB item every client shares, one listing
/// of its items and one ChangeCount. Needs ferryd started with `XDG_RUNTIME_DIR` set
/// (scripts/direct-bench.sh does) and `FERRY_BENCH_FERRYD_PID`; `paste-bench --only load`.
struct LoadBench {
    let config: Config

    static let clients = 50
    var operations: Int { config.quick ? 200 : 1000 }
    var rounds: Int { config.quick ? 2 : 3 }
    static let payload = 1024

    /// One kind of operation of the mix.
    enum Kind: Int, CaseIterable {
        case write, readOwn, readShared, list, changeCount

        /// The kind of a client's `index`th operation.
        static func of(_ index: Int) -> Kind {
            switch index % 10 {
            case 0: .write
            case 1...4: .readOwn
            case 5...7: .readShared
            case 8: .list
            default: .changeCount
            }
        }

        var label: String {
            switch self {
            case .write: "write 1 KiB to its own pasteboard (durable)"
            case .readOwn: "read its own 1 KiB"
            case .readShared: "read the shared 1 KiB"
            case .list: "list the items"
            case .changeCount: "ChangeCount"
            }
        }
    }

    /// What one client did in one round.
    struct Tally: Sendable {
        var errors: [String] = []
        var times: [[Double]] = Array(repeating: [], count: Kind.allCases.count)
    }

    func run() async throws {
        guard let ferryd = Config.environment("FERRY_BENCH_FERRYD_PID").flatMap({ pid_t($0) }) else {
            throw Spawn.Failure(description: "set FERRY_BENCH_FERRYD_PID (scripts/direct-bench.sh does)")
        }
        var clients: [FerryClient] = []
        for index in 0..<Self.clients { clients.append(try await DirectBench.client(direct: index % 2 == 0)) }
        let direct = await clients.asyncCount { await $0.usesDirectConnection }
        guard direct == Self.clients / 2 else {
            throw Spawn.Failure(description: "\(direct) of \(Self.clients) clients went direct, not half (is XDG_RUNTIME_DIR set for ferryd?)")
        }
        let shared = Self.bytes(client: -1, sequence: 0)
        var held = ItemProvider()
        held.registerDataRepresentation(for: .data, data: shared)
        try await clients[0].pasteboard(named: "load-shared").setItemProviders([held])

        let total = Double(Self.clients * operations)
        var errors: [String] = []
        var perKind = Array(repeating: Samples(), count: Kind.allCases.count)
        var resident: [Double] = []
        for round in 1...rounds {
            let start = now()
            let tallies = try await withThrowingTaskGroup(of: Tally.self) { group in
                for (index, client) in clients.enumerated() {
                    group.addTask {
                        try await withTaskExecutorPreference(client.connection.taskExecutor) {
                            try await self.load(client, index: index, shared: shared)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let seconds = (now() - start) / 1_000_000
            for tally in tallies {
                errors += tally.errors
                for kind in Kind.allCases { perKind[kind.rawValue].append(contentsOf: tally.times[kind.rawValue]) }
            }
            let rss = Double(PeakRSS.read(ferryd, field: "VmRSS") ?? 0) / 1024
            resident.append(rss)
            report("L1 \(Self.clients) clients × \(operations) mixed operations, half direct, round \(round)", "throughput",
                   value: total / seconds, unit: "ops/s")
            report("L1 ferryd RSS after round \(round)", "VmRSS", value: rss, unit: "MiB")
        }
        for kind in Kind.allCases {
            let samples = perKind[kind.rawValue]
            report("L1 \(kind.label), under load", "p50", value: samples.median, unit: "µs")
            report("L1 \(kind.label), under load", "p99", value: samples.percentile(99), unit: "µs")
        }
        for error in Set(errors).sorted().prefix(5) { note("load error: \(error)") }
        report("L1 errors (failed calls and wrong answers) in \(rounds) rounds", "count", value: Double(errors.count),
               unit: "", goal: .value(atMost: 0, "0"))
        // Flat: what the rounds after the first leave resident stays within 4 MiB.
        let growth = (resident.last ?? 0) - (resident.first ?? 0)
        report("L1 ferryd RSS growth from round 1 to round \(rounds)", "VmRSS", value: growth, unit: "MiB",
               goal: .value(atMost: 4, "≤ 4 MiB (flat)"))
        for (index, client) in clients.enumerated() {
            _ = try? await client.pasteboard(named: "load-\(index)").clear()
            await client.close()
        }
    }

    /// One client's round: `operations` operations of the mix, each checked.
    private func load(_ client: FerryClient, index: Int, shared: Data) async throws -> Tally {
        var tally = Tally()
        let own = try await client.pasteboard(named: "load-\(index)")
        let common = try await client.pasteboard(named: "load-shared")
        var written = Self.bytes(client: index, sequence: -1)
        var provider = ItemProvider()
        provider.registerDataRepresentation(for: .data, data: written)
        try await own.setItemProviders([provider])
        for sequence in 0..<operations {
            let kind = Kind.of(sequence)
            let start = now()
            do {
                switch kind {
                case .write:
                    written = Self.bytes(client: index, sequence: sequence)
                    var next = ItemProvider()
                    next.registerDataRepresentation(for: .data, data: written)
                    try await own.setItemProviders([next])
                case .readOwn:
                    if try await Self.read(own) != written { tally.errors.append("client \(index) read another's bytes") }
                case .readShared:
                    if try await Self.read(common) != shared { tally.errors.append("the shared item came back wrong") }
                case .list:
                    let items = try await own.items
                    if items.count != 1 { tally.errors.append("client \(index) listed \(items.count) items") }
                case .changeCount:
                    _ = try await own.changeCount
                }
            } catch {
                tally.errors.append("\(kind.label): \(error)")
            }
            tally.times[kind.rawValue].append(now() - start)
        }
        return tally
    }

    private static func read(_ board: Pasteboard) async throws -> Data {
        try await Data(board.read(item: 0, type: .data).bytes())
    }

    /// 1 KiB that names its writer and the write.
    static func bytes(client: Int, sequence: Int) -> Data {
        var data = Data("client \(client) write \(sequence) ".utf8)
        data.append(contentsOf: (0..<(payload - data.count)).map { UInt8(truncatingIfNeeded: $0 &+ client &+ sequence) })
        return data
    }
}

extension Array {
    /// How many elements satisfy the asynchronous `predicate`, asked one after the other.
    fileprivate func asyncCount(_ predicate: (Element) async -> Bool) async -> Int {
        var count = 0
        for element in self where await predicate(element) { count += 1 }
        return count
    }
}
