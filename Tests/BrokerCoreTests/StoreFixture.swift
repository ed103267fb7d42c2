import BrokerCore
import FerryModel
import Foundation

/// A fresh state directory under /tmp, deleted when released.
final class StoreFixture: Sendable {
    let directory: String

    init() throws {
        var template = Array("/tmp/ferry-store-XXXXXX".utf8CString)
        guard let path = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        directory = String(cString: path) + "/state"
    }

    deinit { try? FileManager.default.removeItem(atPath: (directory as NSString).deletingLastPathComponent) }

    func open(historyLimit: Int = 100) throws -> PasteboardStore {
        try PasteboardStore.open(directory: directory, historyLimit: historyLimit)
    }

    /// The names of the files in `blobs/` (temporary files included).
    func blobFiles() throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: directory + "/blobs"))
    }

    /// Every file under the state directory, concatenated.
    func everyByteOnDisk() throws -> Data {
        var all = Data()
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let relative = enumerator?.nextObject() as? String {
            let path = directory + "/" + relative
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue {
                all.append(try Data(contentsOf: URL(fileURLWithPath: path)))
            }
        }
        return all
    }
}

/// An item with one representation per (type, source).
func item(_ representations: [(ContentType, RepresentationSource)], options: StoredItem.Options = .init(),
          name: String? = nil) -> NewItem {
    NewItem(options: options, sourceAppID: "org.example.Writer", suggestedName: name,
            representations: representations.map { NewRepresentation(contentType: $0.0, data: $0.1) })
}

func text(_ string: String, options: StoredItem.Options = .init()) -> NewItem {
    item([(.utf8PlainText, .bytes(Data(string.utf8)))], options: options)
}

/// The bytes of a representation, whichever way the store hands them out.
func bytes(_ store: PasteboardStore, _ item: UUID, _ type: ContentType, now: Date = Date()) throws -> Data {
    switch try store.readData(item: item, representation: type, now: now) {
    case .bytes(let data): return data
    case .file(let fd, let size):
        defer { close(fd) }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: false)
        let data = try handle.readToEnd() ?? Data()
        precondition(Int64(data.count) == size)
        return data
    case .promised(let owner): throw FerryModelError(.unavailable, "promised by \(owner)")
    }
}

/// The text of the first item of a pasteboard.
func firstText(_ store: PasteboardStore, _ pasteboard: String = PasteboardStore.general) throws -> String? {
    guard let first = try store.items(in: pasteboard).first else { return nil }
    return String(decoding: try bytes(store, first.id, .utf8PlainText), as: UTF8.self)
}

/// A pattern that is easy to recognize: `count` bytes of `seed`, `seed+1`, ….
func pattern(_ count: Int, seed: UInt8 = 7) -> Data {
    Data((0..<count).map { UInt8(truncatingIfNeeded: Int(seed) &+ $0 &* 31) })
}

extension Data {
    func contains(_ needle: Data) -> Bool { range(of: needle) != nil }
}
