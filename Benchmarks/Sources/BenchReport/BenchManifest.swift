/// A minimal valid Info.plist for a benchmark's app `appID`: multiple scenes, one "Default"
/// window configuration.
public func benchManifest(appID: String) -> [UInt8] {
    let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0">
        <dict>
          <key>CFBundleIdentifier</key>
          <string>\(appID)</string>
          <key>CFBundleName</key>
          <string>\(benchProgram) \(appID.split(separator: ".").last ?? "")</string>
          <key>UIApplicationSceneManifest</key>
          <dict>
            <key>UIApplicationSupportsMultipleScenes</key>
            <true/>
            <key>UISceneConfigurations</key>
            <dict>
              <key>UIWindowSceneSessionRoleApplication</key>
              <array>
                <dict>
                  <key>UISceneConfigurationName</key>
                  <string>Default</string>
                  <key>UISceneDelegateClassName</key>
                  <string>BenchSceneDelegate</string>
                </dict>
              </array>
            </dict>
          </dict>
        </dict>
        </plist>

        """
    return Array(xml.utf8)
}
