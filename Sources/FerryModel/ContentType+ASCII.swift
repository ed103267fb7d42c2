extension String {
    /// The same as `lowercased()`, faster for the ASCII identifiers and MIME types on hot paths:
    /// returns `self` when there is nothing to change and maps bytes when it is all ASCII.
    var fastLowercased: String {
        // 0: nothing to change, 1: ASCII with capitals, 2: not ASCII.
        let kind = utf8.withContiguousStorageIfAvailable { buffer -> Int in
            var hasUpper = false
            for c in buffer {
                if c >= 0x80 { return 2 }
                hasUpper = hasUpper || (c >= 0x41 && c <= 0x5A)
            }
            return hasUpper ? 1 : 0
        } ?? 2
        switch kind {
        case 0: return self
        case 1: return String(decoding: utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
        default: return lowercased()
        }
    }
}
