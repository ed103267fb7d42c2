@preconcurrency import Crypto
import Dispatch
import FerryModel
import Logging
import Foundation
import Synchronization

/// Pairing (issue #22 item 5): the first device makes the user's sealing key
/// (``initializeKey()``); another joins with a short code (``join()``) that a paired device
/// approves (``approve(code:)``), both users compare a 6-digit number (``confirm(_:accept:)``),
/// and only then does the approver send the key, sealed for that exchange. Every call returns at
/// once; the exchange runs on the engine in the background and ``pairing`` tells how far it got.
extension Continuity {
    /// Where a device stands, as `org.ferry.Continuity1.State` says it.
    package enum Standing: String, Sendable {
        /// Continuity is not configured.
        case off
        /// Configured; the engine has not answered yet (or the link dropped).
        case waiting
        /// Connected, without the user's key: it announces, watches and serves nothing.
        case unpaired
        /// Connected with the user's key.
        case paired
    }

    /// Where this device stands now.
    package var standing: Standing {
        state.withLock { state in
            guard let link = state.link, link.isConnected else { return .waiting }
            return state.seal == nil ? .unpaired : .paired
        }
    }

    /// The pairing under way or last ended, as the D-Bus property shows it; expired ones read
    /// as failed.
    var pairing: PairingSession? {
        expireIfDue()
        return state.withLock { $0.pairing }
    }

    // MARK: - The first device

    /// Makes the user's sealing key on this device and starts sharing at once.
    /// - Throws: `FerryModelError` `.permissionDenied` when the device has a key already (a new
    ///   one would cut it off from the user's other devices), `.io` when the file cannot be written.
    package func initializeKey() throws {
        guard seal == nil else {
            throw FerryModelError(.permissionDenied, "this device has the user's key already (\(configuration.keyFile)); "
                                  + "a new one would cut it off from your other devices")
        }
        guard state.withLock({ $0.pairing.map { $0.isOver } ?? true }) else {
            throw FerryModelError(.permissionDenied, "a pairing is under way on this device")
        }
        let made: Seal
        do {
            made = try Seal.create(keyFile: configuration.keyFile)
        } catch let error as EngineError {
            throw FerryModelError(.permissionDenied, error.message)
        }
        logger.notice("continuity: made the user's key \(configuration.keyFile)")
        state.withLock { $0.devices.pairedBy = device }
        adopt(made)
    }

    // MARK: - Joining (the new device)

    /// Starts waiting for an approver under a new code.
    /// - Returns: the code to type on the paired device, and the pairing's number.
    /// - Throws: `FerryModelError` `.permissionDenied` (paired already, or a pairing under way),
    ///   `.unavailable` (the engine is not reachable).
    package func join() throws -> (code: String, pairing: UInt32) {
        guard seal == nil else {
            throw FerryModelError(.permissionDenied, "this device is paired already; approve the new device from here instead")
        }
        let link = try linkForPairing()
        let code = PairingCode.make()
        let session = try startSession(role: .join, code: code)
        do {
            let subscription = try link.subscribeUntilCancelled(PairingCode.subject(code)) { [weak self] bytes, reply in
                self?.answerApprover(bytes, reply: reply, link: link, pairing: session.id)
            }
            state.withLock { $0.pairing?.subscription = subscription }
        } catch {
            finishPairing(session.id, failing: FerryModelError(.unavailable, "cannot wait on the engine: \(error)"))
            throw FerryModelError(.unavailable, "cannot wait on the engine: \(error)")
        }
        logger.info("continuity: waiting for a paired device to approve code \(code)")
        return (code, session.id)
    }

    /// The joiner's answer to one message of the approver (on a libnats thread).
    func answerApprover(_ bytes: [UInt8], reply: String?, link: EngineLink, pairing id: UInt32) {
        guard let reply else { return }
        let answer: PairMessage
        if let message = try? JSONDecoder().decode(PairMessage.self, from: Data(bytes)) {
            answer = joinerStep(message, pairing: id)
        } else {
            answer = .refused("not a pairing message")
        }
        if let data = try? JSONEncoder().encode(answer) { try? link.publish(reply, [UInt8](data)) }
        if state.withLock({ $0.pairing.map { $0.id == id && $0.isOver } ?? false }) { endSubscription(id) }
    }

