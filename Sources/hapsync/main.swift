import Foundation
import HapSyncCLI

// A write past the file size limit (EFBIG) or into a pipe nobody reads any more (EPIPE) is a write
// error HapSync reports, naming the file, instead of a signal that ends the process silently; on
// standard output or error, EPIPE ends the run quietly with status 141 (`HapSyncCLI.main`).
signal(SIGXFSZ, SIG_IGN)
signal(SIGPIPE, SIG_IGN)
exit(HapSyncCLI.main(Array(CommandLine.arguments.dropFirst())))
