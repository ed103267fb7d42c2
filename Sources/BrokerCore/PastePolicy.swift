#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FerryModel

/// Who may paste: the rules of the paste policy file, and the decision for one read.
///
/// Decision order for a registered app, first match wins:
/// 1. `deny <app>` — that app may never paste, not even on a user action;
/// 2. the app reads what it wrote itself — allowed (iOS 16 never asks about an app's own content);
/// 3. `allow <app>` — that app may paste at any time;
/// 4. `ask <app>` — allowed on a user action, otherwise the user is asked;
/// 5. `deny *` — every other registered app may never paste;
/// 6. `allow *` — every other registered app may paste at any time;
/// 7. a user action (the read says `user-action`) allows the app;
/// 8. an app with a foreground scene is asked about (`ask *`, the default): as iOS 16 asks
///    before an app reads another app's content without a paste control;
/// 9. otherwise (no user action, no foreground scene) the app is denied.
///
/// Callers that are not registered apps (the `ferry` CLI, scripts) are allowed unless the file
/// says `deny unregistered`. The wildcards apply to registered apps only.
///
/// Processes of the same user are not a security boundary: the policy keeps well-behaved apps
/// honest and makes every paste visible in the paste log; it does not stop a hostile process that
/// can ptrace the reader or read its files.
package struct PastePolicy: Sendable, Hashable {
    /// Who is reading.
    package enum Reader: Sendable, Hashable {
        /// A caller that is not a registered app (the CLI, a script).
        case unregistered
        /// A registered app, by app id.
        case app(String)
    }

    /// What the policy says about one read, with a sentence for the log or the error message.
    package enum Decision: Sendable, Hashable {
        /// The read may go ahead; `reason` says why ("org.example.Notes may paste: the user acted").
        case allow(reason: String)
        /// The read is refused; `reason` says why and how to allow it.
        case deny(reason: String)
        /// The read waits for the user's answer (``PasteConsents``); `reason` says why it asks.
        case ask(reason: String)

        /// True for `.allow`.
        package var isAllowed: Bool {
            if case .allow = self { return true }
            return false
        }

        /// The sentence, whichever the decision.
        package var reason: String {
            switch self {
            case .allow(let reason), .deny(let reason), .ask(let reason): return reason
            }
        }
    }

    /// What a rule line says.
    package enum Rule: Sendable, Hashable {
        /// `allow <app>`
        case allowApp(String)
        /// `deny <app>`
        case denyApp(String)
        /// `ask <app>`
        case askApp(String)
        /// `allow *`
        case allowAllApps
        /// `deny *`
        case denyAllApps
        /// `ask *` (what happens without a wildcard; accepted for clarity)
        case askAllApps
        /// `allow unregistered`
        case allowUnregistered
        /// `deny unregistered`
        case denyUnregistered
    }

    /// One rule and the line it came from (1-based).
    package struct Entry: Sendable, Hashable {
        /// What the line says.
        package var rule: Rule
        /// Its line number in the file.
        package var line: Int

        /// Makes an entry.
        package init(_ rule: Rule, line: Int) {
            self.rule = rule
            self.line = line
        }
    }

    /// The rules in file order.
    package let rules: [Entry]

    /// Where the rules came from, as shown to people (`~/.config/ferry/paste-policy`); nil for the
    /// built-in default when no file location is known.
    package var path: String?

    private let allowedApps: [String: Int]
    private let deniedApps: [String: Int]
    private let askedApps: [String: Int]
    private let allowAll: Int?
    private let denyAll: Int?
    private let denyUnregistered: Int?

    /// The built-in policy: unregistered callers may paste; apps may read what they wrote, may
    /// paste on a user action, and are asked about with a foreground scene.
    package static let `default` = PastePolicy(rules: [], path: nil)

    /// A policy made of `rules`. When a rule repeats, its first line is the one reported.
    ///
    /// - Parameters:
    ///   - rules: the rules and the lines they came from.
    ///   - path: where they came from, for the reasons.
    package init(rules: [Entry], path: String?) {
        self.rules = rules
        self.path = path
        var allowedApps: [String: Int] = [:], deniedApps: [String: Int] = [:], askedApps: [String: Int] = [:]
        var allowAll: Int?, denyAll: Int?, denyUnregistered: Int?
        for entry in rules {
            let line = entry.line
            switch entry.rule {
            case .allowApp(let app): allowedApps[app] = allowedApps[app] ?? line
            case .denyApp(let app): deniedApps[app] = deniedApps[app] ?? line
            case .askApp(let app): askedApps[app] = askedApps[app] ?? line
            case .askAllApps: break
            case .allowAllApps: allowAll = allowAll ?? line
            case .denyAllApps: denyAll = denyAll ?? line
            case .allowUnregistered: break
            case .denyUnregistered: denyUnregistered = denyUnregistered ?? line
            }
        }
        self.allowedApps = allowedApps
        self.deniedApps = deniedApps
        self.askedApps = askedApps
        self.allowAll = allowAll
        self.denyAll = denyAll
        self.denyUnregistered = denyUnregistered
    }

    /// The same rules, reported as coming from `path`.
    package func located(at path: String?) -> PastePolicy {
        var copy = self
        copy.path = path
        return copy
    }

    /// Decides whether `reader` may paste now.
    ///
    /// - Parameters:
    ///   - reader: who is reading.
    ///   - userAction: the read says the user asked for it (`user-action` option).
    ///   - hasForegroundScene: the reading app has a scene in the foreground.
    ///   - readsOwnContent: the item read was written by the reading app itself.
    /// - Returns: allow, deny or ask, with a sentence naming the app and the rule.
    package func decide(_ reader: Reader, userAction: Bool, hasForegroundScene: Bool,
                       readsOwnContent: Bool = false) -> Decision {
        let file = path ?? "the paste policy file"
        func at(_ line: Int) -> String { "\(file):\(line)" }
        guard case .app(let app) = reader else {
            if let line = denyUnregistered {
                return .deny(reason: "callers that are not registered apps may not paste: `deny unregistered` in \(at(line))")
            }
            return .allow(reason: "a caller that is not a registered app may paste (the CLI, scripts)")
        }
        if let line = deniedApps[app] {
            return .deny(reason: "\(app) may not paste: `deny \(app)` in \(at(line))")
        }
        if readsOwnContent { return .allow(reason: "\(app) may paste: it reads what it wrote itself") }
        if let line = allowedApps[app] {
            return .allow(reason: "\(app) may paste: `allow \(app)` in \(at(line))")
        }
        if let line = askedApps[app] {
            if userAction { return .allow(reason: "\(app) may paste: the user acted") }
            return .ask(reason: "\(app) reads another app's content without a user action: `ask \(app)` in \(at(line))")
        }
        if let line = denyAll {
            return .deny(reason: "\(app) may not paste: `deny *` in \(at(line))")
        }
        if let line = allowAll {
            return .allow(reason: "\(app) may paste: `allow *` in \(at(line))")
        }
        if userAction { return .allow(reason: "\(app) may paste: the user acted") }
        if hasForegroundScene {
            return .ask(reason: "\(app) reads another app's content without a user action (allow it in \(file))")
        }
        return .deny(reason: "\(app) may not paste without a user action or a foreground scene (allow it in \(file))")
    }
}