    func joinerStep(_ message: PairMessage, pairing id: UInt32) -> PairMessage {
        expireIfDue()
        if message.step == "key" { return receiveKey(message, pairing: id) }
        return state.withLock { state -> PairMessage in
            guard var session = state.pairing, session.id == id, session.role == .join else {
                return .refused("this device no longer waits with that code")
            }
            if session.isOver {
                // The user here said no: the approver hears it on its next confirmation.
                guard session.accepted == false, message.step == "confirm" else {
                    return .refused("this device no longer waits with that code")
                }
                var answer = PairMessage("answer")
                answer.status = "declined"
                return answer
            }
            defer { state.pairing = session }
            switch message.step {
            case "hello":
                guard session.peerKey == nil else { return .refused("this code has been used") }
                guard let peer = message.device, Subjects.isValidDevice(peer), let key = message.key, key.count == 32 else {
                    return .refused("a malformed hello")
                }
                session.peer = peer
                session.peerKey = key
                var answer = PairMessage("answer")
                answer.device = device
                answer.key = session.publicKey
                answer.commitment = PairingCrypto.commitment(joinerKey: session.publicKey, approverKey: key, joinerNonce: session.nonce)
                return answer
            case "nonce":
                guard let peer = session.peer, let peerKey = session.peerKey, session.peerNonce == nil,
                      let nonce = message.nonce, nonce.count == PairingCrypto.nonceSize
                else { return .refused("a nonce out of turn") }
                session.peerNonce = nonce
                let transcript = PairingCrypto.transcript(code: session.code, approver: peer, joiner: device, approverKey: peerKey,
                                                          joinerKey: session.publicKey, approverNonce: nonce, joinerNonce: session.nonce)
                session.transcript = transcript
                session.number = PairingCrypto.number(transcript)
                session.stage = .confirm
                var answer = PairMessage("answer")
                answer.nonce = session.nonce
                return answer
            case "confirm":
                guard session.transcript != nil else { return .refused("a confirmation out of turn") }
                var answer = PairMessage("answer")
                answer.status = session.accepted.map { $0 ? "accepted" : "declined" } ?? "waiting"
                return answer
            case "abort":
                session.fail(FerryModelError(.cancelled, message.error ?? "\(session.peer ?? "the other device") ended the pairing"))
                return PairMessage("answer")
            default:
                return .refused("an unknown step")
            }
        }
    }

    /// The approver's last message: the user's key sealed for this exchange. Written and
    /// adopted only when this device's user confirmed the number.
    func receiveKey(_ message: PairMessage, pairing id: UInt32) -> PairMessage {
        guard let session = state.withLock({ $0.pairing }), session.id == id, session.role == .join, !session.isOver,
              session.accepted == true, let transcript = session.transcript, let peerKey = session.peerKey
        else { return .refused("no key is expected now") }
        let key: Seal
        do {
            guard let sealed = message.sealed else { throw FerryModelError(.invalidArgument, "no key in the message") }
            let transfer = try PairingCrypto.transferKey(session.secret, peer: peerKey, transcript: transcript)
            let plain = try AES.GCM.open(try AES.GCM.SealedBox(combined: sealed), using: transfer, authenticating: transcript)
            key = try Seal(key: [UInt8](plain))
            try key.write(to: configuration.keyFile, replacing: false)
        } catch {
            let failure = FerryModelError(.permissionDenied, "the key from \(session.peer ?? "the other device") cannot be used: \(error)")
            finishPairing(id, failing: failure)
            return .refused(failure.message)
        }
        state.withLock { state in
            state.pairing?.stage = .paired
            state.devices.pairedBy = session.peer
        }
        logger.notice("continuity: paired with \(session.peer ?? "another device"); wrote \(configuration.keyFile)")
        adopt(key)
        var answer = PairMessage("answer")
        answer.status = "paired"
        return answer
    }

    // MARK: - Approving (the paired device)

    /// Starts approving the device waiting with `code`.
    /// - Returns: the pairing's number.
    /// - Throws: `FerryModelError` `.invalidArgument` (not a code), `.permissionDenied` (this
    ///   device is not paired, or a pairing is under way), `.unavailable` (no engine).
    package func approve(code text: String) throws -> UInt32 {
        guard let code = PairingCode.normalized(text) else {
            throw FerryModelError(.invalidArgument, "'\(text.prefix(40))' is not a pairing code (8 letters and digits, as 'ferry continuity join' prints it)")
        }
        guard let seal else {
            throw FerryModelError(.permissionDenied, "this device is not paired: it has no key to give (ferry continuity init, or join)")
        }
        let link = try linkForPairing()
        let session = try startSession(role: .approve, code: code)
        DispatchQueue(label: "org.ferry.continuity.approve").async { [self] in
            do {
                try runApproval(session.id, link: link, seal: seal)
            } catch let error as FerryModelError {
                finishPairing(session.id, failing: error)
            } catch {
                finishPairing(session.id, failing: FerryModelError(.unavailable, "\(error)"))
            }
        }
        return session.id
    }

