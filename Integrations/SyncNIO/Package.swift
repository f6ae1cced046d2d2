// swift-tools-version: 6.1
// `wss://` for SyncStreams (issue 25): a `SyncTransport` on swift-nio + NIOWebSocket + NIOSSL, and
// `sync-server-nio`, a front end on the same stack serving `SyncServer`'s core with optional TLS.
// A separate package so that the root package stays dependency-free. See README.md here.
import PackageDescription

let package = Package(
    name: "SyncNIO",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "SyncNIO", targets: ["SyncNIO"]),
        .executable(name: "sync-server-nio", targets: ["sync-server-nio"]),
    ],
    dependencies: [
        .package(name: "SyncStreams", path: "../.."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.29.0"),
    ],
    targets: [
        // The client transport (`NIOWebSocketTransport`) and the server front end (`NIOSyncServer`).
        .target(
            name: "SyncNIO",
            dependencies: [
                .product(name: "SyncEngine", package: "SyncStreams"),
                .product(name: "SyncServer", package: "SyncStreams"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ]
        ),
        // `swift run sync-server-nio --port 0 --data DIR [--tls-cert PEM --tls-key PEM]`.
        .executableTarget(
            name: "sync-server-nio",
            dependencies: [
                "SyncNIO",
                .product(name: "SyncServer", package: "SyncStreams"),
                .product(name: "SyncServerCommandLine", package: "SyncStreams"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "SyncNIOTests",
            dependencies: [
                "SyncNIO", "sync-server-nio",
                .product(name: "SyncServer", package: "SyncStreams"),
                .product(name: "SyncEngine", package: "SyncStreams"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "SyncTestSupport", package: "SyncStreams"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
