import Dispatch
import Foundation
import SyncEngine
import SyncServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `sync-spinner`: a writer app and a reader app sync a workload through a server while a status line,
/// built from the streams as an app would build it, shows what happens.
public enum SpinnerCommand {
    /// Exit statuses.
    public enum Status: Int32, Sendable {
        case synced = 0
        case failed = 1
        case usage = 64
        case interrupted = 130
        case terminated = 143
    }

    /// Runs the command with `arguments` (without the program name) and returns the exit status.
    public static func run(arguments: [String]) async -> Int32 {
        let options: SpinnerOptions
        do {
            options = try SpinnerOptions.parse(arguments)
        } catch {
            FileHandle.standardError.write(Data("sync-spinner: \(error)\n\n\(SpinnerOptions.usage)\n".utf8))
            return Status.usage.rawValue
        }
        if options.showHelp {
            print(SpinnerOptions.usage)
            return Status.synced.rawValue
        }
        if options.watchServer, let server = options.server {
            return await ServerWatch.run(server, interval: options.watchInterval, count: options.watchCount)
        }
        return await SpinnerRun(options: options).run().rawValue
    }
}

/// One run: sets up the apps, writes the workload, watches the sync, checks the result, cleans up.
final class SpinnerRun: Sendable {
    private let options: SpinnerOptions
    private let workload: Workload
    private let directory: URL
    private let display: Display
    private let outcome = Locked<Outcome>(Outcome())
    private let terminal: TerminalBox

    /// What is known of the run so far, for the closing message.
    private struct Outcome: Sendable {
        var received = 0
        var checksum = ChangesetChecksum()
        var lastError: SyncError?
        var finished: SpinnerCommand.Status?
    }

    /// The terminal, touched on the display's queue only.
    private final class TerminalBox: @unchecked Sendable {
        // @unchecked Sendable: used on the display's serial queue only.
        let terminal: Terminal
        init(_ terminal: Terminal) { self.terminal = terminal }
    }

    init(options: SpinnerOptions) {
        self.options = options
        workload = Workload(count: options.changesets, totalBytes: options.totalBytes, seed: options.seed)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sync-spinner-\(UUID().uuidString)")
        let terminal = Terminal()
        self.terminal = TerminalBox(terminal)
        display = Display(
            queue: DispatchQueue(label: "sync-spinner.ui"), terminal: terminal, totalBytes: workload.totalBytes)
    }

    func run() async -> SpinnerCommand.Status {
        let signals = watchSignals()
        let deadline = watchTimeout()
        defer {
            for source in signals { source.cancel() }
            deadline.cancel()
        }
        let status: SpinnerCommand.Status
        do throws(SyncError) {
            status = try await sync()
        } catch {
            status = finish(.failed, message: "sync-spinner: sync failed: \(error)")
        }
        cleanUp()
        return status
    }

    // MARK: The sync, as an app would write it

    private func sync() async throws(SyncError) -> SpinnerCommand.Status {
        let server: SyncServer?
        let endpoint: SyncEndpoint
        if let remote = options.server {
            server = nil
            endpoint = remote
        } else {
            do {
                server = try await SyncServer.embedded(configuration: .init(logLevel: options.logLevel))
            } catch {
                throw .storageFailure("cannot start the embedded server: \(error)")
            }
            endpoint = server!.endpoint
        }
        let partition = "sync-spinner/\(UUID().uuidString)"
        let credentials: SyncCredentials = options.apiKey.map { .apiKey($0) } ?? .anonymous
        let writerApp = makeApp(endpoint, "writer")
        let readerApp = makeApp(endpoint, "reader")
        var tokens = Set<SubscriptionToken>()
        defer { for token in tokens { token.invalidate() } }
        for (name, app) in [("writer", writerApp), ("reader", readerApp)] {
            app.errors.subscribe { [weak self] error, _ in self?.failed(name, error) }.store(in: &tokens)
        }
        let display = display
        display.queue.sync {
            display.note(
                "sync-spinner: \(workload.count) changesets, \(StatusLine.megabytes(workload.totalBytes)) MB "
                    + "(seed \(workload.seed)) from a writer to a reader through "
                    + (options.server?.url ?? "an embedded server"))
        }

        // The writer: offline first if asked (opened suspended, so it does not connect before it is
        // resumed), then it writes the workload (durable at once) and uploads.
        let writer = try await writerApp.login(credentials).openSession(
            partition: partition, suspended: options.offlineSeconds > 0)
        watch("writer", writer.connectionState, into: &tokens)
        display.queue.async { self.display.startRedrawing() }
        // What the reader must end up with: the same changesets, in this order.
        var expected = ChangesetChecksum()
        do throws(SyncError) {
            for index in 0..<workload.count {
                let changeset = workload.changeset(index)
                expected.add(changeset)
                try await writer.write(changeset)
            }
        } catch .sessionInvalid {
            // A fatal error (a refused credential) ended the session while it wrote: say what it was, not
            // only that the session is invalid. The status holds it before any write can see the session
            // invalid; `app.errors` reports it too, but on the callback queue, perhaps after this.
            throw writer.status.value.lastError ?? .sessionInvalid
        }

        // The reader: its initial download as a progress bar (`.forCurrentlyOutstandingWork`), and what it
        // receives, in server order, into a checksum.
        let reader = try await readerApp.login(credentials).openSession(partition: partition)
        watch("reader", reader.connectionState, into: &tokens)
        if let bar = reader.addProgressNotification(
            for: .download, mode: .forCurrentlyOutstandingWork, on: display.queue,
            block: { display.updateInitialDownload($0) })
        {
            tokens.insert(bar)
        }
        let everything = AsyncStream<Void>.makeStream()
        reader.changesets.subscribe { [weak self] changeset in
            guard let self else { return }
            let count = self.outcome.withLock { outcome in
                outcome.received += 1
                outcome.checksum.add(changeset.data)
                return outcome.received
            }
            if count == self.workload.count { everything.continuation.finish() }
        }.store(in: &tokens)

        // The status line: both directions combined, at most every 100 ms, drawn on the UI queue.
        writer.progress(for: .upload, mode: .reportIndefinitely)
            .combineLatest(reader.progress(for: .download, mode: .reportIndefinitely))
            .throttle(for: .milliseconds(100), on: display.queue, latest: true)
            .observe(on: display.queue)
            .subscribe { upload, download in display.update(upload: upload, download: download) }
            .store(in: &tokens)
        // The reader's download rate and time remaining over the last second, measured on the UI queue's
        // clock; the display keeps the newest and shows it at its next redraw.
        reader.progress(for: .download, mode: .reportIndefinitely)
            .rate(window: .seconds(1), on: display.queue)
            .subscribe { display.update(rate: $0) }
            .store(in: &tokens)
        // The writer's pending work, offline reason and last sync.
        writer.status.observe(on: display.queue).subscribe { display.update(writerStatus: $0) }.store(in: &tokens)

        if options.offlineSeconds > 0 {
            try? await Task.sleep(for: .seconds(options.offlineSeconds))
            writer.resume()
        }
        for await _ in everything.stream {}
        // From the same start as the progress lines' times (the start of the run); the last line shows it.
        let seconds = display.queue.sync { display.elapsed }

        // Exactly what the writer wrote, in server order.
        let received = outcome.withLock { $0 }
        let status: SpinnerCommand.Status
        if received.checksum == expected {
            display.queue.sync { display.complete(after: seconds) }
            status = finish(
                .synced,
                message: StatusLine.summary(
                    changesets: received.checksum.count, bytes: received.checksum.bytes, seconds: seconds,
                    checksum: "\(expected)"))
        } else {
            status = finish(
                .failed,
                message: "sync-spinner: the reader holds \(received.checksum.count) changesets with checksum "
                    + "\(received.checksum), the writer wrote \(expected.count) with checksum \(expected)")
        }
        try? await writerApp.close()
        try? await readerApp.close()
        await server?.stop()
        return status
    }

