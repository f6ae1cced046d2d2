// swift-tools-version: 6.1
// Several `sync-server` front ends sharing one PostgreSQL database (issue 16): a `PartitionStore` on
// PostgreSQL with LISTEN/NOTIFY fan-out, the `sync-server-pg` executable and the `pg-bench` benchmark.
// A separate package so that the root package stays dependency-free. See docs/Scaling.md.
import PackageDescription

let package = Package(
    name: "PostgresSync",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "PostgresSync", targets: ["PostgresSync"]),
        .executable(name: "sync-server-pg", targets: ["sync-server-pg"]),
    ],
    dependencies: [
        .package(name: "SyncStreams", path: "../.."),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.5.3"),
    ],
    targets: [
        // The store: partition logs in PostgreSQL, appends announced with NOTIFY.
        .target(
            name: "PostgresSync",
            dependencies: [
                .product(name: "SyncServer", package: "SyncStreams"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `swift run sync-server-pg --port 0 --database postgres://…`: a front end.
        .executableTarget(
            name: "sync-server-pg",
            dependencies: [
                "PostgresSync",
                .product(name: "SyncServer", package: "SyncStreams"),
                .product(name: "SyncServerCommandLine", package: "SyncStreams"),
            ]
        ),
        // `swift run -c release pg-bench`: P8n and P12 through one and two front ends, beside sync-server.
        .executableTarget(
            name: "pg-bench",
            dependencies: [
                "PostgresSync",
                .product(name: "SyncServer", package: "SyncStreams"),
                .product(name: "SyncEngine", package: "SyncStreams"),
            ]
        ),
        .testTarget(
            name: "PostgresSyncTests",
            dependencies: [
                "PostgresSync", "sync-server-pg",
                .product(name: "SyncServer", package: "SyncStreams"),
                .product(name: "SyncEngine", package: "SyncStreams"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "SyncTestSupport", package: "SyncStreams"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
