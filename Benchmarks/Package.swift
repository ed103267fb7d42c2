// swift-tools-version: 6.1
import PackageDescription

// Ferry's benchmarks, a package of their own beside the library (as swift-nio and Hummingbird keep
// theirs), so that `swift build` and CI in the repository root never build them. Each benchmark
// runs beside its anchor and reports JSON lines through BenchReport; `make bench` builds this
// package and the root's release executables (ferryd, ferry, ferry-cli), which the benchmarks
// start from the folder in FERRY_BENCH_BIN (scripts/bench.sh sets it). Read BENCHMARKS.md.

let strictness: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

// A path dependency is named by its folder: the clone's name, whatever it is (`ferry`, a worktree).
let ferry = Context.packageDirectory.split(separator: "/").dropLast().last.map(String.init) ?? "ferry"

let package = Package(
    name: "FerryBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: ".."),
        // Children are started, timed and reaped through swift-subprocess, as the root's tests do.
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    ],
    targets: [
        // The C anchors: a plain libdbus client and server (CDBusBench), and GIO's content types.
        // Quarantined here as in the root: each library behind one header-only shim.
        .systemLibrary(name: "CLibDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CGIO", pkgConfig: "gio-2.0", providers: [.apt(["libglib2.0-dev"])]),
        .target(name: "CDBusBench", dependencies: ["CLibDBus"], path: "Sources/CDBusBench"),

        // What every benchmark shares: medians, ratios, goals as JSON lines; spawning and stopping
        // processes; a private bus with the release ferryd on it.
        .target(name: "BenchReport", dependencies: [.product(name: "DBus", package: ferry), "CDBusBench",
                                                    .product(name: "Subprocess", package: "swift-subprocess"),
                                                    .product(name: "SystemPackage", package: "swift-system")],
                swiftSettings: strictness),

        // The benchmarks, each beside its anchor (BENCHMARKS.md names the rows).
        .executableTarget(name: "dbus-bench", dependencies: [.product(name: "DBus", package: ferry), "CDBusBench", "BenchReport"],
                          swiftSettings: strictness),
        .executableTarget(name: "type-bench", dependencies: [.product(name: "FerryModel", package: ferry), "CGIO", "BenchReport"],
                          swiftSettings: strictness),
        .executableTarget(name: "paste-bench",
                          dependencies: [.product(name: "Ferry", package: ferry), .product(name: "FerryModel", package: ferry),
                                         .product(name: "DBus", package: ferry), "CDBusBench", "BenchReport"],
                          swiftSettings: strictness),
        .executableTarget(name: "scene-bench", dependencies: [.product(name: "DBus", package: ferry), "BenchReport"],
                          swiftSettings: strictness),
        .executableTarget(name: "drag-bench", dependencies: [.product(name: "DBus", package: ferry), "CDBusBench", "BenchReport"],
                          swiftSettings: strictness),
        .executableTarget(name: "continuity-bench",
                          dependencies: [.product(name: "FerryContinuity", package: ferry), .product(name: "Ferry", package: ferry),
                                         .product(name: "FerryModel", package: ferry), .product(name: "DBus", package: ferry),
                                         "BenchReport"],
                          swiftSettings: strictness),
    ]
)
