// swift-tools-version: 6.1
import PackageDescription

let strictness: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

// Installed executables are self-contained (`make install`, `make deb`): in release builds the
// Swift runtime and Foundation are linked statically, so `ldd` names only system libraries and the
// binaries run without the toolchain. The static Foundation archives need their private
// dependencies named (CoreFoundation and ICU only where the full Foundation is imported, as in
// ferryd; an archive nobody refers to adds nothing). Debug builds, which the tests link, stay
// dynamic.
let staticSwiftRuntime: [LinkerSetting] = [
    .unsafeFlags(["-static-stdlib"], .when(configuration: .release)),
    .linkedLibrary("_FoundationCollections", .when(configuration: .release)),
    .linkedLibrary("_FoundationCShims", .when(configuration: .release)),
    .linkedLibrary("CoreFoundation", .when(configuration: .release)),
    .linkedLibrary("_FoundationICU", .when(configuration: .release)),
]

let package = Package(
    name: "Ferry",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "DBus", targets: ["DBus"]),
        .library(name: "FerryModel", targets: ["FerryModel"]),
        .library(name: "Ferry", targets: ["Ferry"]),
        // `ferry` is the small front (plain `ferry paste` over raw libdbus); everything else it
        // hands to `ferry-cli`, the full CLI beside it (module `ferry`). See Sources/ferry-front.
        .executable(name: "ferry", targets: ["ferry-front"]),
        .executable(name: "ferry-cli", targets: ["ferry"]),
        // For the benchmarks' package (Benchmarks/): continuity-bench drives the engine link.
        .library(name: "FerryContinuity", targets: ["FerryContinuity"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // The broker as a Service and logging with levels (issue #19 item 2).
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Continuity (issue #22): sealing of what crosses the engine.
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"4.0.0"),
        // Tests and benchmarks spawn processes through swift-subprocess (issue #19 item 5); no
        // shipped product depends on it. swift-system for its FilePath and FileDescriptor.
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    ],
    targets: [
        // C quarantine: libdbus-1 behind one header-only shim. (GIO's shim is the benchmarks': type-bench's anchor.)
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        // The system zlib (issue #19): DEFLATE for PNG, CRC-32 for PNG chunks, zip entries and
        // dbus-peer, instead of hand-written copies.
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // Linux headers the Glibc module lacks (statfs); nothing to link.
        .systemLibrary(name: "CLinux"),

        // The Swift layer over libdbus. Knows nothing of Ferry.
        .target(name: "DBus", dependencies: ["CDBus", "FerrySystem"], swiftSettings: strictness),

        // Text as every Ferry module shows it, no Foundation: lines made printable, dynamic type
        // identifiers read by their MIME type (issue #19 item 3: beneath both the model and the
        // terminal module, so the model no longer depends on the terminal's).
        .target(name: "FerryText", swiftSettings: strictness),

        // What every printing program shares, no Foundation: exit statuses, the progress bar,
        // the standard-error writer (the `ferry` front links this and FerryText, nothing else of Ferry's).
        .target(name: "FerryTerminal", dependencies: ["FerryText"], swiftSettings: strictness),

        // The item model. Imports no D-Bus. GIO is loaded with dlopen on first use (start-up time).
        .target(name: "FerryModel", dependencies: ["FerryText", "CZlib", "FerrySystem"], swiftSettings: strictness),

        // The desktop's clipboards as ferry-bridge sees them: selections, offers, events, and the
        // one protocol every display backend (X11, Wayland) implements. No C, no D-Bus, no Ferry.
        .target(name: "DesktopClipboard", swiftSettings: strictness),

        // The X11 backend of ferry-bridge: libxcb and XFixes behind one header-only shim, and the
        // DesktopClipboardBackend over them (watching, reading, owning, the clipboard manager).
        .systemLibrary(name: "CXCB", pkgConfig: "xcb-xfixes", providers: [.apt(["libxcb1-dev", "libxcb-xfixes0-dev"])]),
        .target(name: "X11Clipboard", dependencies: ["CXCB", "DesktopClipboard"], swiftSettings: strictness),
        .testTarget(name: "X11ClipboardTests", dependencies: ["X11Clipboard", "DesktopClipboard", "FerryTestSupport"],
                    swiftSettings: strictness),

        // Logging for every Ferry program (issue #19 item 2): swift-log's Logger, written by one
        // handler of ours as timestamped lines on standard error. No Foundation, no D-Bus.
        .target(name: "FerryLogging", dependencies: [.product(name: "Logging", package: "swift-log")],
                swiftSettings: strictness),

        // The broker's half that needs no D-Bus (issue #19 item 3), as dbus-broker keeps bus
        // semantics apart from the wire: the pasteboard and scene stores (SQLite and blob files),
        // the paste policy and consents, the desktop model and placement, folder saving, disk and
        // memory budgets, blocking work, the app registry. FerryBroker puts it on the bus.
        .target(name: "BrokerCore", dependencies: ["FerryModel", "FerryTerminal", "FerrySystem",
                                                   .product(name: "GRDB", package: "GRDB.swift"),
                                                   .product(name: "Logging", package: "swift-log")],
                swiftSettings: strictness),
        .testTarget(name: "BrokerCoreTests", dependencies: ["BrokerCore", "FerryModel", "store-crash-writer", "FerryTestSupport",
                                                        .product(name: "GRDB", package: "GRDB.swift"),
                                                        .product(name: "Logging", package: "swift-log")],
                    swiftSettings: strictness),

        // The broker: pasteboards, apps and scenes, their D-Bus faces and their durable storage;
        // `Broker` assembles them into one swift-service-lifecycle Service (ferryd runs it).
        .target(
            name: "FerryBroker",
            dependencies: ["BrokerCore", "FerryModel", "FerryTerminal", "DBus", "FerryBus", "FerryLogging", "FerrySystem", .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictness),

        // Draws the desktop (screens, edge zones, scenes) as SVG or PNG. Depends on the model only.
        .target(name: "DesktopPicture", dependencies: ["FerryModel", "CZlib"], swiftSettings: strictness),

        // The model's wire values as D-Bus values and back: one mapping for broker, library and CLI.
        .target(name: "FerryBus", dependencies: ["FerryModel", "DBus"], swiftSettings: strictness),

        // The client library for apps and the CLI: connect, register, pasteboards, promises, scenes.
        .target(name: "Ferry", dependencies: ["FerryModel", "FerryTerminal", "DBus", "FerryBus", "FerrySystem",
                                     .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
                swiftSettings: strictness),

        // Executables stay thin: parse arguments, call into the libraries.
        .executableTarget(
            name: "ferry",
            dependencies: ["Ferry", "FerryModel", "FerryTerminal", "DesktopPicture", "FerryBridge",
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strictness,
            // Start-up time (BENCHMARKS.md, P6): in release builds, the Swift runtime and Foundation
            // linked statically (`staticSwiftRuntime`) and no PIE relocations (~8.6 → ~5 ms for
            // `ferry --help`).
            linkerSettings: staticSwiftRuntime + [.unsafeFlags(["-Xclang-linker", "-no-pie"], .when(configuration: .release))]),

        // The installed `ferry`: plain `ferry paste` to standard output over raw libdbus, without
        // Foundation or ArgumentParser (start-up time, BENCHMARKS.md P6); anything else it execs
        // `ferry-cli` beside it with the same arguments. In release builds one static executable
        // (libdbus-1.a included, no dynamic loader: about 1 ms of start-up); CFerryFront stands in
        // for the two libsystemd functions libdbus-1.a names there.
        .target(name: "CFerryFront", path: "Sources/CFerryFront",
                cSettings: [.define("FERRY_STATIC_FRONT", .when(configuration: .release))]),
        .executableTarget(
            name: "ferry-front",
            dependencies: ["CDBus", "CFerryFront", "FerryTerminal", "FerryText"],
            swiftSettings: strictness,
            linkerSettings: [.unsafeFlags(["-static-executable"], .when(configuration: .release))]),

        // The daemon: owns org.ferry.Broker; the logic lives in FerryBroker.
        .executableTarget(
            name: "ferryd",
            dependencies: ["FerryBroker", "BrokerCore", "DBus", "FerryModel", "FerryLogging", "FerryContinuity", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                           .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictness,
            linkerSettings: staticSwiftRuntime),

        // A program on the D-Bus layer alone: the other process in tests and in `make demo`.
        .executableTarget(
            name: "dbus-peer",
            dependencies: ["DBus", "CZlib", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strictness),

        // The benchmarks are a package of their own, Benchmarks/ (`make bench`), which `swift build`
        // here does not build.

        // The demo apps (Fixtures/Apps/Notes, Fixtures/Apps/Gallery) on the client library's scene API.
        .executableTarget(
            name: "ferry-demo",
            dependencies: ["Ferry", "FerryModel", "FerryLogging", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                           .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictness),

        // Test-only: writes to a PasteboardStore in a loop so a test can kill -9 it mid-way.
        .executableTarget(name: "store-crash-writer", dependencies: ["BrokerCore"], swiftSettings: strictness),

        // Test-only (issue #21 item 2): a second process promising one large representation
        // through a loader, an AsyncSequence, a FileHandle or a file, for the progress,
        // cancellation and streaming tests.
        .executableTarget(name: "promise-source", dependencies: ["Ferry", "FerryModel"], swiftSettings: strictness),

        // ferry-bridge's Wayland backend (issue #17): libwayland-client behind one shim, the two
        // data-control protocol families as committed wayland-scanner output behind one C face
        // (Sources/CDataControl/README.md), and the Swift backend over them. Tests run headless
        // sway as an unprivileged user with wl-clipboard as the peer.
        .systemLibrary(name: "CWayland", pkgConfig: "wayland-client", providers: [.apt(["libwayland-dev"])]),
        .target(name: "CDataControl", dependencies: ["CWayland"], exclude: ["protocols", "README.md"]),
        .target(name: "WaylandClipboard", dependencies: ["DesktopClipboard", "CWayland", "CDataControl"],
                swiftSettings: strictness),
        .testTarget(name: "WaylandClipboardTests", dependencies: ["WaylandClipboard", "DesktopClipboard", "FerryTestSupport"],
                    swiftSettings: strictness),

        // ferry-bridge (issue #17): the desktop's CLIPBOARD and PRIMARY joined to Ferry's
        // pasteboards. FerryBridge drives any DesktopClipboardBackend and imports no C; the
        // executable picks the backend. Its tests run the real ferryd, Xvfb and headless sway.
        .target(name: "FerryBridge", dependencies: ["DesktopClipboard", "DesktopPortal", "Ferry", "FerryModel", "DBus", "FerrySystem",
                                                    .product(name: "Logging", package: "swift-log")], swiftSettings: strictness),
        .executableTarget(
            name: "ferry-bridge",
            dependencies: ["FerryBridge", "DesktopClipboard", "X11Clipboard", "WaylandClipboard", "Ferry", "FerryModel", "DBus",
                           "FerryTerminal", "FerryLogging", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "UnixSignals", package: "swift-service-lifecycle"), .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictness,
            linkerSettings: staticSwiftRuntime),
        .testTarget(name: "FerryBridgeTests", dependencies: ["FerryBridge", "DesktopClipboard", "DesktopPortal", "Ferry", "FerryModel", "DBus",
                                                         "ferryd", "ferry-bridge", "ferry", "ferry-front", "FerryTestSupport"],
                    swiftSettings: strictness),

        // Tests.
        .target(name: "FerryTestSupport",
                dependencies: [.product(name: "Subprocess", package: "swift-subprocess"),
                               .product(name: "SystemPackage", package: "swift-system"),
                               .product(name: "Logging", package: "swift-log")],
                path: "Tests/FerryTestSupport", swiftSettings: strictness),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "FerrySystem", "dbus-peer", "FerryTestSupport"], exclude: ["Peers"], swiftSettings: strictness),
        .testTarget(name: "FerryModelTests", dependencies: ["FerryModel", "FerryTestSupport"], swiftSettings: strictness),
        .testTarget(name: "DesktopPictureTests", dependencies: ["DesktopPicture", "FerryModel", "FerryTestSupport"],
                    swiftSettings: strictness),
        .testTarget(name: "FerryBrokerTests", dependencies: ["FerryBroker", "BrokerCore", "DBus", "FerryTestSupport"],
                    swiftSettings: strictness),
        .testTarget(name: "FerrydTests", dependencies: ["FerryBroker", "BrokerCore", "DBus", "ferryd", "FerryTestSupport",
                                                    .product(name: "Logging", package: "swift-log")],
                    swiftSettings: strictness),
        .testTarget(name: "FerryCLITests", dependencies: ["ferry", "ferry-front", "ferryd", "ferry-demo", "FerryModel", "FerryText", "FerryTestSupport"], swiftSettings: strictness),
        .testTarget(name: "FerryDemoTests", dependencies: ["ferry-demo", "ferry", "ferry-front", "ferryd", "FerryModel", "FerryTestSupport"],
                    swiftSettings: strictness),
        // `make install`, `make uninstall` and `make deb` (issue #18): they run `make` on the release
        // build (`make release`), which `make test` does first.
        .testTarget(name: "InstallTests", dependencies: ["FerryTerminal", "FerryTestSupport"], swiftSettings: strictness),
        .testTarget(name: "FerryTests", dependencies: ["Ferry", "FerryModel", "DBus", "FerryBus", "ferryd", "FerryTestSupport", "promise-source",
                                                   .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                                                   .product(name: "Logging", package: "swift-log")],
                    swiftSettings: strictness),

        // Continuity (issue #22): Universal Clipboard between a user's machines over NATS.
        // libnats (Debian's libnats-dev) behind one shim header, and the module only ferryd links:
        // the engine link, sealing with the per-user key, and the bridge to the pasteboards.
        .systemLibrary(name: "CNATS", pkgConfig: "libnats", providers: [.apt(["libnats-dev"])]),
        .target(name: "FerryContinuity",
                dependencies: ["CNATS", "FerryBroker", "BrokerCore", "FerryModel", "DBus", "FerrySystem", .product(name: "Crypto", package: "swift-crypto"),
                               .product(name: "Logging", package: "swift-log")],
                swiftSettings: strictness),
        .testTarget(name: "FerryContinuityTests",
                    dependencies: ["FerryContinuity", "BrokerCore", "CNATS", "Ferry", "ferryd", "ferry", "ferry-front", "ferry-demo", "FerryTestSupport",
                                   .product(name: "Crypto", package: "swift-crypto")],
                    swiftSettings: strictness),

        // ferry-bridge's edges (#17): the xdg-desktop-portal FileTransfer client through which
        // copied files reach sandboxed apps. D-Bus only; tested against the real document portal.
        .target(name: "DesktopPortal", dependencies: ["DBus"], swiftSettings: strictness),
        .testTarget(name: "DesktopPortalTests", dependencies: ["DesktopPortal", "DBus", "FerryTestSupport"],
                    swiftSettings: strictness),

        // Blocking work and waiting on descriptors (#19 item 5), below everything that does I/O:
        // one pool of threads for work that blocks, one wake-up for tasks and polling threads,
        // one watcher that waits on many descriptors with one thread. No Ferry types, no D-Bus.
        .target(name: "FerrySystem", dependencies: ["CLinux"], swiftSettings: strictness),
        .testTarget(name: "FerrySystemTests", dependencies: ["FerrySystem"], swiftSettings: strictness),
    ]
)
