import FerryModel
import Testing

@Suite("ContentType")
struct ContentTypeTests {
    @Test("identifiers resolve case-insensitively to their declared spelling; unknown and invalid give nil")
    func identifierLookup() throws {
        #expect(ContentType("public.png") == .png)
        #expect(ContentType("PUBLIC.PNG")?.identifier == "public.png")
        #expect(ContentType("com.example.never-declared") == nil)
        #expect(ContentType("not an identifier") == nil)
        #expect(ContentType("") == nil)
        #expect(ContentType.isValidIdentifier("org.ferry.user-activity"))
        #expect(!ContentType.isValidIdentifier("a/b"))
        #expect(ContentType("org.ferry.user-activity") == .userActivity)
        #expect(ContentType.userActivity.conforms(to: .data))
    }

    @Test("conformance follows Apple's hierarchy, with multiple parents, reflexive and transitive")
    func hierarchy() {
        #expect(ContentType.png.conforms(to: .png))
        #expect(ContentType.png.conforms(to: .image))
        #expect(ContentType.png.conforms(to: .data))
        #expect(ContentType.png.conforms(to: .content))
        #expect(ContentType.png.conforms(to: .item))
        #expect(!ContentType.png.conforms(to: .text))
        #expect(!ContentType.image.conforms(to: .png))
        #expect(ContentType.pdf.conforms(to: .compositeContent))
        #expect(ContentType.pdf.conforms(to: .data))
        #expect(ContentType.utf8PlainText.conforms(to: .text))
        #expect(ContentType.commaSeparatedText.conforms(to: .delimitedText))
        #expect(ContentType.pythonScript.conforms(to: .plainText))
        #expect(ContentType.fileURL.conforms(to: .url))
        #expect(ContentType.folder.conforms(to: .directory))
        #expect(!ContentType.folder.conforms(to: .data))
        #expect(ContentType.video.conforms(to: .movie))
        #expect(ContentType.ics.conforms(to: .calendarEvent))
        #expect(ContentType.ics.conforms(to: .text))
    }

    @Test("subtype and supertype exclude equality; supertypes is transitive and excludes self")
    func subAndSupertypes() {
        #expect(ContentType.png.isSubtype(of: .image))
        #expect(!ContentType.png.isSubtype(of: .png))
        #expect(ContentType.image.isSupertype(of: .png))
        #expect(!ContentType.image.isSupertype(of: .image))
        #expect(ContentType.png.supertypes == [.image, .data, .content, .item])
        #expect(ContentType.item.supertypes.isEmpty)
    }

    @Test("filename extensions: case-insensitive, preferred type first, unknown gives a dynamic type")
    func extensionLookup() throws {
        #expect(ContentType(filenameExtension: "png") == .png)
        #expect(ContentType(filenameExtension: "JPG") == .jpeg)
        #expect(ContentType(filenameExtension: "txt") == .plainText)
        #expect(ContentType(filenameExtension: "pdf") == .pdf)
        #expect(ContentType(filenameExtension: "csv") == .commaSeparatedText)
        let unknown = try #require(ContentType(filenameExtension: "ferryunknownext"))
        #expect(unknown.isDynamic)
        #expect(!unknown.isDeclared)
        #expect(unknown.conforms(to: .data))
        #expect(unknown.preferredFilenameExtension == "ferryunknownext")
        #expect(ContentType(filenameExtension: "") == nil)
        #expect(ContentType(filenameExtension: ".png") == nil)
        #expect(ContentType(filenameExtension: "a/b") == nil)
    }

    @Test("MIME types: case-insensitive, aliases resolve, parameters fall back to the essence")
    func mimeLookup() throws {
        #expect(ContentType(mimeType: "image/png") == .png)
        #expect(ContentType(mimeType: "IMAGE/PNG") == .png)
        #expect(ContentType(mimeType: "application/pdf") == .pdf)
        #expect(ContentType(mimeType: "text/plain;charset=utf-8") == .utf8PlainText)
        #expect(ContentType(mimeType: "text/plain; charset=UTF-8") == .utf8PlainText)
        #expect(ContentType(mimeType: "image/jpeg; q=1") == .jpeg)
        #expect(ContentType(mimeType: "not-a-mime-type") == nil)
        #expect(ContentType(mimeType: "a b/c") == nil)
        let unknown = try #require(ContentType(mimeType: "application/x-ferry-never-registered"))
        #expect(unknown.isDynamic)
        #expect(unknown.preferredMIMEType == "application/x-ferry-never-registered")
        #expect(unknown.localizedDescription == nil)
    }

