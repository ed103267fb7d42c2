extension TypeDatabase {
    /// The built-in system table: Apple's published `public.*` hierarchy (and the few system types
    /// Apple names outside `public.*`, such as `com.adobe.pdf`), plus Ferry's own
    /// `org.ferry.user-activity`.
    ///
    /// Order matters: when two entries claim the same tag, the earlier one is preferred. The first
    /// filename extension and the first MIME type of each entry are its preferred tags.
    /// Declarations of these identifiers by apps are ignored.
    static let systemTypes: [TypeDeclaration] = [
        // Roots and abstract content kinds.
        decl("public.item", [], description: "item"),
        decl("public.content", [], description: "content"),
        decl("public.composite-content", ["public.content"], description: "composite content"),
        decl("public.data", ["public.item"], mime: ["application/octet-stream"], description: "data"),
        decl("public.directory", ["public.item"], description: "directory"),
        decl("public.folder", ["public.directory"], mime: ["inode/directory"], description: "folder"),
        decl("public.symlink", ["public.item"], mime: ["inode/symlink"], description: "symbolic link"),
        decl("public.archive", ["public.data"], description: "archive"),
        decl("public.executable", ["public.item"], description: "executable"),

        // Text.
        decl("public.text", ["public.data", "public.content"], description: "text"),
        decl("public.plain-text", ["public.text"], ext: ["txt", "text"], mime: ["text/plain"], description: "text"),
        decl("public.utf8-plain-text", ["public.plain-text"], mime: ["text/plain;charset=utf-8"],
             description: "Unicode text, UTF-8 encoded"),
        decl("public.utf16-plain-text", ["public.plain-text"], mime: ["text/plain;charset=utf-16"],
             description: "Unicode text, UTF-16 encoded"),
        decl("public.utf16-external-plain-text", ["public.plain-text"], description: "Unicode text, UTF-16 encoded with byte-order mark"),
        decl("public.delimited-values-text", ["public.text"], description: "delimited values text"),
        decl("public.comma-separated-values-text", ["public.delimited-values-text"], ext: ["csv"],
             mime: ["text/csv", "text/comma-separated-values"], description: "comma-separated values"),
        decl("public.tab-separated-values-text", ["public.delimited-values-text"], ext: ["tsv"],
             mime: ["text/tab-separated-values"], description: "tab-separated values"),
        decl("public.utf8-tab-separated-values-text", ["public.tab-separated-values-text"],
             description: "UTF-8 tab-separated values"),
        decl("public.rtf", ["public.text"], ext: ["rtf"], mime: ["text/rtf", "application/rtf"], description: "rich text document"),
        decl("public.html", ["public.text"], ext: ["html", "htm", "shtml", "shtm"], mime: ["text/html"], description: "HTML document"),
        decl("public.xml", ["public.text"], ext: ["xml"], mime: ["application/xml", "text/xml"], description: "XML document"),
        decl("public.json", ["public.text"], ext: ["json"], mime: ["application/json"], description: "JSON document"),
        decl("public.yaml", ["public.text"], ext: ["yaml", "yml"], mime: ["application/x-yaml", "application/yaml", "text/yaml"],
             description: "YAML document"),
        decl("public.css", ["public.text"], ext: ["css"], mime: ["text/css"], description: "CSS style sheet"),
        decl("net.daringfireball.markdown", ["public.plain-text"], ext: ["md", "markdown"], mime: ["text/markdown"],
             description: "Markdown document"),
        decl("public.vcard", ["public.text"], ext: ["vcf", "vcard"], mime: ["text/vcard", "text/x-vcard", "text/directory"],
             description: "vCard"),
        decl("public.calendar-event", ["public.item"], description: "calendar event"),
        decl("com.apple.ical.ics", ["public.text", "public.calendar-event"], ext: ["ics"], mime: ["text/calendar"],
             description: "iCalendar event"),

        decl("com.apple.property-list", ["public.data"], ext: ["plist"], mime: ["application/x-plist"], description: "property list"),
        decl("com.apple.xml-property-list", ["public.xml", "com.apple.property-list"], ext: ["plist"],
             description: "XML property list"),
        decl("com.apple.binary-property-list", ["com.apple.property-list"], ext: ["plist"], description: "binary property list"),

        // Source code and scripts.
        decl("public.source-code", ["public.plain-text"], description: "source code"),
        decl("public.script", ["public.source-code"], description: "script"),
        decl("public.shell-script", ["public.script"], ext: ["sh", "command"], mime: ["application/x-shellscript", "application/x-sh"],
             description: "shell script"),
        decl("public.python-script", ["public.script"], ext: ["py"], mime: ["text/x-python", "text/x-python-script"],
             description: "Python script"),
        decl("public.ruby-script", ["public.script"], ext: ["rb", "rbw"], mime: ["application/x-ruby", "text/x-ruby-script"],
             description: "Ruby script"),
        decl("public.perl-script", ["public.script"], ext: ["pl", "pm"], mime: ["application/x-perl", "text/x-perl-script"],
             description: "Perl script"),
        decl("com.netscape.javascript-source", ["public.script"], ext: ["js", "mjs", "jscript", "javascript"],
             mime: ["text/javascript", "application/javascript"], description: "JavaScript script"),
        decl("public.c-source", ["public.source-code"], ext: ["c"], mime: ["text/x-csrc", "text/x-c"], description: "C source code"),
        decl("public.c-header", ["public.source-code"], ext: ["h"], mime: ["text/x-chdr"], description: "C header"),
        decl("public.c-plus-plus-source", ["public.source-code"], ext: ["cpp", "cp", "c++", "cc", "cxx"], mime: ["text/x-c++src"],
             description: "C++ source code"),
        decl("com.sun.java-source", ["public.source-code"], ext: ["java"], mime: ["text/x-java"], description: "Java source code"),
        decl("public.swift-source", ["public.source-code"], ext: ["swift"], mime: ["text/x-swift"], description: "Swift source code"),

        // URLs.
        decl("public.url", ["public.data"], description: "URL"),
        decl("public.file-url", ["public.url"], description: "file URL"),
        // Not Apple's: `text/uri-list` (RFC 2483) under the identifier shared-mime-info's rule
        // gives it, declared here so it is a known text type on every machine, not a dynamic one.
        decl("org.freedesktop.mime.text.uri-list", ["public.plain-text"], mime: ["text/uri-list"], description: "URI list"),

        // Images.
        decl("public.image", ["public.data", "public.content"], description: "image"),
        decl("public.png", ["public.image"], ext: ["png"], mime: ["image/png"], description: "PNG image"),
        decl("public.jpeg", ["public.image"], ext: ["jpeg", "jpg", "jpe"], mime: ["image/jpeg", "image/jpg"], description: "JPEG image"),
        decl("com.compuserve.gif", ["public.image"], ext: ["gif"], mime: ["image/gif"], description: "GIF image"),
        decl("public.tiff", ["public.image"], ext: ["tiff", "tif"], mime: ["image/tiff"], description: "TIFF image"),
        decl("com.microsoft.bmp", ["public.image"], ext: ["bmp", "dib"], mime: ["image/bmp"], description: "Windows bitmap image"),
        decl("org.webmproject.webp", ["public.image"], ext: ["webp"], mime: ["image/webp"], description: "WebP image"),
        decl("public.heif-standard", ["public.image"], description: "HEIF standard image"),
        decl("public.heic", ["public.heif-standard"], ext: ["heic"], mime: ["image/heic"], description: "HEIC image"),
        decl("public.heif", ["public.heif-standard"], ext: ["heif", "hif"], mime: ["image/heif"], description: "HEIF image"),
        decl("public.svg-image", ["public.image"], ext: ["svg"], mime: ["image/svg+xml"], description: "SVG image"),

        // Documents.
        decl("com.adobe.pdf", ["public.data", "public.composite-content"], ext: ["pdf"], mime: ["application/pdf"],
             description: "PDF document"),

        // Audio and video.
        decl("public.audiovisual-content", ["public.data", "public.content"], description: "audiovisual content"),
        decl("public.audio", ["public.audiovisual-content"], description: "audio"),
        decl("public.movie", ["public.audiovisual-content"], description: "movie"),
        decl("public.video", ["public.movie"], description: "video"),
        decl("public.mp3", ["public.audio"], ext: ["mp3"], mime: ["audio/mpeg", "audio/mp3"], description: "MP3 audio"),
        decl("public.mpeg-4", ["public.movie"], ext: ["mp4", "mpeg4"], mime: ["video/mp4"], description: "MPEG-4 movie"),
        decl("public.mpeg-4-audio", ["public.mpeg-4", "public.audio"], ext: ["m4a"], mime: ["audio/mp4", "audio/x-m4a"],
             description: "MPEG-4 audio"),
        decl("public.mpeg", ["public.movie"], ext: ["mpg", "mpeg"], mime: ["video/mpeg"], description: "MPEG movie"),
        decl("com.apple.quicktime-movie", ["public.movie"], ext: ["mov", "qt"], mime: ["video/quicktime"],
             description: "QuickTime movie"),
        decl("public.avi", ["public.movie"], ext: ["avi"], mime: ["video/x-msvideo", "video/avi"], description: "AVI movie"),
        decl("com.microsoft.waveform-audio", ["public.audio"], ext: ["wav", "wave"], mime: ["audio/x-wav", "audio/wav", "audio/vnd.wave"],
             description: "Waveform audio"),

        // Archives.
        decl("public.zip-archive", ["public.archive"], ext: ["zip"], mime: ["application/zip"], description: "ZIP archive"),
        decl("org.gnu.gnu-zip-archive", ["public.archive"], ext: ["gz", "gzip"], mime: ["application/gzip", "application/x-gzip"],
             description: "gzip archive"),
        decl("public.tar-archive", ["public.archive"], ext: ["tar"], mime: ["application/x-tar"], description: "tar archive"),

        // Ferry.
        decl("org.ferry.user-activity", ["public.data"], description: "Ferry user activity"),
    ]

    private static func decl(_ identifier: String, _ conformsTo: [String], ext: [String] = [], mime: [String] = [],
                             description: String) -> TypeDeclaration {
        TypeDeclaration(identifier: identifier, conformsTo: conformsTo, filenameExtensions: ext, mimeTypes: mime,
                        description: description)
    }
}
