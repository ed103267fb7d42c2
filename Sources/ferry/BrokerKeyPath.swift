/// The broker's error messages lead with the key path of the argument at fault
/// (`options.userActivity.activityType: …`), for programs on the bus. The CLI never says
/// `options.app` to a person: a key path that is one of its options becomes that option
/// (`options.to` → `--to`), any other is dropped — the messages name what they are about.
enum BrokerKeyPath {
    /// Key paths the CLI has an option for.
    static let options: [String: String] = [
        "options.to": "--to", "options.screen": "--screen", "options.placement": "--placement",
        "options.item": "--item", "options.location": "--at",
    ]

    /// Named arguments of broker methods, without `options.`: the same treatment.
    static let arguments: Set<String> = ["app_id", "persistent_id", "source_session", "item_id", "activity_type"]

    /// `message` with a leading broker key path reworded (see the type); others unchanged.
    static func reworded(_ message: String) -> String {
        guard let colon = message.firstRange(of: ": ") else { return message }
        let keyPath = String(message[..<colon.lowerBound])
        guard isBrokerKeyPath(keyPath) else { return message }
        let rest = String(message[colon.upperBound...])
        if let option = options[keyPath] { return "\(option): \(rest)" }
        return rest
    }

    /// `options.…` or `changes.…` (with `[n]` indexes), or a named method argument.
    static func isBrokerKeyPath(_ text: String) -> Bool {
        if arguments.contains(text) { return true }
        guard text.hasPrefix("options.") || text.hasPrefix("changes.") else { return false }
        return text.utf8.allSatisfy { byte in
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x30 && byte <= 0x39)
                || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]") || byte == UInt8(ascii: "_")
        }
    }
}
