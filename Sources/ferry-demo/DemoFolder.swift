import FerryModel
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A demo app's folder (`Fixtures/Apps/Notes`): its `Info.plist`, read and checked before
/// anything touches the bus, and its `Content/`.
struct DemoFolder: Sendable {
    /// The folder.
    let url: URL
    /// The Info.plist bytes, as registered with the broker.
    let manifestBytes: [UInt8]
    /// The parsed manifest.
    let manifest: AppManifest
    /// Which demo app it is.
    let kind: DemoKind

    /// The largest Info.plist the broker takes.
    static let maximumManifestSize = 1 << 20

    /// Reads `path/Info.plist`.
    /// - Throws: `DemoFailure` `.usage` naming the folder or file and what is wrong with it: no
    ///   such folder, no Info.plist, a malformed one (with the key path of the bad entry), or an
    ///   app that is neither Notes nor Gallery.
    init(path: String) throws(DemoFailure) {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: resolved) else {
            throw DemoFailure(.usage, "\(path): no such folder")
        }
        guard attributes[.type] as? FileAttributeType == .typeDirectory else { throw DemoFailure(.usage, "\(path) is not a folder (give an app folder such as Fixtures/Apps/Notes)") }
        url = URL(fileURLWithPath: path, isDirectory: true)
        let plist = url.appendingPathComponent("Info.plist")
        guard FileManager.default.fileExists(atPath: plist.path) else {
            throw DemoFailure(.usage, "\(path) has no Info.plist: not an app folder")
        }
        let data: Data
        do {
            data = try Data(contentsOf: plist)
        } catch {
            throw DemoFailure(.usage, "cannot read \(plist.path): \(error)")
        }
        guard data.count <= Self.maximumManifestSize else {
            throw DemoFailure(.usage, "\(plist.path) is \(data.count) bytes; an Info.plist may have at most 1 MiB")
        }
        do {
            manifest = try AppManifest(propertyListData: data)
        } catch let error as FerryModelError {
            let place = error.keyPath.map { $0.isEmpty ? "" : " at \($0)" } ?? ""
            throw DemoFailure(.usage, "\(plist.path) is not a valid Info.plist\(place): \(error.message)")
        } catch {
            throw DemoFailure(.usage, "\(plist.path) is not a valid Info.plist: \(error)")
        }
        guard let kind = DemoKind(manifest: manifest) else {
            let known = DemoKind.allCases.map(\.activityType).joined(separator: " or ")
            throw DemoFailure(.usage, "\(manifest.bundleIdentifier) is not a demo app: its NSUserActivityTypes has neither \(known)")
        }
        for name in [DemoKind.defaultConfiguration, kind.detailConfiguration] where manifest.configuration(named: name) == nil {
            throw DemoFailure(.usage, "\(plist.path) declares no scene configuration \"\(name)\"")
        }
        self.kind = kind
        manifestBytes = [UInt8](data)
    }

    /// The app's name for titles: `CFBundleName`, else the bundle identifier.
    var appName: String { manifest.name ?? manifest.bundleIdentifier }

    /// `$XDG_STATE_HOME/ferry-demo/<bundle id>` (`~/.local/state/...` without XDG_STATE_HOME).
    func defaultStateDirectory(environment: [String: String]) -> URL {
        let base: String
        if let xdg = environment["XDG_STATE_HOME"], xdg.hasPrefix("/") {
            base = xdg
        } else {
            base = (environment["HOME"] ?? "/tmp") + "/.local/state"
        }
        return URL(fileURLWithPath: base, isDirectory: true)
            .appendingPathComponent("ferry-demo", isDirectory: true)
            .appendingPathComponent(manifest.bundleIdentifier, isDirectory: true)
    }
}
