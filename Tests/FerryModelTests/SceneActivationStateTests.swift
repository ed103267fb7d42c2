import FerryModel
import Testing

@Suite("SceneActivationState")
struct SceneActivationStateTests {
    typealias S = SceneActivationState

    @Test(arguments: [
        // Connecting: into the foreground through inactive.
        (S.unattached, S.foregroundActive, [S.foregroundInactive, .foregroundActive]),
        (.unattached, .foregroundInactive, [.foregroundInactive]),
        (.unattached, .background, [.background]),
        // Active and background are always separated by inactive, both ways.
        (.foregroundActive, .background, [.foregroundInactive, .background]),
        (.background, .foregroundActive, [.foregroundInactive, .foregroundActive]),
        (.foregroundActive, .foregroundInactive, [.foregroundInactive]),
        (.foregroundInactive, .background, [.background]),
        (.background, .foregroundInactive, [.foregroundInactive]),
        // Disconnecting goes straight to unattached.
        (.foregroundActive, .unattached, [.unattached]),
        (.background, .unattached, [.unattached]),
        (.foregroundInactive, .foregroundInactive, []),
    ])
    func stepsFollowTheSeedsLifeCycle(old: S, new: S, steps: [S]) {
        #expect(S.steps(from: old, to: new) == steps)
    }

    @Test func everyPairEndsAtItsTargetWithoutSkippingInactive() {
        for old in S.allCases {
            for new in S.allCases {
                let steps = S.steps(from: old, to: new)
                if old == new {
                    #expect(steps.isEmpty)
                    continue
                }
                #expect(steps.last == new, "\(old) → \(new)")
                #expect(!steps.dropLast().contains(.unattached), "\(old) → \(new)")
                for (from, to) in zip([old] + steps, steps) {
                    #expect(Set([from, to]) != [.foregroundActive, .background], "\(old) → \(new) jumps \(from) → \(to)")
                }
            }
        }
    }

    @Test func namesRawValuesAndLevels() {
        #expect(S.allCases.map(\.name) == ["unattached", "foregroundActive", "foregroundInactive", "background"])
        #expect(S.allCases.map(\.rawValue) == [-1, 0, 1, 2])  // Apple's UIScene.ActivationState
        for state in S.allCases {
            #expect(S(name: state.name) == state)
            #expect(state.description == state.name)
        }
        #expect(S(name: "active") == nil)
        #expect(S(name: "ForegroundActive") == nil)
        // An app's state is its highest scene state.
        #expect(S.allCases.sorted { $0.level < $1.level } == [.unattached, .background, .foregroundInactive, .foregroundActive])
    }

    @Test func dismissalAnimationsAndPlacements() {
        #expect(SceneDismissalAnimation.allCases.map(\.name) == ["standard", "commit", "decline"])
        #expect(SceneDismissalAnimation.allCases.map(\.rawValue) == [1, 2, 3])
        for animation in SceneDismissalAnimation.allCases { #expect(SceneDismissalAnimation(name: animation.name) == animation) }
        #expect(SceneDismissalAnimation(name: "fade") == nil)
        #expect(ScenePlacement(rawValue: "left") == .left && ScenePlacement(rawValue: "right") == .right)
        #expect(ScenePlacement(rawValue: "top") == nil)
    }
}