    /// The approver's side of the exchange, step by step (blocking: on a queue of its own).
    func runApproval(_ id: UInt32, link: EngineLink, seal: Seal) throws {
        guard let start = state.withLock({ $0.pairing }), start.id == id else { return }
        let subject = PairingCode.subject(start.code)
        func send(_ message: PairMessage) throws -> PairMessage {
            let answer: [UInt8]
            do {
                answer = try link.request(subject, [UInt8](try JSONEncoder().encode(message)), timeout: .seconds(3))
            } catch let error as EngineError {
                switch error.code {
                case .noResponders:
                    throw FerryModelError(.notFound, "no device waits with code \(start.code) (mistyped, expired or used)")
                case .timeout:
                    throw FerryModelError(.timeout, "the joining device did not answer within 3 s")
                case .failed:
                    throw FerryModelError(.unavailable, "cannot reach the joining device: \(error.message)")
                }
            }
            guard let reply = try? JSONDecoder().decode(PairMessage.self, from: Data(answer)) else {
                throw FerryModelError(.permissionDenied, "the joining device answered something that is not a pairing message")
            }
            if reply.step == "refused" {
                throw FerryModelError(.permissionDenied, "the joining device refused: \(reply.error ?? "no reason given")")
            }
            return reply
        }
        func abort(_ failure: FerryModelError) -> FerryModelError {
            var message = PairMessage("abort")
            message.error = "\(device): \(failure.message)"
            _ = try? send(message)
            return failure
        }

        var hello = PairMessage("hello")
        hello.device = device
        hello.key = start.publicKey
        let answer = try send(hello)
        guard let joiner = answer.device, Subjects.isValidDevice(joiner), let joinerKey = answer.key, joinerKey.count == 32,
              let commitment = answer.commitment, commitment.count == 32
        else { throw abort(FerryModelError(.permissionDenied, "the joining device sent a malformed answer")) }
        updatePairing(id) { $0.peer = joiner; $0.peerKey = joinerKey; $0.commitment = commitment }

        var nonceMessage = PairMessage("nonce")
        nonceMessage.nonce = start.nonce
        guard let joinerNonce = try send(nonceMessage).nonce, joinerNonce.count == PairingCrypto.nonceSize,
              PairingCrypto.commitment(joinerKey: joinerKey, approverKey: start.publicKey, joinerNonce: joinerNonce) == commitment
        else {
            throw abort(FerryModelError(.permissionDenied, "the joining device's nonce does not match its commitment: "
                                        + "someone may be in between; nothing was sent"))
        }
        let transcript = PairingCrypto.transcript(code: start.code, approver: device, joiner: joiner, approverKey: start.publicKey,
                                                  joinerKey: joinerKey, approverNonce: start.nonce, joinerNonce: joinerNonce)
        updatePairing(id) { session in
            session.peerNonce = joinerNonce
            session.transcript = transcript
            session.number = PairingCrypto.number(transcript)
            session.stage = .confirm
        }

        // This device's user first, then the joiner's.
        while true {
            guard let session = pairing, session.id == id else { return }
            if session.isOver {
                if let failure = session.failure { _ = abort(failure) }
                return
            }
            if session.accepted == true { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        while true {
            var confirm = PairMessage("confirm")
            confirm.device = device
            let status = try send(confirm).status
            if status == "accepted" { break }
            if status == "declined" { throw FerryModelError(.cancelled, "the user of \(joiner) said the numbers differ") }
            guard let session = pairing, session.id == id, !session.isOver else {
                if let failure = pairing?.failure { _ = abort(failure) }
                return
            }
            Thread.sleep(forTimeInterval: 0.1)
        }

        let transfer = try PairingCrypto.transferKey(start.secret, peer: joinerKey, transcript: transcript)
        var keyMessage = PairMessage("key")
        keyMessage.sealed = try AES.GCM.seal(seal.keyBytes, using: transfer, authenticating: transcript).combined
        guard try send(keyMessage).status == "paired" else {
            throw FerryModelError(.permissionDenied, "the joining device did not take the key")
        }
        updatePairing(id) { $0.stage = .paired }
        logger.notice("continuity: \(joiner) joined (approved here)")
    }

    // MARK: - Both sides

    /// This device's user's answer to the number shown.
    /// - Throws: the pairing's own failure when it has already ended (the other device's user
    ///   said no while this one was answering); `FerryModelError` `.notFound` (no such pairing,
    ///   or it is not showing a number).
    package func confirm(_ id: UInt32, accept: Bool) throws {
        expireIfDue()
        try state.withLock { state in
            guard var session = state.pairing, session.id == id else {
                throw FerryModelError(.notFound, "there is no pairing \(id) on this device")
            }
            if session.stage == .failed, let failure = session.failure { throw failure }
            guard session.stage == .confirm else {
                throw FerryModelError(.notFound, "pairing \(id) is not showing a number (it is \(session.stage.rawValue))")
            }
            session.accepted = accept
            if accept {
                session.stage = .confirmed
            } else {
                session.fail(FerryModelError(.cancelled, "the numbers differ (said on \(device)); nothing was written"))
            }
            state.pairing = session
        }
        if !accept { scheduleSubscriptionEnd(id) }
    }

    func linkForPairing() throws -> EngineLink {
        guard let link = state.withLock({ $0.link }), link.isConnected else {
            throw FerryModelError(.unavailable, "the continuity engine \(configuration.address.url) is not reachable yet")
        }
        return link
    }

    func startSession(role: PairingSession.Role, code: String) throws -> PairingSession {
        expireIfDue()
        let session = try state.withLock { state -> PairingSession in
            if let current = state.pairing, !current.isOver {
                throw FerryModelError(.permissionDenied, "a pairing is under way on this device (code \(current.code))")
            }
            let session = PairingSession(id: state.nextPairing, role: role, code: code,
                                         deadline: .now + configuration.pairingLifetime)
            state.nextPairing += 1
            state.pairing = session
            return session
        }
        let lifetime = configuration.pairingLifetime
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(lifetime.components.seconds * 1000)
                                                          + Int(lifetime.components.attoseconds / 1_000_000_000_000_000) + 10)) {
            [weak self] in self?.expireIfDue()
        }
        return session
    }

