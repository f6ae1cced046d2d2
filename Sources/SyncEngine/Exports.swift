// `import SyncEngine` is enough to use the streams the engine hands out.
@_exported import SyncStreams
