import Foundation
import FerryModel
import FerryTestSupport
import Testing

@Suite struct AppManifestTests {
    func manifest(_ app: String) throws -> AppManifest {
        try AppManifest(contentsOf: TestPaths.fixtures.appendingPathComponent("Apps/\(app)/Info.plist"))
    }

    func brokenError(_ name: String) -> FerryModelError? {
        #expect(throws: FerryModelError.self) {
            try AppManifest(contentsOf: TestPaths.fixtures.appendingPathComponent("Apps/Broken/\(name).plist"))
        }
    }

    @Test func notesManifest() throws {
        let notes = try manifest("Notes")
        #expect(notes.bundleIdentifier == "org.ferry.notes")
        #expect(notes.name == "Notes")
        #expect(notes.supportsMultipleScenes)
        #expect(notes.userActivityTypes == ["org.ferry.notes.open-note"])
        #expect(notes.declaresActivityType("org.ferry.notes.open-note"))
        #expect(!notes.declaresActivityType("org.ferry.gallery.view-photo"))
        #expect(notes.configurations(for: .windowApplication).map(\.name) == ["Default", "Editor"])
        #expect(notes.defaultConfiguration()?.name == "Default")
        #expect(notes.configuration(named: "Editor")?.delegateClassName == "EditorSceneDelegate")
        #expect(notes.configuration(named: "Editor", role: .windowExternalDisplayNonInteractive) == nil)
        #expect(notes.configuration(named: "Viewer") == nil)
        #expect(notes.documentTypes.count == 1)
        #expect(notes.documentTypes[0].contentTypeIdentifiers == ["public.plain-text", "org.ferry.notes.note"])
        #expect(notes.documentTypes[0].role == "Editor")
        #expect(notes.exportedTypeDeclarations == [TypeDeclaration(
            identifier: "org.ferry.notes.note", conformsTo: ["public.plain-text"], filenameExtensions: ["ferrynote"],
            mimeTypes: ["application/x-ferry-note"], description: "Ferry Note")])
        #expect(notes.importedTypeDeclarations.isEmpty)
        #expect(notes.opensDocuments(of: .plainText))
        #expect(!notes.opensDocuments(of: .png))
    }

    @Test func galleryManifest() throws {
        let gallery = try AppManifest(contentsOfAppFolder: TestPaths.fixtures.appendingPathComponent("Apps/Gallery"))
        #expect(gallery.bundleIdentifier == "org.ferry.gallery")
        #expect(gallery.supportsMultipleScenes)
        #expect(gallery.userActivityTypes == ["org.ferry.gallery.view-photo"])
        #expect(gallery.sceneConfigurations.map(\.name) == ["Default", "Viewer"])
        #expect(gallery.sceneConfigurations.allSatisfy { $0.role == .windowApplication })
        #expect(gallery.documentTypes.map(\.contentTypeIdentifiers) == [["public.image"]])
        let webp = try #require(gallery.importedTypeDeclarations.first)
        #expect(webp.identifier == "org.webmproject.webp")
        #expect(webp.conformsTo == ["public.image", "public.data"])
        #expect(webp.filenameExtensions == ["webp"])     // a string in the plist
        #expect(webp.mimeTypes == ["image/webp"])         // an array in the plist
        #expect(webp.referenceURL == "https://developers.google.com/speed/webp")
    }

    @Test func documentTypesMatchByConformance() throws {
        // Needs the real type database (public.png conforms to public.image).
        let gallery = try manifest("Gallery")
        #expect(gallery.documentTypes(accepting: .png).count == 1)
        #expect(gallery.documentTypes(accepting: .utf8PlainText).isEmpty)
        #expect(try manifest("Notes").opensDocuments(of: .utf8PlainText))
    }

    @Test func binaryInfoPlistParsesToo() throws {
        let xml = try Data(contentsOf: TestPaths.fixtures.appendingPathComponent("Apps/Notes/Info.plist"))
        let binary = try PropertyListValue(propertyListData: xml).propertyListData(format: .binary)
        #expect(try AppManifest(propertyListData: binary) == (try manifest("Notes")))
    }

    @Test("FerryHandoffLocal: absent is false; true marks the app's activities local; another type is named")
    func handoffLocal() throws {
        #expect(try manifest("Notes").handoffLocal == false)
        let xml = try String(contentsOf: TestPaths.fixtures.appendingPathComponent("Apps/Notes/Info.plist"), encoding: .utf8)
        let local = xml.replacingOccurrences(of: "<key>CFBundleName</key>", with: "<key>FerryHandoffLocal</key><true/><key>CFBundleName</key>")
        #expect(try AppManifest(propertyListData: Data(local.utf8)).handoffLocal)
        let wrong = xml.replacingOccurrences(of: "<key>CFBundleName</key>", with: "<key>FerryHandoffLocal</key><string>yes</string><key>CFBundleName</key>")
        #expect { try AppManifest(propertyListData: Data(wrong.utf8)) } throws: { ($0 as? FerryModelError)?.keyPath == "FerryHandoffLocal" }
    }

    @Test func missingBundleIdentifier() {
        let error = brokenError("missing-bundle-identifier")
        #expect(error?.keyPath == "CFBundleIdentifier")
        #expect(error?.message == "required key is missing")
    }

    @Test func sceneConfigurationsOfTheWrongType() {
        let error = brokenError("scene-configurations-wrong-type")
        #expect(error?.keyPath == "UIApplicationSceneManifest.UISceneConfigurations")
        #expect(error?.message == "expected a dictionary, found array")
    }

    @Test func nonStringConfigurationName() {
        let error = brokenError("configuration-name-not-string")
        #expect(error?.description == "InvalidArgument: UIApplicationSceneManifest.UISceneConfigurations"
                + ".UIWindowSceneSessionRoleApplication[1].UISceneConfigurationName: expected a string, found integer")
    }

    @Test func invalidTypeIdentifier() {
        let error = brokenError("bad-type-declaration")
        #expect(error?.keyPath == "UTExportedTypeDeclarations[0].UTTypeIdentifier")
    }

    @Test func notAPropertyListAtAll() {
        for name in ["not-a-plist", "truncated"] {
            let error = brokenError(name)
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.hasPrefix("not a property list") == true, "\(name)")
        }
    }

    @Test func missingFileIsNotFound() {
        let error = #expect(throws: FerryModelError.self) {
            try AppManifest(contentsOf: TestPaths.fixtures.appendingPathComponent("Apps/Nowhere/Info.plist"))
        }
        #expect(error?.code == .notFound)
    }

    @Test func otherMalformedEntriesNameTheirKeyPath() throws {
        let cases: [(PropertyListValue, String)] = [
            (["CFBundleIdentifier": 5], "CFBundleIdentifier"),
            (["CFBundleIdentifier": "has space"], "CFBundleIdentifier"),
            (["CFBundleIdentifier": "a.b", "NSUserActivityTypes": ["ok", 3]], "NSUserActivityTypes[1]"),
            (["CFBundleIdentifier": "a.b", "NSUserActivityTypes": ["bad type"]], "NSUserActivityTypes[0]"),
            (["CFBundleIdentifier": "a.b", "UIApplicationSceneManifest": ["UIApplicationSupportsMultipleScenes": "YES"]],
             "UIApplicationSceneManifest.UIApplicationSupportsMultipleScenes"),
            (["CFBundleIdentifier": "a.b", "CFBundleDocumentTypes": [["LSItemContentTypes": ["public.png", "no way"]]]],
             "CFBundleDocumentTypes[0].LSItemContentTypes[1]"),
            (["CFBundleIdentifier": "a.b", "UTImportedTypeDeclarations": [["UTTypeIdentifier": "x.y",
                "UTTypeTagSpecification": ["public.filename-extension": [1]]]]],
             "UTImportedTypeDeclarations[0].UTTypeTagSpecification.public.filename-extension[0]"),
            (["CFBundleIdentifier": "a.b", "UIApplicationSceneManifest": ["UISceneConfigurations": [
                "UIWindowSceneSessionRoleApplication": [["UISceneConfigurationName": "A"], ["UISceneConfigurationName": "A"]]]]],
             "UIApplicationSceneManifest.UISceneConfigurations.UIWindowSceneSessionRoleApplication[1].UISceneConfigurationName"),
        ]
        for (plist, path) in cases {
            let error = #expect(throws: FerryModelError.self) {
                try AppManifest(propertyList: plist.dictionaryValue!)
            }
            #expect(error?.keyPath == path)
        }
    }

    @Test func externalDisplayRoleIsKeptApart() throws {
        let plist: PropertyListValue = ["CFBundleIdentifier": "org.ferry.slides", "UIApplicationSceneManifest": [
            "UISceneConfigurations": [
                "UIWindowSceneSessionRoleExternalDisplayNonInteractive": [["UISceneConfigurationName": "Presenter"]],
                "UIWindowSceneSessionRoleApplication": [["UISceneConfigurationName": "Default"]],
            ]]]
        let manifest = try AppManifest(propertyList: plist.dictionaryValue!)
        #expect(!manifest.supportsMultipleScenes)
        #expect(manifest.sceneConfigurations.map(\.name) == ["Default", "Presenter"])
        #expect(manifest.defaultConfiguration(for: .windowExternalDisplayNonInteractive)?.name == "Presenter")
    }
}
