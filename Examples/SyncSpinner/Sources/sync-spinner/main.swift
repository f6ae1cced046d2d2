import Foundation
import SyncSpinnerKit

// `swift run sync-spinner --help` for the options. The interesting code is in SyncSpinnerKit:
// SpinnerCommand.swift (the sync, as an app would write it) and StatusLine.swift (the line).
exit(await SpinnerCommand.run(arguments: Array(CommandLine.arguments.dropFirst())))
