// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "SyncStreams",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "SyncStreams", targets: ["SyncStreams"])
    ],
    targets: [
        .target(name: "SyncStreams"),
        .testTarget(name: "SyncStreamsTests", dependencies: ["SyncStreams"]),
    ],
    swiftLanguageModes: [.v6]
)
