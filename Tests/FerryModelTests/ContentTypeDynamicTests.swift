import FerryModel
import Testing

@Suite("ContentType dynamic identifiers")
struct ContentTypeDynamicTests {
    @Test("a dynamic type round-trips through its identifier: tags and conformance come back")
    func roundTrip() throws {
        let ext = try #require(ContentType(filenameExtension: "Ferry-Odd_Ext", conformingTo: .text))
        #expect(ext.identifier.hasPrefix("dyn."))
        let back = try #require(ContentType(ext.identifier))
        #expect(back == ext)
        #expect(back.tags == [.filenameExtension: ["ferry-odd_ext"]])
        #expect(back.conforms(to: .text) && back.conforms(to: .data) && back.conforms(to: .item))
        #expect(back.supertypes == [.text, .data, .content, .item])
        #expect(!back.isDeclared)

        let mime = try #require(ContentType(mimeType: "application/x-ferry+json;v=2"))
        let again = try #require(ContentType(mime.identifier.uppercased()))
        #expect(again == mime)
        #expect(again.preferredMIMEType == "application/x-ferry+json;v=2")
    }

    @Test("only identifiers that start with dyn., in any case, are dynamic")
    func dynamicPrefix() throws {
        for identifier in ["dyn.ah62d4rv4ge8", "DYN.x", "Dyn.", "dyN.1"] {
            #expect(ContentType(importedAs: identifier)?.isDynamic == true, "\(identifier)")
        }
        for identifier in ["dyn", "dy", "d", "dynx.a", "dyn-a", "public.dyn.a", "xdyn.a", "public.data"] {
            #expect(ContentType(importedAs: identifier)?.isDynamic == false, "\(identifier)")
        }
    }

    @Test("the same tag and constraint always give the same identifier; different ones differ")
    func stable() throws {
        let a = try #require(ContentType(filenameExtension: "qqq"))
        let b = try #require(ContentType(filenameExtension: "QQQ"))
        let c = try #require(ContentType(filenameExtension: "qqq", conformingTo: .text))
        let d = try #require(ContentType(mimeType: "application/qqq"))
        #expect(a == b)
        #expect(a != c && a != d && c != d)
        #expect(a.identifier.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "." })
    }

    @Test("malformed dyn identifiers are rejected")
    func malformed() {
        #expect(ContentType("dyn.") == nil)
        #expect(ContentType("dyn.1") == nil)
        #expect(ContentType("dyn.aaaa") == nil)
        #expect(ContentType("dyn.mu6xq6lkhjygk4tmnfrs4zdboruwc9") == nil)
        // The documented example decodes; the same bytes with non-zero padding bits do not.
        #expect(ContentType("dyn.mu6xq6l2hjyhkytmnfrs4zdborqq") != nil)
        #expect(ContentType("dyn.mu6xq6l2hjyhkytmnfrs4zdborqr") == nil)
    }

    @Test("the documented encoding: base-32 of CLASS=TAG:PARENTS")
    func documentedEncoding() throws {
        let t = try #require(ContentType(filenameExtension: "xyz"))
        #expect(t.identifier == "dyn.mu6xq6l2hjyhkytmnfrs4zdborqq")
        #expect(t.tags == [.filenameExtension: ["xyz"]])
        #expect(t.supertypes == [.data, .item])
    }

    @Test("a tag with no declared owner and no constraint conforms only to public.item")
    func unconstrained() throws {
        let t = try #require(ContentType(tag: "zzz-ferry", tagClass: .filenameExtension, conformingTo: nil))
        #expect(t.isDynamic)
        #expect(t.supertypes == [.item])
        #expect(!t.conforms(to: .data))
    }
}
