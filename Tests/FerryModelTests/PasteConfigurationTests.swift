import Foundation
import FerryModel
import Testing

@Suite struct PasteConfigurationTests {
    @Test func imageConfigurationAcceptsPNGButNotText() throws {
        // Needs the real type database (public.png conforms to public.image).
        let configuration = PasteConfiguration(forAccepting: ImageItem.self)
        #expect(configuration.acceptableTypeIdentifiers == ["public.image"])
        #expect(configuration.accepts([.png]))
        #expect(configuration.accepts([.utf8PlainText, .jpeg]))
        #expect(!configuration.accepts([.utf8PlainText]))
        #expect(!configuration.accepts([ContentType]()))
    }

    @Test func acceptsItemProvidersByTypeWithoutLoading() throws {
        var picture = ItemProvider()
        picture.registerDataRepresentation(for: .png) { _ in
            Issue.record("accepting must not load data")
            return Data()
        }
        let text = try ItemProvider(object: "hello")
        let images = PasteConfiguration(acceptableTypes: [.png])
        #expect(images.accepts(picture))
        #expect(!images.accepts(text))
        #expect(images.accepts([text, picture]))
        #expect(!images.accepts([text]))
    }

    @Test func textConfigurationFromStringAcceptsEveryTextEncoding() throws {
        // Needs the real type database (public.utf8-plain-text conforms to public.plain-text).
        var configuration = PasteConfiguration(forAccepting: String.self)
        #expect(configuration.accepts([.utf8PlainText]))
        #expect(!configuration.accepts([.png]))
        configuration.addTypeIdentifiers(forAccepting: URL.self)
        #expect(configuration.acceptableTypeIdentifiers == ["public.plain-text", "public.url"])
        #expect(configuration.accepts([.fileURL]))
    }

    @Test func identifiersAreValidatedAndDeduplicated() throws {
        var configuration = try PasteConfiguration(acceptableTypeIdentifiers: ["public.png", "public.png"])
        #expect(configuration.acceptableTypeIdentifiers == ["public.png"])
        let error = #expect(throws: FerryModelError.self) {
            try configuration.addAcceptableTypeIdentifiers(["public.jpeg", "not a type!"])
        }
        #expect(error?.keyPath == "acceptableTypeIdentifiers[1]")
        #expect(configuration.acceptableTypeIdentifiers == ["public.png"], "a failed add adds nothing")
        try configuration.addAcceptableTypeIdentifiers(["public.jpeg"])
        #expect(configuration.accepts([.jpeg]))
    }
}

@Suite struct ActivityItemsConfigurationTests {
    @Test func defaultsToShareAndCopy() throws {
        var configuration = try ActivityItemsConfiguration(objects: ["A note", URL(string: "https://example.org")!])
        #expect(configuration.itemProviders.count == 2)
        #expect(configuration.supportsInteraction(.share))
        #expect(configuration.supportsInteraction(.copy))
        configuration.supportedInteractions = .copy
        #expect(!configuration.supportsInteraction(.share))
        #expect(configuration.supportsInteraction(.copy))
        #expect(!configuration.supportsInteraction(.all))
    }

    @Test func perItemMetadataAndTypes() throws {
        var configuration = ActivityItemsConfiguration(itemProviders: [try ItemProvider(object: "x"), try ItemProvider(object: URL(string: "https://e.org")!)])
        configuration.perItemMetadata[1] = .init(title: "Link", messageBody: "Look")
        #expect(configuration.metadata(forItemAt: 1).title == "Link")
        #expect(configuration.metadata(forItemAt: 0) == .init())
        #expect(configuration.contentTypes.first == .utf8PlainText)
        #expect(configuration.contentTypes.contains(.url))
        #expect(configuration.contentTypes.filter { $0 == .utf8PlainText }.count == 1)
    }

    @Test func invalidObjectsAreErrors() throws {
        var activity = try UserActivity(activityType: "viewDetail")
        activity.requiredUserInfoKeys = ["missing"]
        #expect(throws: FerryModelError.self) { try ActivityItemsConfiguration(objects: [activity]) }
    }
}
