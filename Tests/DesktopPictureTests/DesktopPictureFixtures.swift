import DesktopPicture
import FerryModel
import FerryTestSupport
import Foundation
import Testing

/// The desktop every picture test draws: two screens of different heights side by side (so some
/// of the picture is outside every screen), a scene in each activation state.
enum PictureFixtures {
    static let screens = [Rect(x: 0, y: 0, width: 1920, height: 1080), Rect(x: 1920, y: 0, width: 1280, height: 800)]

    static let twoScreens = DesktopPicture(screens: screens, edgeZone: 24, scenes: [
        .init(frame: Rect(x: 48, y: 48, width: 960, height: 640), appName: "org.ferry.notes", title: "Notes",
              configuration: "Default", state: .background),
        .init(frame: Rect(x: 400, y: 300, width: 960, height: 640), appName: "org.ferry.gallery",
              title: "Gallery — lake.png", configuration: "Viewer", state: .foregroundActive),
        .init(frame: Rect(x: 1968, y: 48, width: 800, height: 500), appName: "org.ferry.notes",
              title: "Notes — groceries", configuration: "Editor", state: .foregroundInactive),
        .init(frame: Rect(x: 2300, y: 400, width: 800, height: 360), appName: "org.ferry.notes",
              title: "Notes — archived", configuration: "Editor", state: .unattached),
    ])
}

/// Golden files in `Fixtures/desktop/` (`FERRY_UPDATE_GOLDENS=1` rewrites them).
enum PictureGoldens {
    static let files = GoldenFiles("desktop")

    /// Expects `actual` to equal the golden file `name`.
    static func check(_ actual: String, against name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let mismatch = try files.mismatch(actual, against: name)
        #expect(mismatch == nil, "\(mismatch ?? "")", sourceLocation: sourceLocation)
    }
}
