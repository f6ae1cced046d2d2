/// Progress reports are what `rate(window:on:)` measures:
/// `session.progress(for: .download, mode: .reportIndefinitely).rate(window: .seconds(5), on: .main)`.
extension SyncProgress: TransferProgress {}
