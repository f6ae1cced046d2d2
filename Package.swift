// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "SyncStreams",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "SyncStreams", targets: ["SyncStreams"]),
        .library(name: "SyncEngine", targets: ["SyncEngine"]),
        .library(name: "SyncServer", targets: ["SyncServer"]),
        .library(name: "SyncTesting", targets: ["SyncTesting"]),
        .library(name: "SyncServerCommandLine", targets: ["SyncServerCommandLine"]),
        // The test support below, for the integration packages' tests (not for apps).
        .library(name: "SyncTestSupport", targets: ["TestSupport"]),
        .executable(name: "sync-spinner", targets: ["sync-spinner"]),
        .executable(name: "sync-server", targets: ["sync-server"]),
    ],
    targets: [
        // Reactive streams; knows nothing about sync. Its C shim: a thread-local, futex, membarrier.
        .target(name: "CSyncStreams"),
        .target(name: "SyncStreams", dependencies: ["CSyncStreams"]),
        // Shared by client and server: wire messages, their binary encoding, the transport abstraction.
        .target(name: "SyncWire", dependencies: ["SyncStreams"]),
        // Shared by client and server: the durable append-only record file. Its C shim: CRC-32 in the
        // processor's instructions (PCLMULQDQ, ARMv8 CRC32).
        .target(name: "CSyncStorage"),
        .target(name: "SyncStorage", dependencies: ["SyncStreams", "CSyncStorage"]),
        // Shared by client and server: the event loop, sockets and the WebSocket (RFC 6455) transport.
        .target(name: "CSyncNetwork"),
        .target(name: "SyncNetwork", dependencies: ["SyncStreams", "SyncWire", "CSyncNetwork"]),
        // The client engine. Re-exports SyncStreams.
        .target(name: "SyncEngine", dependencies: ["SyncStreams", "SyncWire", "SyncStorage", "SyncNetwork"]),
        // The reference server.
        .target(name: "SyncServer", dependencies: ["SyncStreams", "SyncWire", "SyncStorage", "SyncNetwork"]),

        // For apps' own tests: `SyncSimulator`, an in-process server, a controllable network, virtual time.
        .target(name: "SyncTesting", dependencies: ["SyncEngine", "SyncServer", "SyncStreams"]),

        // What the server programs share (sync-server here, sync-server-pg and sync-server-nio in Integrations/):
        // the shared options and their parsing, signals, unbuffered output.
        .target(name: "SyncServerCommandLine", dependencies: ["SyncServer", "SyncStreams"]),
        // The reference server as a program: `swift run sync-server --port 0 --data DIR`.
        .executableTarget(name: "sync-server", dependencies: ["SyncServer", "SyncServerCommandLine", "SyncStreams"]),

        // The CLI example, `swift run sync-spinner`: its logic (a library, so tests can reach it) and its main.
        .target(
            name: "SyncSpinnerKit", dependencies: ["SyncEngine", "SyncServer"],
            path: "Examples/SyncSpinner/Sources/SyncSpinnerKit"),
        .executableTarget(
            name: "sync-spinner", dependencies: ["SyncSpinnerKit"], path: "Examples/SyncSpinner/Sources/sync-spinner"),

        // Support shared by test targets: child processes waited for with deadlines, off the cooperative pool.
        .target(
            name: "TestSupport", dependencies: ["SyncStreams", "SyncStorage", "SyncNetwork", "SyncServer"],
            path: "Tests/TestSupport"),
        .testTarget(name: "SyncStreamsTests", dependencies: ["SyncStreams", "TestSupport"]),
        .testTarget(name: "SyncWireTests", dependencies: ["SyncWire", "SyncStreams", "TestSupport"]),
        // The network module alone, and as the server uses it (raw sockets against `SyncServer.listening`).
        .testTarget(
            name: "SyncNetworkTests",
            dependencies: ["SyncNetwork", "SyncWire", "SyncStreams", "SyncServer", "TestSupport"]),
        .testTarget(name: "SyncStorageTests", dependencies: ["SyncStorage", "SyncStreams", "TestSupport"]),
        .testTarget(
            name: "SyncEngineTests",
            dependencies: ["SyncEngine", "SyncServer", "SyncWire", "SyncStorage", "sync-server", "TestSupport"]),
        .testTarget(name: "SyncTestingTests", dependencies: ["SyncTesting", "TestSupport"]),
        .testTarget(name: "SyncServerCommandLineTests", dependencies: ["SyncServerCommandLine", "SyncServer"]),
        .testTarget(name: "SyncServerTests", dependencies: ["SyncServer", "SyncWire", "SyncStorage", "TestSupport"]),
        .testTarget(
            name: "SyncSpinnerTests", dependencies: ["SyncSpinnerKit", "sync-spinner", "sync-server", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