    @Test("text/uri-list is a declared text type on every machine, not a dynamic one, and not itself a URL")
    func uriList() throws {
        let list = try #require(ContentType(mimeType: "text/uri-list"))
        #expect(!list.isDynamic && list.isDeclared)
        #expect(list.identifier == "org.freedesktop.mime.text.uri-list")
        #expect(ContentType("org.freedesktop.mime.text.uri-list") == list)
        #expect(list.preferredMIMEType == "text/uri-list")
        #expect(list.conforms(to: .plainText))
        #expect(!list.conforms(to: .url) && !list.conforms(to: .fileURL))
    }

    @Test("shared-mime-info types conform through sub-class-of and the media-type rules")
    func mimeDerivedConformance() throws {
        let python3 = try #require(ContentType(mimeType: "text/x-python3"))
        #expect(python3.identifier == "org.freedesktop.mime.text.x-python3")
        #expect(python3.conforms(to: .plainText))
        #expect(python3.conforms(to: .pythonScript))
        #expect(try #require(ContentType(mimeType: "text/x-python")).conforms(to: .plainText))
        let xcf = try #require(ContentType(mimeType: "image/x-xcf"))
        #expect(xcf.isDeclared && !xcf.isDynamic && !xcf.isPublicType)
        #expect(xcf.conforms(to: .image))
        #expect(xcf.localizedDescription?.isEmpty == false)
        #expect(xcf.preferredFilenameExtension == "xcf")
        let docx = try #require(ContentType(filenameExtension: "docx"))
        #expect(docx.conforms(to: .zip))
    }

    @Test("preferred tags are the first of each class")
    func preferredTags() {
        #expect(ContentType.jpeg.preferredFilenameExtension == "jpeg")
        #expect(ContentType.jpeg.preferredMIMEType == "image/jpeg")
        #expect(ContentType.jpeg.tags[.filenameExtension]?.contains("jpg") == true)
        #expect(ContentType.png.localizedDescription == "PNG image")
        #expect(ContentType.item.preferredMIMEType == nil)
    }

    @Test("a tag claimed by a type that does not conform to the requested supertype gives a dynamic type")
    func conformingToConstraint() throws {
        let t = try #require(ContentType(filenameExtension: "png", conformingTo: .text))
        #expect(t.isDynamic)
        #expect(t.conforms(to: .text))
        #expect(!t.conforms(to: .image))
        #expect(ContentType(filenameExtension: "png", conformingTo: .image) == .png)
        let all = ContentType.types(tag: "png", tagClass: .filenameExtension, conformingTo: nil)
        #expect(all.first == .png)
    }

    @Test("public types are never dynamic; dynamic types are never declared")
    func kinds() throws {
        for type in [ContentType.png, .item, .data, .text, .folder] {
            #expect(type.isPublicType && type.isDeclared && !type.isDynamic)
        }
        #expect(!ContentType.pdf.isPublicType)
        let dyn = try #require(ContentType(mimeType: "application/x-ferry-test"))
        #expect(dyn.isDynamic && !dyn.isDeclared && !dyn.isPublicType)
    }
}

@Suite struct ImportedContentTypeTests {
    @Test func anUndeclaredIdentifierIsKeptAsItIs() throws {
        let custom = try #require(ContentType(importedAs: "com.example.ferry-test.custom"))
        #expect(custom.identifier == "com.example.ferry-test.custom")
        #expect(ContentType("com.example.ferry-test.custom") == nil)
        #expect(custom.conforms(to: custom))
        #expect(!custom.conforms(to: .text))
    }

    @Test func aDeclaredIdentifierGivesTheDeclaredType() {
        #expect(ContentType(importedAs: "PUBLIC.PNG") == .png)
    }

    @Test(arguments: ["", "a b", "ü.x", String(repeating: "a", count: 256)])
    func anInvalidIdentifierIsNil(identifier: String) {
        #expect(ContentType(importedAs: identifier) == nil)
    }
}
