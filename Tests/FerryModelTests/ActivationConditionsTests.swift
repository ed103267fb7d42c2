import FerryModel
import Testing

@Suite struct ActivationConditionsTests {
    @Test func defaultsCanActivateForAnythingAndPreferNothing() {
        let conditions = SceneActivationConditions()
        #expect(conditions.canActivate(for: "notes/groceries"))
        #expect(conditions.canActivate(for: nil))
        #expect(!conditions.prefersToActivate(for: "notes/groceries"))
    }

    @Test func equalityAndBeginsWith() throws {
        let conditions = try SceneActivationConditions(canActivateFor: "self BEGINSWITH 'notes/'",
                                                       prefersToActivateFor: "SELF == 'notes/groceries'")
        #expect(conditions.canActivate(for: "notes/meeting"))
        #expect(!conditions.canActivate(for: "photos/lake"))
        #expect(!conditions.canActivate(for: nil))
        #expect(conditions.prefersToActivate(for: "notes/groceries"))
        #expect(!conditions.prefersToActivate(for: "notes/meeting"))
    }

    @Test func matchRanksPreferringScenesFirst() throws {
        let editor = try SceneActivationConditions(canActivateFor: "SELF BEGINSWITH 'notes/'",
                                                   prefersToActivateFor: "SELF == 'notes/groceries'")
        let anything = SceneActivationConditions()
        let photos = try SceneActivationConditions(canActivateFor: "SELF BEGINSWITH 'photos/'")
        #expect(editor.match(for: "notes/groceries") == .prefers)
        #expect(editor.match(for: "notes/meeting") == .can)
        #expect(photos.match(for: "notes/groceries") == .cannot)
        let best = [("photos", photos), ("anything", anything), ("editor", editor)]
            .max { $0.1.match(for: "notes/groceries") < $1.1.match(for: "notes/groceries") }
        #expect(best?.0 == "editor")
        // A scene that "prefers" content it cannot show does not get it.
        let confused = try SceneActivationConditions(canActivateFor: "FALSEPREDICATE", prefersToActivateFor: "TRUEPREDICATE")
        #expect(confused.match(for: "x") == .cannot)
    }

    @Test func compoundNotAndCaseInsensitive() throws {
        let p = try ActivationPredicate(format: "(SELF BEGINSWITH \"notes/\" AND NOT SELF ENDSWITH '.tmp') || self ==[c] 'INBOX'")
        #expect(p.evaluate("notes/a"))
        #expect(!p.evaluate("notes/a.tmp"))
        #expect(p.evaluate("inbox"))
        #expect(!p.evaluate("photos/a"))
        #expect(try ActivationPredicate(format: "NOT (SELF == 'x' OR SELF == 'y')").evaluate("z"))
        #expect(try ActivationPredicate(format: "!(SELF CONTAINS 'draft')").evaluate("notes/final"))
        #expect(try ActivationPredicate(format: "SELF IN {'a', 'b'}").evaluate("b"))
        #expect(try ActivationPredicate(format: "'x' != SELF").evaluate("y"))
        #expect(try ActivationPredicate(format: "TRUEPREDICATE AND FALSEPREDICATE") == .and([.truePredicate, .falsePredicate]))
    }

    @Test func formatRoundTrips() throws {
        for text in ["SELF == 'a\\'b'", "self BEGINSWITH 'notes/' AND NOT (SELF == 'x' OR SELF CONTAINS[c] 'Y')",
                     "TRUEPREDICATE", "SELF IN {'a', 'b'}", "NOT NOT SELF ENDSWITH '\"'"] {
            let p = try ActivationPredicate(format: text)
            #expect(try ActivationPredicate(format: p.predicateFormat) == p, "\(text) → \(p.predicateFormat)")
        }
        #expect(ActivationPredicate.beginsWith("notes/").predicateFormat == "SELF BEGINSWITH \"notes/\"")
    }

    @Test(arguments: [
        ("SELF MATCHES 'notes/.*'", "regular expressions"),
        ("SELF LIKE 'notes*'", "LIKE"),
        ("title == 'x'", "only SELF"),
        ("SELF == $name", "variables"),
        ("SELF == 3", "numbers"),
        ("SELF == 'x' AND", "expected a comparison"),
        ("(SELF == 'x'", "expected ')'"),
        ("SELF == 'open", "unterminated"),
        ("SELF ==[d] 'x'", "[c]"),
        ("SELF < 'x'", "ordering"),
        ("", "expected a comparison"),
    ])
    func unsupportedSyntaxIsRejected(format: String, mention: String) throws {
        let error = #expect(throws: FerryModelError.self) { try ActivationPredicate(format: format) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains(mention) == true, "\(error?.message ?? "")")
    }

    @Test func badPredicateNamesWhichCondition() throws {
        let error = #expect(throws: FerryModelError.self) {
            try SceneActivationConditions(canActivateFor: "TRUEPREDICATE", prefersToActivateFor: "SELF MATCHES '.*'")
        }
        #expect(error?.keyPath == "prefersToActivateFor")
    }
}
