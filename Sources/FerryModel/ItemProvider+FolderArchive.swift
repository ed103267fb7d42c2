#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import CZlib

/// Writes a folder as a zip archive, as Apple delivers a folder asked for as data.
///
/// The archive holds the folder itself (`tree/`, `tree/docs/note.txt`, …), entries sorted by path,
/// stored without compression, UTF-8 names, Unix permissions, every timestamp 1980-01-01 00:00 (so
/// the same folder always gives the same bytes). Symbolic links are left out, never followed.
enum FolderArchive {
    /// The largest archive Ferry builds in memory (the 32-bit zip format's own limit is 4 GiB).
    static let maximumSize = 1 << 30

    static func zip(folder: URL, progress: ItemProvider.Progress) throws -> Data {
        let fm = FileManager.default
        let root = folder.lastPathComponent.isEmpty ? "folder" : folder.lastPathComponent
        let paths: [String]
        do {
            paths = try fm.subpathsOfDirectory(atPath: folder.path).sorted()
        } catch {
            throw FerryModelError(.unavailable, "cannot list the folder \(folder.path): \(error)")
        }
        var archive = Data()
        var central = Data()
        var count = 0
        for relative in [""] + paths {
            try ItemProvider.checkCancelled(progress)
            let url = relative.isEmpty ? folder : folder.appendingPathComponent(relative)
            guard let attributes = try? fm.attributesOfItem(atPath: url.path),
                  let type = attributes[.type] as? FileAttributeType
            else { continue }
            let mode = UInt32(truncatingIfNeeded: (attributes[.posixPermissions] as? Int) ?? Int((attributes[.posixPermissions] as? UInt) ?? 0o644))
            let name = relative.isEmpty ? root : root + "/" + relative
            let entry: (name: String, data: Data, external: UInt32)
            switch type {
            case .typeDirectory:
                entry = (name + "/", Data(), (0o040000 | mode) << 16 | 0x10)
            case .typeRegular:
                let data: Data
                do { data = try Data(contentsOf: url) } catch {
                    throw FerryModelError(.unavailable, "cannot read \(url.path): \(error)")
                }
                entry = (name, data, (0o100000 | mode) << 16)
            default:
                continue  // symbolic links, sockets, devices
            }
            count += 1
            let nameBytes = Data(entry.name.utf8)
            guard count < 0xFFFF, nameBytes.count < 0xFFFF,
                  archive.count + entry.data.count + nameBytes.count * 2 + central.count + 200 < maximumSize
            else {
                throw FerryModelError(.tooLarge, "the folder \(folder.path) is too large to deliver as data; load it as a file")
            }
            let crc = CRC32.checksum(entry.data)
            let offset = UInt32(archive.count)
            // Local file header.
            archive.appendLE(UInt32(0x0403_4B50)); archive.appendLE(UInt16(20)); archive.appendLE(UInt16(0x0800))
            archive.appendLE(UInt16(0)); archive.appendLE(UInt16(0)); archive.appendLE(UInt16(0x0021))
            archive.appendLE(crc); archive.appendLE(UInt32(entry.data.count)); archive.appendLE(UInt32(entry.data.count))
            archive.appendLE(UInt16(nameBytes.count)); archive.appendLE(UInt16(0))
            archive.append(nameBytes); archive.append(entry.data)
            // Central directory header.
            central.appendLE(UInt32(0x0201_4B50)); central.appendLE(UInt16(0x0314)); central.appendLE(UInt16(20))
            central.appendLE(UInt16(0x0800)); central.appendLE(UInt16(0)); central.appendLE(UInt16(0)); central.appendLE(UInt16(0x0021))
            central.appendLE(crc); central.appendLE(UInt32(entry.data.count)); central.appendLE(UInt32(entry.data.count))
            central.appendLE(UInt16(nameBytes.count)); central.appendLE(UInt16(0)); central.appendLE(UInt16(0))
            central.appendLE(UInt16(0)); central.appendLE(UInt16(0)); central.appendLE(entry.external); central.appendLE(offset)
            central.append(nameBytes)
            progress.completedUnitCount = Int64(archive.count)
        }
        let centralOffset = UInt32(archive.count)
        archive.append(central)
        // End of central directory.
        archive.appendLE(UInt32(0x0605_4B50)); archive.appendLE(UInt16(0)); archive.appendLE(UInt16(0))
        archive.appendLE(UInt16(count)); archive.appendLE(UInt16(count))
        archive.appendLE(UInt32(central.count)); archive.appendLE(centralOffset); archive.appendLE(UInt16(0))
        return archive
    }
}

/// The CRC-32 of a zip entry, from the system zlib.
enum CRC32 {
    static func checksum(_ data: Data) -> UInt32 {
        data.withUnsafeBytes { bytes in
            UInt32(crc32(0, bytes.baseAddress?.assumingMemoryBound(to: Bytef.self), uInt(bytes.count)))
        }
    }
}

extension Data {
    mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
