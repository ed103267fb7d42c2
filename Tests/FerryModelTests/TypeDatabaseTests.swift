import FerryModel
import FerryTestSupport
import Testing

@Suite("TypeDatabase: laws over the whole database")
struct TypeDatabaseTests {
    let db = TypeDatabase.shared
    let mime = SharedMIMEInfo.load()

    @Test("the machine's shared-mime-info is loaded (through GIO)")
    func loaded() {
        #expect(mime.types.count > 100)
        #expect(db.count > mime.types.count / 2)
    }

    @Test("every type is reflexive, conforms to public.item, and its ancestor set is closed")
    func closedAncestors() {
        for type in db.declaredTypes {
            #expect(db.conforms(type, to: type))
            #expect(db.conforms(type, to: .item))
            let supers = db.supertypes(of: type)
            #expect(!supers.contains(type), "\(type) is its own supertype")
            for parent in db.parents(of: type) {
                #expect(supers.contains(parent), "\(type) lacks its parent \(parent)")
            }
            for s in supers {
                #expect(db.conforms(type, to: s))
                let closed = db.supertypes(of: s).isSubset(of: supers)
                #expect(closed, "\(type): supertypes of \(s) missing")
            }
        }
    }

    @Test("no cycles: a strict supertype never conforms back")
    func acyclic() {
        for type in db.declaredTypes {
            for s in db.supertypes(of: type) where db.conforms(s, to: type) {
                Issue.record("cycle between \(type) and \(s)")
            }
        }
    }

    @Test("sampled triples are transitive")
    func transitiveTriples() {
        let all = db.declaredTypes
        var rng = SplitMix64(seed: 42)
        for _ in 0..<20_000 {
            let a = all[Int(rng.next() % UInt64(all.count))]
            let b = all[Int(rng.next() % UInt64(all.count))]
            let c = all[Int(rng.next() % UInt64(all.count))]
            if db.conforms(a, to: b), db.conforms(b, to: c) { #expect(db.conforms(a, to: c), "\(a) \(b) \(c)") }
        }
    }

    @Test("every registered MIME type maps to a declared type that round-trips through its preferred MIME type")
    func everyMIMETypeMaps() throws {
        for name in mime.types {
            let type = try #require(db.type(tag: name, tagClass: .mimeType), "\(name)")
            #expect(type.isDeclared && !type.isDynamic, "\(name) → \(type)")
            let preferred = try #require(db.tags(of: type)[.mimeType]?.first, "\(type) has no MIME type")
            #expect(db.type(tag: preferred, tagClass: .mimeType) == type, "\(name) → \(type) → \(preferred)")
            #expect(db.conforms(type, to: .data) || name.hasPrefix("inode/"), "\(name) is not data")
        }
    }

    @Test("aliases resolve to their canonical type (unless the system table gives the alias its own type)")
    func aliases() throws {
        #expect(!mime.aliases.isEmpty)
        for (alias, canonical) in mime.aliases {
            let aliasType = try #require(db.type(tag: alias, tagClass: .mimeType))
            let canonicalType = try #require(db.type(tag: canonical, tagClass: .mimeType))
            let claimedBySystem = aliasType.isPublicType || aliasType.identifier.contains(".") && !aliasType.identifier.hasPrefix("org.freedesktop.mime.")
            if aliasType != canonicalType {
                #expect(claimedBySystem, "\(alias) → \(aliasType), but \(canonical) → \(canonicalType)")
            }
        }
        #expect(db.type(tag: "image/pjpeg", tagClass: .mimeType) == .jpeg)
        #expect(db.type(tag: "text/x-csv", tagClass: .mimeType) == .commaSeparatedText)
    }

    @Test("every sub-class-of line holds for types shared-mime-info defines")
    func subclassesHold() throws {
        for (child, parent) in mime.subclasses {
            let c = try #require(db.type(tag: child, tagClass: .mimeType, conformingTo: nil))
            let p = try #require(db.type(tag: parent, tagClass: .mimeType, conformingTo: nil))
            guard c.identifier.hasPrefix("org.freedesktop.mime."), !p.isDynamic else { continue }
            #expect(db.conforms(c, to: p), "\(child) → \(parent)")
        }
    }

    @Test("GIO's case quirk: mixed-case MIME types keep their spelling and get GIO's real description")
    func mixedCaseTypes() throws {
        for name in mime.types where name != name.lowercased() {
            let type = try #require(db.type(tag: name.lowercased(), tagClass: .mimeType, conformingTo: nil))
            guard type.identifier.hasPrefix("org.freedesktop.mime.") else { continue }
            #expect(db.tags(of: type)[.mimeType]?.first == name)
            let description = try #require(db.localizedDescription(of: type))
            #expect(!description.contains(name), "\(name): fallback description '\(description)'")
        }
    }

    @Test("media-type rules: text is plain text, image/audio/video are image/audio/movie")
    func mediaRules() throws {
        for name in mime.types {
            let type = try #require(db.type(tag: name, tagClass: .mimeType, conformingTo: nil))
            guard type.identifier.hasPrefix("org.freedesktop.mime.") else { continue }
            if name.hasPrefix("text/") { #expect(db.conforms(type, to: .plainText), "\(name)") }
            if name.hasPrefix("image/") { #expect(db.conforms(type, to: .image), "\(name)") }
            if name.hasPrefix("audio/") { #expect(db.conforms(type, to: .audio), "\(name)") }
            if name.hasPrefix("video/") { #expect(db.conforms(type, to: .movie), "\(name)") }
        }
    }

    @Test("derived identifiers are deterministic and reversible")
    func derivedIdentifiers() {
        #expect(TypeDatabase.derivedIdentifier(forMIMEType: "text/x-python3") == "org.freedesktop.mime.text.x-python3")
        #expect(TypeDatabase.derivedIdentifier(forMIMEType: "Application/Atom+XML") == "org.freedesktop.mime.application.atom_2bxml")
        for name in mime.types {
            let id = TypeDatabase.derivedIdentifier(forMIMEType: name)
            #expect(ContentType.isValidIdentifier(id))
            #expect(TypeDatabase.mimeType(fromDerivedIdentifier: id) == name.lowercased())
        }
    }

    @Test("the system table's tags do not collide: each preferred tag, constrained to the type, gives the type back")
    func systemTableConsistent() {
        for db in [TypeDatabase(sharedMIMEInfo: .empty), db] {
            for type in db.declaredTypes {
                if let m = db.tags(of: type)[.mimeType]?.first {
                    #expect(db.type(tag: m, tagClass: .mimeType, conformingTo: nil) == type, "\(type) \(m)")
                }
                // (Among shared-mime-info types a subtype may win its parent's extension by glob
                // weight, as video/x-theora+ogg does for .ogg; the law is for declared tables.)
                if let e = db.tags(of: type)[.filenameExtension]?.first, !type.identifier.hasPrefix("org.freedesktop.mime.") {
                    #expect(db.type(tag: e, tagClass: .filenameExtension, conformingTo: type) == type, "\(type) .\(e)")
                }
            }
        }
    }
}

