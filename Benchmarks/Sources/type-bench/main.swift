import BenchReport
// type-bench: the type database against GIO's own content-type API.
//
// Run a release build: `swift run -c release type-bench`. Prints one JSON object per figure with
// the keys bench, metric, value, unit, anchor, anchor_value, ratio, goal, met (read by `make bench`).
import CGIO
import FerryModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

func nanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// Median over `runs` of the time one call of `body` takes, in the unit given by `scale`.
func measure(runs: Int, scale: Double, _ body: () -> Void) -> Double {
    var samples: [Double] = []
    for _ in 0..<runs {
        let start = nanoseconds()
        body()
        samples.append(Double(nanoseconds() - start) / scale)
    }
    return median(samples)
}

func report(metric: String, value: Double, unit: String, anchor: String?, anchorValue: Double?, goal: String?, met: Bool?) {
    BenchReport.report("type-database", metric, value: value, unit: unit, anchor: anchor, anchorValue: anchorValue,
                       goal: goal.map { Goal.described($0, met: met) })
}

/// What GIO offers without Ferry: the registered list plus the subclasses and aliases files
/// parsed into dictionaries (the bare read the type database builds on).
func gioBareRead() -> Int {
    var count = 0
    if let list = g_content_types_get_registered() {
        var node: UnsafeMutablePointer<GList>? = list
        var names: [String] = []
        while let n = node {
            if let data = n.pointee.data { names.append(String(cString: data.assumingMemoryBound(to: gchar.self))) }
            node = n.pointee.next
        }
        g_list_free_full(list, g_free)
        count += names.count
    }
    var parents: [String: [String]] = [:]
    var aliases: [String: String] = [:]
    for (file, isAliases) in [("/usr/share/mime/subclasses", false), ("/usr/share/mime/aliases", true)] {
        guard let f = fopen(file, "r") else { continue }
        defer { fclose(f) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        while getline(&line, &capacity, f) > 0, let line {
            let fields = String(cString: line).split(whereSeparator: { $0 == " " || $0 == "\n" })
            guard fields.count == 2 else { continue }
            if isAliases { aliases[String(fields[0])] = String(fields[1]) } else { parents[String(fields[0]), default: []].append(String(fields[1])) }
        }
        free(line)
    }
    return count + parents.count + aliases.count
}

var sink = 0

// `type-bench --profile-build N`: only build the database N times (for perf).
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == "--profile-build", let n = Int(CommandLine.arguments[2]) {
    for _ in 0..<n { sink &+= TypeDatabase(sharedMIMEInfo: .load()).count }
    exit(sink == 0 ? 1 : 0)
}

// 1. Building the database.
let coldStart = nanoseconds()
let full = TypeDatabase(sharedMIMEInfo: .load())
let coldMs = Double(nanoseconds() - coldStart) / 1e6
let buildMs = measure(runs: 30, scale: 1e6) { sink &+= TypeDatabase(sharedMIMEInfo: .load()).count }
let bareMs = measure(runs: 30, scale: 1e6) { sink &+= gioBareRead() }
report(metric: "database build, complete (median of 30 fresh builds, in-process)", value: buildMs, unit: "ms",
       anchor: "g_content_types_get_registered + parse subclasses/aliases", anchorValue: bareMs,
       goal: "<= 30 ms", met: buildMs <= 30)
let loadMs = measure(runs: 30, scale: 1e6) { sink &+= SharedMIMEInfo.load().types.count }
let loaded = SharedMIMEInfo.load()
let compileMs = measure(runs: 30, scale: 1e6) { sink &+= TypeDatabase(sharedMIMEInfo: loaded).count }
report(metric: "database build, part 1: read shared-mime-info (GIO list + files)", value: loadMs, unit: "ms",
       anchor: "g_content_types_get_registered + parse subclasses/aliases", anchorValue: bareMs, goal: nil, met: nil)
report(metric: "database build, part 2: merge with the system table and compile the graph", value: compileMs, unit: "ms",
       anchor: nil, anchorValue: nil, goal: nil, met: nil)
let lazyMs = measure(runs: 30, scale: 1e6) {
    let db = TypeDatabase(sharedMIMEInfoLoader: { SharedMIMEInfo.load() })
    if db.conforms(.png, to: .image) { sink &+= 1 }
}
report(metric: "database ready, lazy (system table; shared-mime-info read on first miss) + first query", value: lazyMs,
       unit: "ms", anchor: "g_content_types_get_registered + parse subclasses/aliases", anchorValue: bareMs,
       goal: "<= 30 ms", met: lazyMs <= 30)
report(metric: "database build, first in process (loads mime.cache)", value: coldMs, unit: "ms",
       anchor: nil, anchorValue: nil, goal: "<= 30 ms", met: coldMs <= 30)

// 2. Conformance queries over random pairs of the whole database.
var rng = SystemRandomNumberGenerator()
let allTypes = full.declaredTypes
let pairCount = 200_000
let pairs = (0..<pairCount).map { _ in (allTypes.randomElement(using: &rng)!, allTypes.randomElement(using: &rng)!) }
let batch = 10_000
@MainActor func perQuery(_ db: TypeDatabase, _ pairs: [(ContentType, ContentType)]) -> Double {
    var samples: [Double] = []
    for start in stride(from: 0, to: pairs.count, by: batch) {
        let t0 = nanoseconds()
        for i in start..<min(start + batch, pairs.count) where db.conforms(pairs[i].0, to: pairs[i].1) { sink &+= 1 }
        samples.append(Double(nanoseconds() - t0) / Double(min(batch, pairs.count - start)))
    }
    return median(samples)
}
let fullNs = perQuery(full, pairs)

// The same pairs, as the MIME names GIO knows (types with a MIME type only).
let mimePairs: [(String, String)] = pairs.compactMap { a, b in
    guard let ma = full.tags(of: a)[.mimeType]?.first, let mb = full.tags(of: b)[.mimeType]?.first,
          !ma.contains(";"), !mb.contains(";") else { return nil }
    return (ma, mb)
}
var gioSamples: [Double] = []
for start in stride(from: 0, to: mimePairs.count, by: batch) {
    let end = min(start + batch, mimePairs.count)
    let t0 = nanoseconds()
    for i in start..<end where g_content_type_is_a(mimePairs[i].0, mimePairs[i].1) != 0 { sink &+= 1 }
    gioSamples.append(Double(nanoseconds() - t0) / Double(end - start))
}
let gioNs = median(gioSamples)
report(metric: "conforms(to:) median per query, \(allTypes.count) types, random pairs", value: fullNs, unit: "ns",
       anchor: "g_content_type_is_a on the same MIME pairs", anchorValue: gioNs, goal: "O(1): <= anchor", met: fullNs <= gioNs)

// O(1): the same pairs of system types, asked of the system table alone and of the full
// database (12x the types). Hashing costs grow with identifier length, not with database size,
// so the pairs are the same in both.
let small = TypeDatabase(sharedMIMEInfo: .empty)
let smallTypes = small.declaredTypes
let smallPairs = (0..<pairCount).map { _ in (smallTypes.randomElement(using: &rng)!, smallTypes.randomElement(using: &rng)!) }
let smallNs = perQuery(small, smallPairs)
let sameInFullNs = perQuery(full, smallPairs)
report(metric: "conforms(to:) same system-type pairs: full database (\(allTypes.count) types) vs system table only (\(smallTypes.count))",
       value: sameInFullNs, unit: "ns", anchor: "system-table-only database", anchorValue: smallNs,
       goal: "ratio <= 1.5 (does not grow with size)", met: sameInFullNs / smallNs <= 1.5)

// 3. Lookups by extension and by MIME type.
let extensions = allTypes.compactMap { full.tags(of: $0)[.filenameExtension]?.first }
let mimeTypes = allTypes.compactMap { full.tags(of: $0)[.mimeType]?.first }.filter { !$0.contains(";") }
let rounds = 20
let extNs = measure(runs: rounds, scale: Double(extensions.count)) {
    for e in extensions { sink &+= full.type(tag: e, tagClass: .filenameExtension)?.identifier.utf8.count ?? 0 }
}
let filenames = extensions.map { "x." + $0 }
let gioExtNs = measure(runs: rounds, scale: Double(filenames.count)) {
    var uncertain: gboolean = 0
    for name in filenames {
        let p = g_content_type_guess(name, nil, 0, &uncertain)
        sink &+= Int(uncertain)
        g_free(p)
    }
}
report(metric: "lookup by filename extension (\(extensions.count) extensions)", value: extNs, unit: "ns",
       anchor: "g_content_type_guess(filename, no data)", anchorValue: gioExtNs, goal: nil, met: nil)
let mimeNs = measure(runs: rounds, scale: Double(mimeTypes.count)) {
    for m in mimeTypes { sink &+= full.type(tag: m, tagClass: .mimeType)?.identifier.utf8.count ?? 0 }
}
let gioMimeNs = measure(runs: rounds, scale: Double(mimeTypes.count)) {
    for m in mimeTypes {
        let p = g_content_type_from_mime_type(m)
        sink &+= p == nil ? 0 : 1
        g_free(p)
    }
}
report(metric: "lookup by MIME type (\(mimeTypes.count) MIME types)", value: mimeNs, unit: "ns",
       anchor: "g_content_type_from_mime_type", anchorValue: gioMimeNs, goal: nil, met: nil)

if sink == 42 { print("") }
