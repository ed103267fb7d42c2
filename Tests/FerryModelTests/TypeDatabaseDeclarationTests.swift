import FerryModel
import Synchronization
import Testing

@Suite("TypeDatabase: explicit inputs and app declarations")
struct TypeDatabaseDeclarationTests {
    /// A small shared-mime-info with a chain, an alias and globs.
    static let mime = SharedMIMEInfo.parse(
        types: "text/plain\ntext/x-base\ntext/x-child\nimage/x-thing\napplication/x-blob\ninode/directory\ninode/socket\n",
        aliases: "text/x-child-alias text/x-child\nimage/x-thing-old image/x-thing\n",
        subclasses: "text/x-child text/x-base\ntext/x-base text/plain\n",
        globs2: "60:text/x-child:*.child\n50:image/x-thing:*.thing\n50:text/x-base:*.child\n50:application/x-blob:*.C:cs\n")

    func makeDatabase() -> TypeDatabase { TypeDatabase(sharedMIMEInfo: Self.mime) }

    @Test("explicit shared-mime-info: parents, media rules, aliases, globs by weight, case-sensitive globs")
    func explicitInputs() throws {
        let db = makeDatabase()
        let child = try #require(db.type(tag: "text/x-child", tagClass: .mimeType))
        let base = try #require(db.type(tag: "text/x-base", tagClass: .mimeType))
        #expect(child.identifier == "org.freedesktop.mime.text.x-child")
        #expect(db.isDeclared(child))
        #expect(db.conforms(child, to: base))
        #expect(db.conforms(child, to: .plainText))
        #expect(db.type(tag: "text/x-child-alias", tagClass: .mimeType) == child)
        #expect(db.types(tag: "child", tagClass: .filenameExtension) == [child, base])
        let thing = try #require(db.type(tag: "image/X-THING", tagClass: .mimeType))
        #expect(db.conforms(thing, to: .image))
        #expect(db.type(tag: "image/x-thing-old", tagClass: .mimeType) == thing)
        let blob = try #require(db.type(tag: "application/x-blob", tagClass: .mimeType))
        #expect(db.type(tag: "C", tagClass: .filenameExtension, conformingTo: nil) == blob)
        #expect(db.type(tag: "c", tagClass: .filenameExtension, conformingTo: nil) == ContentType("public.c-source"))
        #expect(db.type(tag: "inode/directory", tagClass: .mimeType, conformingTo: nil) == .folder)
        let socket = try #require(db.type(tag: "inode/socket", tagClass: .mimeType, conformingTo: nil))
        #expect(db.isDeclared(socket) && !db.conforms(socket, to: .data))
        // Not loaded from GIO: no GIO descriptions.
        #expect(db.localizedDescription(of: child) == nil)
    }

    /// Counts calls of a loader.
    final class LoadCounter: Sendable {
        let count = Mutex(0)
        func load() -> SharedMIMEInfo {
            count.withLock { $0 += 1 }
            return TypeDatabaseDeclarationTests.mime
        }
    }

    @Test("a lazily loading database answers system questions without loading, and loads once on the first miss")
    func lazyLoading() throws {
        let counter = LoadCounter()
        let db = TypeDatabase(sharedMIMEInfoLoader: { counter.load() })
        #expect(db.conforms(.png, to: .image))
        #expect(!db.conforms(.png, to: .text))
        #expect(db.type(withIdentifier: "PUBLIC.PNG") == .png)
        #expect(db.supertypes(of: .png) == [.image, .data, .content, .item])
        #expect(db.localizedDescription(of: .pdf) == "PDF document")
        #expect(db.isDeclared(.folder))
        #expect(!db.isComplete)
        #expect(counter.count.withLock { $0 } == 0)

        // An identifier only shared-mime-info declares: loads, then finds it.
        let child = try #require(db.type(withIdentifier: "org.freedesktop.mime.text.x-child"))
        #expect(db.isComplete)
        #expect(db.conforms(child, to: .plainText))
        #expect(db.type(tag: "text/x-child", tagClass: .mimeType) == child)
        #expect(db.types(tag: "child", tagClass: .filenameExtension).first == child)
        #expect(counter.count.withLock { $0 } == 1)

        // A tag lookup also loads; so does registering.
        let other = TypeDatabase(sharedMIMEInfoLoader: { counter.load() })
        #expect(other.type(tag: "thing", tagClass: .filenameExtension)?.isDynamic == false)
        let third = TypeDatabase(sharedMIMEInfoLoader: { counter.load() })
        try third.register([TypeDeclaration(identifier: "com.example.x", conformsTo: ["org.freedesktop.mime.text.x-base"])],
                           exported: true)
        #expect(third.conforms(try #require(third.type(withIdentifier: "com.example.x")), to: .plainText))
        #expect(counter.count.withLock { $0 } == 3)
    }

    @Test("a cycle in system data is broken, not fatal")
    func cyclicSystemData() throws {
        let db = TypeDatabase(sharedMIMEInfo: .parse(types: "text/x-a\ntext/x-b\n", subclasses: "text/x-a text/x-b\ntext/x-b text/x-a\n"))
        let a = try #require(db.type(tag: "text/x-a", tagClass: .mimeType))
        let b = try #require(db.type(tag: "text/x-b", tagClass: .mimeType))
        #expect(db.conforms(a, to: b) != db.conforms(b, to: a))
    }