    private func makeApp(_ endpoint: SyncEndpoint, _ name: String) -> SyncApp {
        SyncApp(
            configuration: .init(
                server: endpoint, directory: directory.appendingPathComponent(name), logLevel: options.logLevel))
    }

    private func watch(_ name: String, _ state: StateStream<ConnectionState>, into tokens: inout Set<SubscriptionToken>)
    {
        let display = display
        state.observe(on: display.queue).subscribe { display.update(name, $0) }.store(in: &tokens)
    }

    // MARK: Failures, signals, timeout

    /// An error from `app.errors`: fatal ones end the run; the others are remembered for the timeout's
    /// message (the engine retries them).
    private func failed(_ app: String, _ error: SyncError) {
        outcome.withLock { $0.lastError = error }
        if error.isFatal {
            let status = finish(.failed, message: "sync-spinner: \(app) failed: \(error)")
            cleanUp()
            exit(status.rawValue)
        }
    }

    private func watchSignals() -> [any DispatchSourceSignal] {
        var sources: [any DispatchSourceSignal] = []
        for (number, status) in [(SIGINT, SpinnerCommand.Status.interrupted), (SIGTERM, .terminated)] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [self] in
                let status = finish(status, message: "sync-spinner: interrupted: \(progressText())")
                cleanUp()
                exit(status.rawValue)
            }
            source.resume()
            sources.append(source)
        }
        signal(SIGWINCH, SIG_IGN)
        let resize = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: display.queue)
        resize.setEventHandler { [terminal] in terminal.terminal.refreshWidth() }
        resize.resume()
        sources.append(resize)
        return sources
    }

    private func watchTimeout() -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + options.timeoutSeconds)
        timer.setEventHandler { [self] in
            let last = outcome.withLock { $0.lastError }.map { "; last error: \($0)" } ?? ""
            let status = finish(
                .failed,
                message: "sync-spinner: timed out after \(options.timeoutSeconds) s: \(progressText())\(last)")
            cleanUp()
            exit(status.rawValue)
        }
        timer.resume()
        return timer
    }

    private func progressText() -> String {
        let received = outcome.withLock { $0.received }
        let bytes = display.queue.sync { display.synced }
        return "the reader holds \(received) of \(workload.count) changesets "
            + "(\(StatusLine.megabytes(bytes.bytes)) of \(StatusLine.megabytes(bytes.total)) MB)"
    }

    /// Ends the display (cursor restored) and prints `message` once — to standard output for success,
    /// standard error otherwise; returns the status of the first call.
    private func finish(_ status: SpinnerCommand.Status, message: String) -> SpinnerCommand.Status {
        let first = outcome.withLock { outcome -> SpinnerCommand.Status? in
            if let finished = outcome.finished { return finished }
            outcome.finished = status
            return nil
        }
        if let first { return first }
        display.queue.sync {
            display.finish()
            terminal.terminal.showCursor()
        }
        if status == .synced {
            display.queue.sync { terminal.terminal.printLine(message) }
        } else {
            FileHandle.standardError.write(Data((message + "\n").utf8))
        }
        return status
    }

    private func cleanUp() {
        if options.keep {
            FileHandle.standardError.write(Data("sync-spinner: kept \(directory.path)\n".utf8))
        } else {
            try? FileManager.default.removeItem(at: directory)
        }
    }
}
