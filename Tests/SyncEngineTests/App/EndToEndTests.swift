import Foundation
import SyncServer
import SyncWire
import TestSupport
import Testing

@testable import SyncEngine

/// Two apps (two local directories) syncing one partition through the embedded server.
@Suite("End to end through the embedded server", .timeLimit(.minutes(5)))
struct EndToEndTests {
    @Test("two apps converge on the same changesets, byte for byte and in the same order")
    func twoAppsConverge() async throws {
        let server = try await SyncServer.embedded()
        let dirA = TemporaryDirectory()
        let dirB = TemporaryDirectory()
        defer {
            dirA.remove()
            dirB.remove()
        }
        let sessionA = try await makeApp(server: server.endpoint, directory: dirA.url)
            .login(.anonymous).openSession(partition: "tasks")
        let sessionB = try await makeApp(server: server.endpoint, directory: dirB.url)
            .login(.anonymous).openSession(partition: "tasks")
        let seenA = Collected(sessionA.changesets)
        let seenB = Collected(sessionB.changesets)

        for index in 0..<5 {
            try await sessionA.write(Data("a\(index)".utf8))
            try await sessionB.write(Data(repeating: UInt8(index), count: 1000 + index))
        }
        try await sessionA.wait(for: .upload)
        try await sessionB.wait(for: .upload)
        try await eventually("both apps hold all 10 changesets") {
            seenA.values.count == 10 && seenB.values.count == 10
        }

        let log = try await server.changesets(in: "tasks")
        #expect(log.map(\.serverVersion) == Array(1...10))
        #expect(seenA.values == seenB.values)
        #expect(seenA.values.map(\.serverVersion) == Array(1...10))
        #expect(seenA.values.map { Array($0.data) } == log.map(\.data))
        // Each app's own changesets keep their order among themselves.
        let fromA = seenA.values.map { String(decoding: $0.data, as: UTF8.self) }.filter { $0.hasPrefix("a") }
        #expect(fromA == (0..<5).map { "a\($0)" })
    }

    @Test("a late subscriber to changesets first receives everything synced so far")
    func changesetsReplay() async throws {
        let server = try await SyncServer.embedded()
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let session = try await makeApp(server: server.endpoint, directory: dir.url)
            .login(.anonymous).openSession(partition: "p")
        for index in 0..<3 { try await session.write(Data([UInt8(index)])) }
        try await session.wait(for: .upload)
        let late = Collected(session.changesets)
        #expect(late.values.map(\.data) == [Data([0]), Data([1]), Data([2])])
        try await session.write(Data([3]))
        try await session.wait(for: .upload)
        try await eventually("the new changeset") { late.values.count == 4 }
        #expect(late.values.map(\.serverVersion) == [1, 2, 3, 4])
    }

    @Test("download progress counts the bytes the server reports, in the steps it sends them")
    func downloadProgressIsReal() async throws {
        var configuration = SyncServer.Configuration()
        configuration.maximumDownloadMessageBytes = 1000
        let server = try await SyncServer.embedded(configuration: configuration)
        let dirA = TemporaryDirectory()
        let dirB = TemporaryDirectory()
        defer {
            dirA.remove()
            dirB.remove()
        }
        let writer = try await makeApp(server: server.endpoint, directory: dirA.url)
            .login(.anonymous).openSession(partition: "big")
        for index in 0..<5 { try await writer.write(Data(repeating: UInt8(index), count: 1000)) }
        try await writer.wait(for: .upload)

        // The server's messages are held and let through one at a time, each once the one before it is
        // stored, so every step the server sends is one step of progress.
        let transport = FaultInjectingTransport()
        transport.faults.delayMessages = true
        let readerApp = makeApp(server: server.endpoint, directory: dirB.url, transport: transport)
        let reader = try await readerApp.login(.anonymous).openSession(partition: "big")
        let progress = Collected(reader.progress(for: .download, mode: .reportIndefinitely))
        // (bytes received so far, those plus what the server said remains), after each download message.
        var sent: [[Int]] = []
        while sent.last.map({ $0[0] < $0[1] }) ?? true {
            try await eventually("the server's next message") { !transport.held.isEmpty }
            guard case .download(let download)? = transport.releaseOne() else { continue }
            let received =
                (sent.last?[0] ?? 0)
                + download.entries.reduce(0) { total, entry in
                    if case .changeset(_, let data) = entry { total + data.count } else { total }
                }
            let step = [received, received + Int(download.remainingBytes)]
            sent.append(step)
            try await eventually("progress at \(step)") {
                progress.values.last.map { [$0.transferredBytes, $0.transferrableBytes] } == step
            }
        }
        // One progress value per download message, equal to the running totals the server sent.
        #expect(sent == [[1000, 5000], [2000, 5000], [3000, 5000], [4000, 5000], [5000, 5000]])
        #expect(progress.values.map { [$0.transferredBytes, $0.transferrableBytes] } == sent)
        #expect(progress.values.last?.isTransferComplete == true)
        // Never backwards.
        let estimates = progress.values.map(\.progressEstimate)
        #expect(zip(estimates, estimates.dropFirst()).allSatisfy { $0 <= $1 })
        transport.deliverDelayedMessages()
        try await reader.wait(for: .download)
    }

    @Test("registering for download progress before the first server report invents nothing")
    func noInventedDownloadProgress() async throws {
        let server = try await SyncServer.embedded()
        let writerDirectory = TemporaryDirectory()
        let dir = TemporaryDirectory()
        defer {
            writerDirectory.remove()
            dir.remove()
        }
        let writer = try await makeApp(server: server.endpoint, directory: writerDirectory.url)
            .login(.anonymous).openSession(partition: "p")
        for index in 0..<3 { try await writer.write(Data(repeating: UInt8(index), count: 1000)) }
        try await writer.wait(for: .upload)

        // The reader connects, but the server's messages are held in transit and let through one by one
        // until the first download (the answer to the bind) is next: the session is then connected and
        // has bound, and no server report has reached it yet.
        let transport = FaultInjectingTransport()
        transport.faults.delayMessages = true
        let session = try await makeApp(server: server.endpoint, directory: dir.url, transport: transport)
            .login(.anonymous).openSession(partition: "p")
        let download = Collected(session.progress(for: .download, mode: .reportIndefinitely))
        let upload = Collected(session.progress(for: .upload, mode: .reportIndefinitely))
        while true {
            try await eventually("a server message held") { !transport.held.isEmpty }
            if case .download = transport.held.first { break }
            transport.releaseOne()
        }
        try await eventually("connected") { session.connectionState.value == .connected }
        #expect(download.values.isEmpty, "\(download.values)")
        // Upload progress is known from the local store at once: nothing written, nothing to upload.
        #expect(upload.values == [SyncProgress(transferredBytes: 0, transferrableBytes: 0, progressEstimate: 1)])

        // The first report is the server's: it knows the 3,000 bytes; nothing before it said otherwise.
        transport.deliverDelayedMessages()
        try await session.wait(for: .download)
        let reports = download.values.map { [$0.transferredBytes, $0.transferrableBytes] }
        #expect(reports.first?[1] == 3000, "\(reports)")
        #expect(reports.allSatisfy { $0[1] == 3000 }, "\(reports)")
    }
}