    @Test("an exported declaration overrides an imported one; a later import does not override")
    func exportedOverridesImported() throws {
        let db = makeDatabase()
        try db.register([TypeDeclaration(identifier: "com.example.recipe", conformsTo: ["public.text"],
                                         filenameExtensions: ["recipe"], description: "Imported recipe")], exported: false)
        let recipe = try #require(db.type(withIdentifier: "com.example.recipe"))
        #expect(db.localizedDescription(of: recipe) == "Imported recipe")
        #expect(db.conforms(recipe, to: .text))

        try db.register([TypeDeclaration(identifier: "com.example.recipe", conformsTo: ["public.json"],
                                         filenameExtensions: ["recipe"], description: "Exported recipe")], exported: true)
        #expect(db.localizedDescription(of: recipe) == "Exported recipe")
        #expect(db.conforms(recipe, to: .json))

        try db.register([TypeDeclaration(identifier: "com.example.recipe", conformsTo: ["public.image"],
                                         description: "Imported again")], exported: false)
        #expect(db.localizedDescription(of: recipe) == "Exported recipe")
        #expect(!db.conforms(recipe, to: .image))
        #expect(db.type(tag: "recipe", tagClass: .filenameExtension) == recipe)
    }

    @Test("an imported declaration never replaces a shared-mime-info type; an exported one does")
    func importedDoesNotOverrideSystemData() throws {
        let db = makeDatabase()
        let id = "org.freedesktop.mime.image.x-thing"
        try db.register([TypeDeclaration(identifier: id, conformsTo: ["public.text"], description: "mine")], exported: false)
        let thing = try #require(db.type(withIdentifier: id))
        #expect(db.conforms(thing, to: .image) && !db.conforms(thing, to: .text))
        try db.register([TypeDeclaration(identifier: id, conformsTo: ["public.text"], description: "mine")], exported: true)
        #expect(db.conforms(thing, to: .text) && !db.conforms(thing, to: .image))
    }

    @Test("declared tags are matched in canonical form; invalid declared tags match nothing")
    func declaredTagsNormalized() throws {
        let db = makeDatabase()
        try db.register([TypeDeclaration(identifier: "com.example.doc", conformsTo: ["public.data"],
                                         filenameExtensions: ["ExDoc", ".bad", "a/b"],
                                         mimeTypes: ["Application/X-ExDoc; Version=2", "not a mime"])], exported: true)
        let doc = try #require(db.type(withIdentifier: "com.example.doc"))
        #expect(db.type(tag: "exdoc", tagClass: .filenameExtension) == doc)
        #expect(db.type(tag: "application/x-exdoc;version=2", tagClass: .mimeType) == doc)
        #expect(db.tags(of: doc)[.filenameExtension]?.first == "ExDoc")
    }

    @Test("re-declaring a system type is ignored")
    func systemTypesAreFixed() throws {
        let db = makeDatabase()
        for exported in [true, false] {
            try db.register([TypeDeclaration(identifier: "public.png", conformsTo: ["public.text"], filenameExtensions: ["pngx"],
                                             description: "Hijacked")], exported: exported)
            #expect(!db.conforms(.png, to: .text))
            #expect(db.localizedDescription(of: .png) == "PNG image")
            #expect(db.type(tag: "pngx", tagClass: .filenameExtension)?.isDynamic == true)
        }
    }

    @Test("unknown parents: the type conforms to what is known, and to the parent once it is declared")
    func unknownParents() throws {
        let db = makeDatabase()
        try db.register([TypeDeclaration(identifier: "com.example.child", conformsTo: ["com.example.missing", "public.text"])],
                        exported: true)
        let child = try #require(db.type(withIdentifier: "com.example.child"))
        #expect(db.conforms(child, to: .text))
        #expect(db.type(withIdentifier: "com.example.missing") == nil)
        try db.register([TypeDeclaration(identifier: "com.example.missing", conformsTo: ["public.image"])], exported: false)
        let missing = try #require(db.type(withIdentifier: "com.example.missing"))
        #expect(db.conforms(child, to: missing))
        #expect(db.conforms(child, to: .image))
    }

    @Test("a cycle is rejected with an error naming the types, and the database is unchanged")
    func cycleRejected() throws {
        let db = makeDatabase()
        try db.register([TypeDeclaration(identifier: "com.example.a", conformsTo: ["com.example.b"])], exported: true)
        let error = #expect(throws: TypeDatabaseError.self) {
            try db.register([TypeDeclaration(identifier: "com.example.b", conformsTo: ["com.example.a"])], exported: true)
        }
        guard case .cycle(let ids)? = error else { Issue.record("expected a cycle, got \(String(describing: error))"); return }
        #expect(Set(ids) == ["com.example.a", "com.example.b"])
        #expect(error?.description.contains("com.example.a") == true)
        #expect(db.type(withIdentifier: "com.example.b") == nil)

        #expect(throws: TypeDatabaseError.self) {
            try db.register([TypeDeclaration(identifier: "com.example.self", conformsTo: ["com.example.self"])], exported: false)
        }
        #expect(throws: TypeDatabaseError.invalidIdentifier("bad id")) {
            try db.register([TypeDeclaration(identifier: "bad id", conformsTo: [])], exported: true)
        }
        #expect(throws: TypeDatabaseError.self) {
            try db.register([TypeDeclaration(identifier: "dyn.abc", conformsTo: [])], exported: true)
        }
    }

    @Test("queries stay consistent while declarations are registered concurrently")
    func concurrentUse() async throws {
        let db = makeDatabase()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<4 {
                group.addTask {
                    try db.register([TypeDeclaration(identifier: "com.example.t\(i)", conformsTo: ["public.text"])], exported: true)
                }
                group.addTask {
                    for _ in 0..<2_000 { #expect(ContentType.png.conforms(to: .image) && db.conforms(.png, to: .image)) }
                }
            }
            try await group.waitForAll()
        }
        for i in 0..<4 { #expect(db.type(withIdentifier: "com.example.t\(i)").map { db.conforms($0, to: .text) } == true) }
    }
}
