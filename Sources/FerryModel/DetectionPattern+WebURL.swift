extension TextScanner {
    /// Top-level domains that, after a bare `name.`, make the text a probable web address. Any
    /// other two-letter top-level domain counts too, except the file extensions below.
    private static let knownTopLevelDomains: Set<String> = [
        "com", "org", "net", "edu", "gov", "mil", "int", "info", "biz", "name", "pro", "aero", "coop",
        "museum", "mobi", "asia", "tel", "travel", "jobs", "cat", "app", "dev", "xyz", "online", "site",
        "tech", "store", "blog", "shop", "cloud", "page", "news", "top", "club", "design", "art", "live",
        "wiki", "email", "link", "space", "website", "digital", "agency", "today", "world", "life",
        "network", "social", "systems", "solutions", "one", "new", "google", "amazon", "apple",
        "microsoft", "company", "studio", "media", "group", "works", "services", "software", "academy",
        "church", "foundation", "center", "city", "guru", "ninja", "rocks", "codes", "tools", "zone",
        "berlin", "london", "nyc", "paris", "tokyo", "eu",
    ]

    /// Two-letter endings that are more often file extensions than country domains (`main.rs`,
    /// `README.md`); a bare name with one of them is a URL only with `www.`, a port or a path.
    private static let fileExtensionLike: Set<String> = [
        "md", "sh", "py", "rs", "js", "ts", "rb", "cc", "hs", "so", "db", "gz", "xz", "pm", "cs",
        "fs", "mk", "ml", "kt", "go", "pl", "ps", "el", "vb", "hh", "jl", "sc",
    ]

    /// Characters that never appear in a URL someone would paste: white space, controls, `"<>\^`{|}`.
    private static func isExcludedFromURL(_ c: UInt8) -> Bool {
        switch c {
        case 0...0x20, 0x7F, 0x22, 0x3C, 0x3E, 0x5C, 0x5E, 0x60, 0x7B, 0x7C, 0x7D: return true
        default: return false
        }
    }

    /// The whole of `s` is an `http`/`https` URL with a host, or a bare `domain.tld[:port][/path]`.
    static func isProbableWebURL(_ s: Bytes) -> Bool {
        guard !s.contains(where: isExcludedFromURL) else { return false }
        for scheme in ["https://", "http://"] where hasPrefix(s, scheme) {
            return isAuthorityAndRest(s[(s.startIndex + scheme.utf8.count)...], bare: false)
        }
        return isAuthorityAndRest(s, bare: true)
    }

    private static func hasPrefix(_ s: Bytes, _ prefix: String) -> Bool {
        let p = prefix.utf8
        guard s.count >= p.count else { return false }
        return zip(s, p).allSatisfy { lower($0) == $1 }
    }

    /// `[userinfo@]host[:port]` then an optional path, query or fragment.
    private static func isAuthorityAndRest(_ s: Bytes, bare: Bool) -> Bool {
        var authorityEnd = s.startIndex
        while authorityEnd < s.endIndex, ![0x2F, 0x3F, 0x23].contains(s[authorityEnd]) { authorityEnd += 1 }
        let hasRest = authorityEnd < s.endIndex
        var hostStart = s.startIndex
        if let at = s[s.startIndex..<authorityEnd].lastIndex(of: 0x40) {
            if bare { return false }  // user@host without a scheme is an email address
            hostStart = at + 1
        }
        let hostPort = s[hostStart..<authorityEnd]
        guard !hostPort.isEmpty else { return false }

        var hostEnd = hostPort.endIndex
        var hasPort = false
        if hostPort.first == 0x5B {  // [IPv6]
            guard !bare, let close = hostPort.firstIndex(of: 0x5D), close > hostPort.startIndex + 1,
                  hostPort[(hostPort.startIndex + 1)..<close].allSatisfy({ isHexDigit($0) || $0 == 0x3A || $0 == 0x2E })
            else { return false }
            hostEnd = close + 1
            if hostEnd < hostPort.endIndex {
                guard hostPort[hostEnd] == 0x3A, isPort(hostPort[(hostEnd + 1)...]) else { return false }
            }
            return true
        }
        if let colon = hostPort.lastIndex(of: 0x3A) {
            guard isPort(hostPort[(colon + 1)...]) else { return false }
            hostEnd = colon
            hasPort = true
        }
        var host = hostPort[hostPort.startIndex..<hostEnd]
        if host.count > 1 && host.last == 0x2E { host = host.dropLast() }  // example.com.
        guard !host.isEmpty, host.count <= 253 else { return false }
        if !bare { return isDomain(host, minimumLabels: 1) || isIPv4(host) }

        guard isDomain(host, minimumLabels: 2), !isIPv4(host) else { return false }
        let tld = String(decoding: host[topLevelDomainStart(host)...].map(lower), as: UTF8.self)
        if hasPrefix(host, "www.") || knownTopLevelDomains.contains(tld) { return true }
        guard tld.utf8.count == 2, tld.utf8.allSatisfy(isLetter) else { return false }
        return !fileExtensionLike.contains(tld) || hasPort || hasRest
    }

    private static func isHexDigit(_ c: UInt8) -> Bool { isDigit(c) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66) }

    private static func isPort(_ s: Bytes) -> Bool {
        guard (1...5).contains(s.count), s.allSatisfy(isDigit) else { return false }
        return s.reduce(0) { $0 * 10 + Int($1 - 0x30) } <= 65535
    }

    /// Four dot-separated decimal numbers 0–255.
    static func isIPv4(_ s: Bytes) -> Bool {
        var parts = 0, value = 0, digits = 0
        for c in s {
            if isDigit(c) {
                value = value * 10 + Int(c - 0x30)
                digits += 1
                guard digits <= 3, value <= 255 else { return false }
            } else if c == 0x2E {
                guard digits > 0 else { return false }
                parts += 1
                value = 0
                digits = 0
            } else {
                return false
            }
        }
        return digits > 0 && parts == 3
    }
}
