import Foundation
import Testing

@Suite("ferry type: exit codes and JSON")
struct FerryTypeCommandTests {
    @Test("conforms exits 0 when the type conforms, 1 when not, 2 for unknown or invalid identifiers")
    func conformsExitCodes() throws {
        let yes = try FerryCLI.run("type", "conforms", "public.png", "public.image")
        #expect(yes.status == 0)
        #expect(yes.stdout == "public.png conforms to public.image\n")
        let no = try FerryCLI.run("type", "conforms", "public.png", "public.text")
        #expect(no.status == 1)
        #expect(no.stderr.isEmpty)
        let unknown = try FerryCLI.run("type", "conforms", "public.png", "com.example.nope")
        #expect(unknown.status == 2)
        #expect(unknown.stderr == "ferry: unknown type identifier 'com.example.nope'\n")
        #expect(unknown.stdout.isEmpty)
        let invalid = try FerryCLI.run("type", "conforms", "not valid", "public.data")
        #expect(invalid.status == 2)
        #expect(invalid.stderr == "ferry: invalid type identifier 'not valid'\n")
    }

    @Test("usage errors exit 64")
    func usage() throws {
        #expect(try FerryCLI.run("type", "conforms", "public.png").status == 64)
        #expect(try FerryCLI.run("type", "info").status == 64)
        #expect(try FerryCLI.run("type", "info", "public.png", "--mime", "image/png").status == 64)
    }

    @Test("conforms --json has keys type, mime, supertype, supertypeMIME, conforms")
    func conformsJSON() throws {
        let result = try FerryCLI.run("type", "conforms", "--json", "PUBLIC.PNG", "public.data")
        #expect(result.status == 0)
        let object = try FerryCLI.jsonObject(result)
        #expect(Set(object.keys) == ["type", "mime", "supertype", "supertypeMIME", "conforms"])
        #expect(object["type"] as? String == "public.png")
        #expect(object["mime"] as? String == "image/png")
        #expect(object["supertype"] as? String == "public.data")
        #expect(object["supertypeMIME"] as? String == "application/octet-stream")
        let item = try FerryCLI.jsonObject(FerryCLI.run("type", "conforms", "--json", "public.png", "public.item"))
        #expect(item["supertypeMIME"] is NSNull, "public.item has no MIME type: null, not a missing key: \(item)")
        #expect(object["conforms"] as? Bool == true)
    }

    @Test("a MIME type nothing declares: conforms names it by that MIME type, never dyn.; --json gives both")
    func conformsDynamic() throws {
        let text = try FerryCLI.run("type", "conforms", "application/x-ferry-nothing-declares", "public.data")
        #expect(text.status == 0)
        #expect(text.stdout == "application/x-ferry-nothing-declares conforms to public.data\n")
        let object = try FerryCLI.jsonObject(FerryCLI.run("type", "conforms", "--json", "application/x-ferry-nothing-declares", "public.data"))
        #expect((object["type"] as? String)?.hasPrefix("dyn.") == true, "\(object)")
        #expect(object["mime"] as? String == "application/x-ferry-nothing-declares")
    }

    @Test("info shows identifier, kind, description, supertypes and tags; --json has stable keys")
    func info() throws {
        let text = try FerryCLI.run("type", "info", "public.png")
        #expect(text.status == 0)
        #expect(text.stdout.contains("identifier:  public.png\n"))
        #expect(text.stdout.contains("description: PNG image\n"))
        #expect(text.stdout.contains("supertypes:  public.content, public.data, public.image, public.item\n"))
        #expect(text.stdout.contains("MIME types:  image/png\n"))

        let json = try FerryCLI.jsonObject(FerryCLI.run("type", "info", "--json", "--mime", "text/x-python3"))
        #expect(Set(json.keys) == ["identifier", "declared", "dynamic", "public", "description", "parents", "supertypes",
                                   "filenameExtensions", "mimeTypes"])
        #expect(json["identifier"] as? String == "org.freedesktop.mime.text.x-python3")
        #expect((json["supertypes"] as? [String])?.contains("public.plain-text") == true)
        #expect(json["declared"] as? Bool == true)

        let ext = try FerryCLI.jsonObject(FerryCLI.run("type", "info", "--json", "--extension", "JPG"))
        #expect(ext["identifier"] as? String == "public.jpeg")
        let dynamic = try FerryCLI.jsonObject(FerryCLI.run("type", "info", "--json", "--extension", "ferryunknown"))
        #expect(dynamic["dynamic"] as? Bool == true)
        #expect(dynamic["declared"] as? Bool == false)
        #expect(dynamic["description"] is NSNull)
        #expect(dynamic["filenameExtensions"] as? [String] == ["ferryunknown"])

        let unknown = try FerryCLI.run("type", "info", "com.example.nope")
        #expect(unknown.status == 2)
        #expect(unknown.stderr == "ferry: unknown type identifier 'com.example.nope'\n")
        let badMIME = try FerryCLI.run("type", "info", "--mime", "not-a-mime")
        #expect(badMIME.status == 2)
        #expect(badMIME.stderr == "ferry: invalid MIME type 'not-a-mime'\n")
    }

    @Test("of prints the type by name and by content and the verdict; a PNG named x.txt is a PNG")
    func of() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ferry-cli-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("x.txt")
        try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)).write(to: file)

        let text = try FerryCLI.run("type", "of", file.path)
        #expect(text.status == 0)
        #expect(text.stdout.contains("by name:    public.plain-text\n"))
        #expect(text.stdout.contains("by content: public.png (certain)\n"))
        #expect(text.stdout.contains("type:       public.png (content-overrides)\n"))

        let json = try FerryCLI.jsonObject(FerryCLI.run("type", "of", "--json", file.path))
        #expect(Set(json.keys) == ["file", "byName", "byNameMIME", "byContent", "byContentMIME", "contentCertain", "type", "mime", "rule"])
        #expect(json["type"] as? String == "public.png")
        #expect(json["mime"] as? String == "image/png")
        #expect(json["byNameMIME"] as? String == "text/plain")
        #expect(json["rule"] as? String == "content-overrides")
        #expect(json["contentCertain"] as? Bool == true)

        let missing = try FerryCLI.run("type", "of", dir.appendingPathComponent("missing").path)
        #expect(missing.status == 2)
        #expect(missing.stderr.hasPrefix("ferry: cannot read '"))
        #expect(missing.stderr.split(separator: "\n").count == 1)
    }
}