    func updatePairing(_ id: UInt32, _ change: (inout PairingSession) -> Void) {
        state.withLock { state in
            guard var session = state.pairing, session.id == id, !session.isOver else { return }
            change(&session)
            state.pairing = session
        }
    }

    /// Ends pairing `id` with `failure`; nothing was written.
    func finishPairing(_ id: UInt32, failing failure: FerryModelError) {
        let ended = state.withLock { state -> Bool in
            guard var session = state.pairing, session.id == id, !session.isOver else { return false }
            session.fail(failure)
            state.pairing = session
            return true
        }
        if ended { logger.warning("continuity: pairing \(id) failed: \(failure.message)") }
        endSubscription(id)
    }

    /// A pairing past its code's lifetime fails (Timeout) and stops listening.
    func expireIfDue() {
        let expired = state.withLock { state -> UInt32? in
            guard var session = state.pairing, !session.isOver, ContinuousClock.now >= session.deadline else { return nil }
            session.fail(FerryModelError(.timeout, "the code \(session.code) expired (codes last \(configuration.pairingLifetime))"))
            state.pairing = session
            return session.id
        }
        if let expired { endSubscription(expired) }
    }

    /// Stops the joiner listening on the code's subject (after its last answer went out).
    func endSubscription(_ id: UInt32) {
        let subscription = state.withLock { state -> EngineLink.Subscription? in
            guard state.pairing?.id == id else { return nil }
            defer { state.pairing?.subscription = nil }
            return state.pairing?.subscription
        }
        subscription?.cancel()
    }

    /// Stops listening a moment later, so the approver still hears this device's answer.
    func scheduleSubscriptionEnd(_ id: UInt32) {
        queue.asyncAfter(deadline: .now() + .seconds(5)) { [weak self] in self?.endSubscription(id) }
    }

    /// Ends any pairing (ferryd stopping).
    func endPairing() {
        if let id = state.withLock({ $0.pairing?.id }) {
            finishPairing(id, failing: FerryModelError(.cancelled, "ferryd stopped"))
        }
    }
}
