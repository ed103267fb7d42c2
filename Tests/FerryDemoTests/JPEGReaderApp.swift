import Ferry
import FerryModel
import Foundation
import Synchronization

/// A drop target that takes only JPEG (`org.ferry.test.jpeg-reader`, registered in the test
/// process): its scene reads `public.jpeg` from a dropped item and keeps the bytes, so a test can
/// see which representation a drag from Gallery served.
final class JPEGReaderApp: ApplicationDelegate {
    static let appID = "org.ferry.test.jpeg-reader"
    /// The bytes each drop read, in order.
    let dropped = Mutex<[Data]>([])

    static let manifest = Array("""
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
          <key>CFBundleIdentifier</key><string>\(appID)</string>
          <key>CFBundleName</key><string>JPEG Reader</string>
          <key>UIApplicationSceneManifest</key>
          <dict>
            <key>UIApplicationSupportsMultipleScenes</key><false/>
            <key>UISceneConfigurations</key>
            <dict>
              <key>UIWindowSceneSessionRoleApplication</key>
              <array><dict><key>UISceneConfigurationName</key><string>Default</string></dict></array>
            </dict>
          </dict>
        </dict>
        </plist>

        """.utf8)

    func application(_ application: Application, sceneDelegateFor session: SceneSession) -> any SceneDelegate {
        Reader(app: self)
    }

    final class Reader: SceneDelegate {
        let app: JPEGReaderApp
        init(app: JPEGReaderApp) { self.app = app }

        func pasteConfiguration(for scene: Scene) -> PasteConfiguration? {
            PasteConfiguration(acceptableTypes: [.jpeg])
        }

        func scene(_ scene: Scene, performDrop session: DropSession, operation: DropOperation,
                   itemProviders: [ItemProvider]) async throws -> String {
            guard let provider = itemProviders.first(where: { $0.hasRepresentationConforming(to: .jpeg) }) else {
                throw FerryError(.notFound, "no JPEG")
            }
            let loaded = try await provider.loadData(for: .jpeg)
            app.dropped.withLock { $0.append(loaded.data) }
            return "read \(loaded.data.count) bytes of \(loaded.contentType.identifier)"
        }
    }
}
