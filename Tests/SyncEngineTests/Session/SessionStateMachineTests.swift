import Testing

@testable import SyncEngine

@Suite("Session state machine")
struct SessionStateMachineTests {
    @Test("suspend makes an active session inactive; resume makes it active again")
    func suspendResume() {
        var machine = SessionStateMachine(stopPolicy: .afterChangesUploaded)
        #expect(machine.state == .active && machine.wantsSync)
        #expect(machine.handle(.suspend) == .inactive)
        #expect(!machine.wantsSync)
        #expect(machine.handle(.suspend) == nil)
        #expect(machine.handle(.resume) == .active)
        #expect(machine.handle(.resume) == nil)
    }

    @Test("close with .immediately stops at once, even with changes pending")
    func closeImmediately() {
        var machine = SessionStateMachine(stopPolicy: .immediately)
        _ = machine.handle(.pendingUploads(true))
        #expect(machine.handle(.close) == .inactive)
    }

    @Test("close with .afterChangesUploaded is .dying until the uploads are done, then .inactive")
    func closeAfterUpload() {
        var machine = SessionStateMachine(stopPolicy: .afterChangesUploaded)
        _ = machine.handle(.pendingUploads(true))
        #expect(machine.handle(.close) == .dying)
        #expect(machine.wantsSync)
        #expect(machine.handle(.pendingUploads(true)) == nil)
        #expect(machine.handle(.pendingUploads(false)) == .inactive)
    }

    @Test("close with .afterChangesUploaded and nothing pending stops at once")
    func closeAfterUploadNothingPending() {
        var machine = SessionStateMachine(stopPolicy: .afterChangesUploaded)
        #expect(machine.handle(.close) == .inactive)
    }

    @Test("close with .liveIndefinitely has no effect")
    func closeLiveIndefinitely() {
        var machine = SessionStateMachine(stopPolicy: .liveIndefinitely)
        _ = machine.handle(.pendingUploads(true))
        #expect(machine.handle(.close) == nil)
        #expect(machine.state == .active)
    }

    @Test("a dying session can be suspended or resumed")
    func dyingSuspendResume() {
        var machine = SessionStateMachine(stopPolicy: .afterChangesUploaded)
        _ = machine.handle(.pendingUploads(true))
        _ = machine.handle(.close)
        #expect(machine.handle(.resume) == .active)
        _ = machine.handle(.close)
        #expect(machine.handle(.suspend) == .inactive)
    }

    @Test("a fatal error is final: nothing revives an invalid session")
    func invalidIsFinal() {
        var machine = SessionStateMachine(stopPolicy: .afterChangesUploaded)
        #expect(machine.handle(.fatalError) == .invalid)
        for event: SessionStateMachine.Event in [.resume, .suspend, .close, .pendingUploads(false), .fatalError] {
            #expect(machine.handle(event) == nil)
            #expect(machine.state == .invalid)
        }
        #expect(!machine.wantsSync)
    }
}
