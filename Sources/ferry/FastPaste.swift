/// `ferry paste` parsed by hand, so the command scripts and editors run most often starts without
/// ArgumentParser's reflection (about a third of its start-up time).
///
/// It accepts only the plain forms — `paste` followed by `-t`/`--type`, `-i`/`--item`,
/// `-p`/`--pasteboard`, `-o`/`--output`, `--timeout` and `--bus`, each once and with its value as
/// the next argument, and `--primary` instead of `-p` — and returns nil for anything else (help, `--type=x`, a bad number, an
/// unknown option), which ArgumentParser then parses, validates and reports as usual.
enum FastPaste {
    static func request(_ arguments: ArraySlice<String>) -> PasteRequest? {
        guard arguments.first == "paste" else { return nil }
        var request = PasteRequest()
        // An array, not a Set: the first use of Set<String> in a process instantiates its metadata,
        // which in this static binary scans every protocol conformance (≈ 0.3 ms of start-up).
        var seen: [String] = []
        var rest = arguments.dropFirst()
        while let option = rest.popFirst() {
            if option == "--primary" {
                guard !seen.contains("pasteboard") else { return nil }
                seen.append("pasteboard")
                request.pasteboard = "primary"  // PasteboardName.primary
                continue
            }
            guard let value = rest.popFirst(), !value.hasPrefix("-") || value.count == 1 else { return nil }
            let key: String
            switch option {
            case "-t", "--type": key = "type"; request.type = value
            case "-i", "--item":
                guard let n = Int(value), n >= 0 else { return nil }
                key = "item"; request.item = n
            case "-p", "--pasteboard": key = "pasteboard"; request.pasteboard = value
            case "-o", "--output": key = "output"; request.output = value
            case "--timeout":
                guard let n = Int(value), n > 0 else { return nil }
                key = "timeout"; request.timeout = n
            case "--bus": key = "bus"; request.bus = value
            default: return nil
            }
            guard !seen.contains(key) else { return nil }
            seen.append(key)
        }
        return request
    }
}
