@_exported import SyncNetwork
// `import SyncEngine` is enough to use the streams the engine hands out, and the shared types it takes
// (`SyncEndpoint`, `SyncTransport`, `SyncLogLevel`, …).
@_exported import SyncStreams
@_exported import SyncWire
