// swift-tools-version: 6.1
// Benchmarks for SyncStreams against OpenCombine and swift-async-algorithms (issue 4).
// A separate package so that the root package stays dependency-free. See docs/PERFORMANCE.md.
import PackageDescription

let package = Package(
    name: "SyncStreamsBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "SyncStreams", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
        .package(url: "https://github.com/apple/swift-async-algorithms", exact: "1.1.4"),
    ],
    targets: [
        // The scenarios, one function per (scenario, library); shared by both runners below.
        .target(
            name: "Scenarios",
            dependencies: [
                .product(name: "SyncStreams", package: "SyncStreams"),
                .product(name: "SyncEngine", package: "SyncStreams"),
                .product(name: "SyncServer", package: "SyncStreams"),
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "OpenCombineDispatch", package: "OpenCombine"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ]
        ),
        // `swift run -c release compare`: times the scenarios itself and prints one comparison table.
        .executableTarget(name: "compare", dependencies: ["Scenarios"]),
        // epoll's header for the side-by-side ping client (`network side-by-side`).
        .target(name: "CEpoll"),
        // `swift run -c release network`: P11 (bound sessions per server) and P12 (write → callback latency);
        // `network side-by-side`: sync-server beside sync-server-nio (side-by-side.sh).
        .executableTarget(
            name: "network",
            dependencies: [
                "CEpoll",
                .product(name: "SyncEngine", package: "SyncStreams"),
                .product(name: "SyncServer", package: "SyncStreams"),
            ]
        ),
        // `swift package benchmark`: the same scenarios under package-benchmark (allocations, peak memory).
        .executableTarget(
            name: "SyncStreamsBenchmarks",
            dependencies: [
                "Scenarios",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/SyncStreamsBenchmarks",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark")
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
