import FerryModel

/// How the desktop's type names and Ferry's content types map onto each other, both ways: a pure
/// value, the same for the X11 and the Wayland backend.
///
/// Import (desktop-bridge R4): the text aliases (`UTF8_STRING`, `STRING`, `TEXT`,
/// `text/plain;charset=utf-8`, `text/plain`, …) fold into one UTF-8 text read from the best name
/// offered; MIME types map through the type database (an unknown one to a dynamic type);
/// protocol atoms and other names that are not MIME types are dropped; some types are only
/// proxied, never stored (they break apps, are private to a toolkit, or are further encodings of
/// an image already stored); `x-special/gnome-copied-files` gives a URI list when the owner
/// offers none. Export (R7): every representation's MIME type plus the text aliases toolkits
/// look for, and the file-manager forms of a file item.
package struct DesktopTypeMap: Sendable {
    /// Which family of names a backend speaks.
    package enum Flavor: String, Sendable, Hashable {
        /// X11 target atoms: MIME types and the ICCCM text atoms.
        case x11
        /// Wayland data-control: MIME types only.
        case wayland
    }

    /// One representation of an imported item: its content type, the offered name its bytes are
    /// read from, and how they are converted.
    package struct Imported: Sendable, Hashable {
        /// The content type on Ferry's pasteboard.
        package var contentType: ContentType
        /// The name asked of the desktop owner.
        package var sourceName: String
        /// How the owner's bytes become the representation's.
        package var conversion: ByteConversion
        /// Whether the bridge copies it eagerly so it outlives its source (false: only proxied).
        package var isStorable: Bool
    }

    /// What to publish for one desktop offer.
    package struct ImportPlan: Sendable, Hashable {
        /// The representations, in the owner's order (the text at its first alias).
        package var representations: [Imported]
        /// The name of the KDE password-manager hint, when offered: read it first.
        package var secretHint: String?
        /// Offered names that map to nothing (protocol atoms, non-MIME names, past the type cap).
        package var dropped: [String]
    }

    /// One name the bridge offers on the desktop for a Ferry item: what it reads from ferryd and
    /// how it converts.
    package struct Exported: Sendable, Hashable {
        /// The name offered (`UTF8_STRING`, `image/png`).
        package var name: String
        /// The representation read from ferryd.
        package var contentType: ContentType
        /// How its bytes become the name's.
        package var conversion: ByteConversion
    }

    /// The X11 targets that are protocol, not data (ICCCM §2.6.2, desktop-bridge R4).
    package static let protocolNames: Set<String> = [
        "TARGETS", "MULTIPLE", "TIMESTAMP", "SAVE_TARGETS", "DELETE", "INSERT_SELECTION", "INSERT_PROPERTY",
        "INCR", "PIXMAP", "TARGET_SIZES", "CLIPBOARD_MANAGER", "ATOM_PAIR",
    ]
    /// KDE's password-manager hint: `secret` makes the item sensitive.
    package static let secretHintName = "x-kde-passwordManagerHint"
    /// The file managers' list of copied or cut files.
    package static let gnomeCopiedFiles = "x-special/gnome-copied-files"
    /// A list of URIs, one a line (RFC 2483).
    package static let uriList = "text/uri-list"
    /// Text names in the order the bridge prefers to read them, with their conversion.
    /// `UTF8_STRING` first: it carries the app's text as it is, while GTK serves the `text/plain`
    /// names with every line end turned into CRLF.
    static let textNames: [(name: String, conversion: ByteConversion)] = [
        ("UTF8_STRING", .none), ("text/plain;charset=utf-8", .none), ("text/plain", .none), ("TEXT", .none),
        ("text/plain;charset=utf-16", .utf16ToUTF8), ("text/plain;charset=iso-8859-1", .latin1ToUTF8),
        ("STRING", .latin1ToUTF8),
    ]
    /// Names that are text aliases but never read (ISO 2022 is not converted; others are offered beside it).
    static let ignoredTextNames: Set<String> = ["COMPOUND_TEXT", "text/plain;charset=utf8", "text/plain;charset=us-ascii"]
    /// Types that only proxy: they break apps when a manager serves them (Inkscape), or are a
    /// toolkit's private plumbing.
    static let proxyOnlyNames: Set<String> = ["image/x-inkscape-svg", "application/vnd.portal.filetransfer",
                                              "application/vnd.portal.files"]
    static let proxyOnlyPrefixes = ["application/x-qt-", "chromium/x-", "application/x-kde-", "application/x-moz-",
                                    "application/x-openoffice-", "application/x-libreoffice-", "application/x-gtk-"]
    /// Image encodings that lose nothing: the first of these stored makes other encodings proxy-only.
    static let losslessImages: Set<String> = ["image/png", "image/bmp", "image/tiff", "image/x-portable-pixmap", "image/webp"]

    /// The most types an import takes (Klipper ignores more than 50 formats).
    package var maximumTypes: Int

    /// Makes a map taking at most `maximumTypes` representations per offer.
    package init(maximumTypes: Int = 50) { self.maximumTypes = maximumTypes }

    /// The import plan for an offer's names, in the owner's order.
    package func importPlan(for names: [String]) -> ImportPlan {
        var plan = ImportPlan(representations: [], secretHint: nil, dropped: [])
        let lowered = Set(names.map { Self.normalized($0) })
        let text = Self.textNames.first { lowered.contains(Self.normalized($0.name)) }
        var textPlaced = false
        var seen: Set<ContentType> = []
        let storedImage = Self.storedImage(in: names)
        let hasURIList = lowered.contains(Self.uriList)
        for name in names {
            let key = Self.normalized(name)
            if name.lowercased() == Self.secretHintName.lowercased() { plan.secretHint = name; continue }
            if Self.protocolNames.contains(name) { plan.dropped.append(name); continue }
            if Self.textNames.contains(where: { Self.normalized($0.name) == key }) || Self.ignoredTextNames.contains(key)
                || (key.hasPrefix("text/plain;charset=") && text != nil) {
                guard !textPlaced, let text else { if textPlaced { continue }; plan.dropped.append(name); continue }
                textPlaced = true
                let source = names.first { Self.normalized($0) == Self.normalized(text.name) } ?? text.name
                append(Imported(contentType: .utf8PlainText, sourceName: source, conversion: text.conversion, isStorable: true),
                       to: &plan, seen: &seen, name: name)
                continue
            }
            if key == Self.gnomeCopiedFiles {
                // The file managers' form: its URIs become the item's URI list (the broker adds
                // the file URL) unless the owner offers one itself.
                if !hasURIList, let type = ContentType(mimeType: Self.uriList) {
                    append(Imported(contentType: type, sourceName: name, conversion: .gnomeCopiedFilesToURIList, isStorable: true),
                           to: &plan, seen: &seen, name: name)
                } else {
                    plan.dropped.append(name)
                }
                continue
            }
            guard Self.isMIMEType(name), let type = ContentType(mimeType: name) else { plan.dropped.append(name); continue }
            let storable = !Self.isProxyOnly(key) && (!key.hasPrefix("image/") || key == storedImage)
            append(Imported(contentType: type, sourceName: name, conversion: .none, isStorable: storable),
                   to: &plan, seen: &seen, name: name)
        }
        return plan
    }

    private func append(_ imported: Imported, to plan: inout ImportPlan, seen: inout Set<ContentType>, name: String) {
        guard plan.representations.count < maximumTypes, seen.insert(imported.contentType).inserted else {
            plan.dropped.append(name)
            return
        }
        plan.representations.append(imported)
    }

    /// The names to offer for a Ferry item with `types` (fidelity order), in that order: a file
    /// URL or URI list is offered as `text/uri-list` and `x-special/gnome-copied-files` too.
    package func exportNames(for types: [ContentType], flavor: Flavor) -> [Exported] {
        var out: [Exported] = []
        var names: Set<String> = []
        func add(_ name: String, _ type: ContentType, _ conversion: ByteConversion) {
            if names.insert(name).inserted { out.append(Exported(name: name, contentType: type, conversion: conversion)) }
        }
        let uriList = ContentType(mimeType: Self.uriList)
        for type in types {
            if type == .utf8PlainText || type == .plainText {
                add("text/plain;charset=utf-8", type, .none)
                add("text/plain", type, .none)
                if flavor == .x11 {
                    add("UTF8_STRING", type, .none)
                    add("TEXT", type, .none)
                    add("STRING", type, .utf8ToLatin1)
                }
                continue
            }
            if type == .fileURL || type == uriList {
                add(Self.uriList, type, .none)
                add(Self.gnomeCopiedFiles, type, .uriListToGnomeCopiedFiles)
                continue
            }
            if let mime = type.preferredMIMEType, Self.isMIMEType(mime) { add(mime, type, .none) }
        }
        return out
    }

    /// The one image encoding an import stores: the first lossless one offered, else the first image.
    static func storedImage(in names: [String]) -> String? {
        let images = names.map { normalized($0) }.filter { $0.hasPrefix("image/") && !isProxyOnly($0) }
        return images.first { losslessImages.contains($0) } ?? images.first
    }

    static func isProxyOnly(_ key: String) -> Bool {
        proxyOnlyNames.contains(key) || proxyOnlyPrefixes.contains { key.hasPrefix($0) }
    }

    /// `type/subtype` with printable ASCII and no spaces.
    static func isMIMEType(_ name: String) -> Bool {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[0].isEmpty && !parts[1].isEmpty
            && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F } && name.utf8.count <= 255
    }

    /// Lowercased, spaces around parameters removed (`text/plain; charset=UTF-8` → `text/plain;charset=utf-8`).
    /// Atoms without a slash are case-sensitive and stay as they are.
    static func normalized(_ name: String) -> String {
        guard name.contains("/") else { return name }
        return String(name.lowercased().filter { $0 != " " })
    }
}
