@testable import FerryModel
import Testing

@Suite("TypeDatabase against GIO")
struct TypeDatabaseGIOTests {
    @Test("for every pair of shared-mime-info types, conforms(to:) agrees with g_content_type_is_a")
    func agreesWithGIO() {
        let db = TypeDatabase.shared
        let derived: [(type: ContentType, mime: String)] = db.declaredTypes.compactMap { type in
            guard type.identifier.hasPrefix("org.freedesktop.mime."), let mime = db.tags(of: type)[.mimeType]?.first else { return nil }
            return (type, mime)
        }
        #expect(derived.count > 100)
        // MIME types of system types whose parents come from Apple's table rather than
        // shared-mime-info: GIO paths through them may go where Ferry's do not (text/x-python3 is
        // an application/x-executable to GIO; public.python-script is not). The implicit roots
        // (text/plain, application/octet-stream, inode/directory) keep GIO's meaning.
        let roots: Set<String> = ["text/plain", "application/octet-stream", "inode/directory"]
        let systemMIMETypes = db.declaredTypes.filter { !$0.identifier.hasPrefix("org.freedesktop.mime.") }
            .flatMap { db.tags(of: $0)[.mimeType] ?? [] }.filter { !roots.contains($0) && !$0.contains(";") }
        func passesThroughSystemType(_ mime: String) -> Bool { systemMIMETypes.contains { GIOContentTypes.isA(mime, $0) } }
        var disagreements: [String] = []
        var checked = 0, positives = 0
        for a in derived {
            for b in derived {
                let gio = GIOContentTypes.isA(a.mime, b.mime)
                let ours = db.conforms(a.type, to: b.type)
                checked += 1
                if gio { positives += 1 }
                // Ferry never claims a conformance GIO denies (asked with the canonical, possibly
                // mixed-case spelling Ferry keeps); GIO's are all Ferry's unless the path may lead
                // through a system type.
                if ours && !gio || gio && !ours && !passesThroughSystemType(a.mime) {
                    disagreements.append("\(a.mime) → \(b.mime): GIO \(gio), Ferry \(ours)")
                }
            }
        }
        #expect(disagreements.isEmpty, "\(disagreements.count) of \(checked): \(disagreements.prefix(10))")
        #expect(checked == derived.count * derived.count)
        #expect(positives > 100, "too few conforming pairs to mean anything")
    }
}
